"""The door for players' moves: what a browser sent becomes an action the engine can judge, or is
refused with a reason a person can act on. Nothing here knows a game's rules; it only makes sure
every move the engine sees has the fields its type has, each of the right kind, and text that can
be stored (PostgreSQL's JSON refuses NUL, SQLite stores an unpaired surrogate that then cannot be
encoded) and shown on every page as it was typed (no invisible formatting characters).

The same checks run on SQLite and PostgreSQL because they run before the database sees the move.
Turns committed before this door existed are read through :func:`storable`, so no old turn can
break a page or an export.
"""

from __future__ import annotations

from typing import Any

from games.base import IllegalMove
from studyapp.text import REPLACEMENT, UNSTORABLE, character_problem

# More than any move of our games needs (their rules allow 300 characters): a cap on what reaches
# the engine and the log, whatever a client sends.
MAX_TEXT_CHARS = 1000

TEXT, TEXT_OR_PASS, OPTIONAL_TEXT, SEAT_OR_ABSTAIN = "text", "text-or-pass", "optional", "seat"

# Each move type a player may send and its fields; any other key is dropped.
MOVE_FIELDS: dict[str, dict[str, str]] = {
    "question": {"text": TEXT, "guess": OPTIONAL_TEXT},  # Twenty Questions, questioner
    "answer": {"answer": TEXT},  # Twenty Questions, a person as the oracle
    "clue": {"text": TEXT_OR_PASS},  # Undercover: a clue, or null to pass
    "vote": {"target": SEAT_OR_ABSTAIN},  # Undercover: a seat, or none to abstain
}
# Words a field is called on the page, for the reasons.
FIELD_NAMES = {"text": "text", "guess": "guess", "answer": "answer", "target": "vote"}
ABSTAIN = ("", "none", "null")


def text_problem(text: str) -> str | None:
    """Why ``text`` cannot be stored and shown, or None.

    >>> text_problem("Is it alive?"), text_problem("a\\x00b")
    (None, 'it contains an invisible control character (U+0000); please remove it')
    """
    if len(text) > MAX_TEXT_CHARS:
        return f"it is {len(text)} characters long; the limit is {MAX_TEXT_CHARS}"
    return character_problem(text)


def kind_of(value: Any) -> str:
    """How a wrong-typed value is named in a reason."""
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    if value is None:
        return "empty"
    return type(value).__name__


def clean_text(name: str, value: Any, *, may_pass: bool = False) -> str | None:
    if value is None and may_pass:
        return None
    if not isinstance(value, str):
        raise IllegalMove(f"The {name} must be text, not {kind_of(value)}.")
    problem = text_problem(value)
    if problem:
        raise IllegalMove(f"The {name} cannot be accepted: {problem}.")
    return value.strip()


def clean_seat(value: Any) -> int | None:
    """A vote target: a seat number (an int, or digits from a form), or none to abstain."""
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and len(value) <= 10:
        raw = value.strip()
        if raw.lower() in ABSTAIN:
            return None
        if raw.isascii() and raw.isdigit():
            return int(raw)
    raise IllegalMove("Choose a player to vote for (a seat number), or abstain.")


def clean_action(data: Any) -> dict[str, Any]:
    """The action the engine will judge: a known move type with its own fields only, each of the
    right kind; anything else a client sent is dropped. Raises IllegalMove with the reason."""
    if not isinstance(data, dict):
        raise IllegalMove("A move must be an object with a type.")
    kind = data.get("type")
    if not isinstance(kind, str) or kind not in MOVE_FIELDS:
        raise IllegalMove("Players cannot send that; make a move of the game.")
    action: dict[str, Any] = {"type": kind}
    for field, rule in MOVE_FIELDS[kind].items():
        if field not in data:
            continue
        value = data[field]
        name = FIELD_NAMES[field]
        if rule == SEAT_OR_ABSTAIN:
            action[field] = clean_seat(value)
        elif rule == OPTIONAL_TEXT:
            if value is None or value == "":
                continue  # an empty optional field of a form is a field not sent
            action[field] = clean_text(name, value)
        else:
            action[field] = clean_text(name, value, may_pass=rule == TEXT_OR_PASS)
    return action


def storable(value: Any) -> Any:
    """``value`` (an event, from the log or from an agent) with every string made storable and
    showable: an unstorable character becomes U+FFFD. Only turns written before the door existed,
    or text a model produced, ever need it.

    >>> storable({"type": "clue", "text": "a\\ud800b", "seat": 2})
    {'type': 'clue', 'text': 'a�b', 'seat': 2}
    """
    if isinstance(value, str):
        return UNSTORABLE.sub(REPLACEMENT, value) if UNSTORABLE.search(value) else value
    if isinstance(value, dict):
        return {storable(k): storable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [storable(v) for v in value]
    return value
