"""A study's table design: which seats are people and which are agents, and with what models.

A study stores its design as JSON (``Study.design``) and each condition may override parts of it
(``Condition.overrides``: ``design``, ``oracle_spec``, ``shown_policy``). Everything that reads a
design (the round tables, the admin, the study file, the model check) goes through
:func:`effective`, which merges the overrides and fills the defaults, and :func:`normalise`, which
refuses a design that could not be played with a message that says what is wrong.

Twenty Questions has two seats, questioner (0) and oracle (1), and exactly one of them is the
person. Who is Undercover has 4 to 8 seats, any number of them people (matched from a lobby of the
same study, condition and round); a person seat still empty at the lobby's wait limit is played by
the study's replacement agent, and the table records which seats were meant for people.

This module is below the models (they check a study's design with it when it is saved) and
imports none of them: it reads a study through its fields (:class:`Study`, the few a design
needs), so it serves a saved study, an unsaved one and the admin's form alike.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any, Protocol

from django.conf import settings

from games import languages
from games.agents import make_agent
from games.llm.providers import closing, local_path, parse_spec
from games.undercover.engine import MAX_PLAYERS, MIN_PLAYERS
from studyapp.participants.numbers import LARGEST, NotAWholeNumber, whole_number
from studyapp.providers import provider_config, provider_for


class Study(Protocol):
    """What the design reads of a study (``participants.models.Study`` has all of it)."""

    pk: Any
    game: str
    design: Any
    oracle_spec: str
    shown_policy: str
    language: str
    dropout: str
    agents_disclosed: bool
    turn_deadline_seconds: int
    conditions: Any  # its conditions' manager: ``.all()``, ``.filter(name=...)``, ``.exists()``


class Participant(Protocol):
    """What the design reads of a participant: their study, condition and group."""

    study: Any
    condition: str
    group_id: int | None


PERSON, AGENT = "person", "agent"
DEFAULT_WAIT_SECONDS = 60
DEFAULT_REPLACEMENT = "offline:kb"
DEFAULT_QUESTIONER = "offline:infogain"
LOBBY_TIMEOUTS = ("fill", "exit")
DESIGN_KEYS = {
    "seats",
    "players",
    "wait_seconds",
    "replacement_spec",
    "lobby_timeout",
    "person",
    "seat_order",
    "model_clue_form",
}
# seat_order: "drawn" (Who is Undercover's default) gives each table its own seed-drawn order of
# the design's slots; "fixed" seats slot k at seat k (Twenty Questions' seats are roles: fixed).
DRAWN, FIXED = "drawn", "fixed"
SEAT_ORDERS = (DRAWN, FIXED)
OVERRIDE_KEYS = {"design", "oracle_spec", "shown_policy"}
# Roles as the engines name their seats: what an agent at that seat must be able to play.
ROLES = {"twenty-questions": ("questioner", "oracle"), "undercover": ("player",)}


class DesignError(ValueError):
    """A design that cannot be played; the message is shown to staff as it is."""


def effective(study: Study, condition: str = "") -> dict[str, Any]:
    """The design, oracle spec and shown policy that a participant in ``condition`` meets."""
    design = dict(study.design or {})
    oracle_spec = study.oracle_spec
    shown_policy = study.shown_policy
    if condition:
        found = study.conditions.filter(name=condition).first()
        overrides = found.overrides if found is not None else {}
        design.update(overrides.get("design") or {})
        oracle_spec = overrides.get("oracle_spec") or oracle_spec
        if "shown_policy" in overrides:
            shown_policy = overrides["shown_policy"]
    return {
        "design": normalise(study.game, design, oracle_spec),
        "oracle_spec": oracle_spec,
        "shown_policy": shown_policy,
    }


def normalise(game: str, design: dict[str, Any] | None, oracle_spec: str = "") -> dict[str, Any]:
    """The design with its defaults filled in, or :class:`DesignError`."""
    design = dict(design or {})
    unknown = set(design) - DESIGN_KEYS
    if unknown:
        raise DesignError(f"unknown design keys: {', '.join(sorted(unknown))}")
    if game == "twenty-questions":
        return _twenty_questions(design, oracle_spec)
    if game == "undercover":
        return _undercover(design)
    raise DesignError(f"unknown game {game!r}")


def _twenty_questions(design: dict[str, Any], oracle_spec: str) -> dict[str, Any]:
    person = design.get("person", "questioner")
    if person not in ("questioner", "oracle"):
        raise DesignError("person must be 'questioner' (a model answers) or 'oracle'")
    raw = design.get("seats")
    if raw is None:
        other = {"kind": AGENT, "spec": oracle_spec or "offline:kb"}
        if person == "oracle":
            other = {"kind": AGENT, "spec": DEFAULT_QUESTIONER}
        raw = [{"kind": PERSON}, other] if person == "questioner" else [other, {"kind": PERSON}]
    seats = _seats(raw)
    if design.get("seat_order", FIXED) != FIXED:
        raise DesignError(
            "Twenty Questions' seats are roles (questioner, oracle): seat_order must be 'fixed'"
        )
    if len(seats) != 2:
        raise DesignError("Twenty Questions has two seats: the questioner and the oracle")
    people = [i for i, seat in enumerate(seats) if seat["kind"] == PERSON]
    if len(people) != 1:
        raise DesignError("Twenty Questions needs exactly one person seat (questioner or oracle)")
    return {
        "seats": seats,
        "person": ROLES["twenty-questions"][people[0]],
        "players": 2,
        "seat_order": FIXED,
    }


def _undercover(design: dict[str, Any]) -> dict[str, Any]:
    raw = design.get("seats")
    if raw is None:
        players = _whole(design.get("players", 5), "players")
        if not MIN_PLAYERS <= players <= MAX_PLAYERS:
            raise DesignError(f"Who is Undercover has {MIN_PLAYERS} to {MAX_PLAYERS} seats")
        raw = [{"kind": PERSON}] + [{"kind": AGENT, "spec": "offline:kb"}] * (players - 1)
    seats = _seats(raw)
    if not MIN_PLAYERS <= len(seats) <= MAX_PLAYERS:
        raise DesignError(f"Who is Undercover has {MIN_PLAYERS} to {MAX_PLAYERS} seats")
    if "players" in design and _whole(design["players"], "players") != len(seats):
        raise DesignError(f"players is {design['players']} but the design lists {len(seats)} seats")
    if not any(seat["kind"] == PERSON for seat in seats):
        raise DesignError("a study table needs at least one person seat")
    wait = _whole(design.get("wait_seconds", DEFAULT_WAIT_SECONDS), "wait_seconds", 0, 3600)
    timeout = design.get("lobby_timeout", "fill")
    if timeout not in LOBBY_TIMEOUTS:
        raise DesignError("lobby_timeout must be 'fill' (agents take empty seats) or 'exit'")
    replacement = design.get("replacement_spec") or DEFAULT_REPLACEMENT
    if not isinstance(replacement, str):
        raise DesignError("replacement_spec must be a model spec such as 'offline:kb'")
    clue_form = design.get("model_clue_form", False)
    if not isinstance(clue_form, bool):
        raise DesignError(
            "model_clue_form must be true (model seats' clues in people's form) or false"
        )
    order = design.get("seat_order", DRAWN)
    if order not in SEAT_ORDERS:
        raise DesignError(
            "seat_order must be 'drawn' (each table draws which design slot sits where) or "
            "'fixed' (slot k at seat k)"
        )
    return {
        "seat_order": order,
        "seats": seats,
        "players": len(seats),
        "wait_seconds": wait,
        "lobby_timeout": timeout,
        "replacement_spec": replacement,
        **({"model_clue_form": True} if clue_form else {}),  # said only when asked for
    }


def _seats(raw: Any) -> list[dict[str, Any]]:
    if not isinstance(raw, list):
        raise DesignError("seats must be a list")
    seats = []
    for number, seat in enumerate(raw):
        if not isinstance(seat, dict) or seat.get("kind") not in (PERSON, AGENT):
            raise DesignError(f"seat {number}: kind must be 'person' or 'agent'")
        if seat["kind"] == PERSON:
            extra = set(seat) - {"kind"}
            if extra:
                raise DesignError(f"seat {number}: a person seat takes no {', '.join(extra)}")
            seats.append({"kind": PERSON})
            continue
        extra = set(seat) - {"kind", "spec", "setting", "policy"}
        if extra:
            raise DesignError(f"seat {number}: unknown keys {', '.join(sorted(extra))}")
        spec = seat.get("spec")
        if not isinstance(spec, str) or not spec:
            raise DesignError(f"seat {number}: an agent seat needs a model spec, e.g. offline:kb")
        setting = seat.get("setting") or "none"
        policy = seat.get("policy")
        if policy is not None:
            policy = _whole(policy, f"seat {number}: policy (a policy record id or null)")
        seats.append({"kind": AGENT, "spec": spec, "setting": setting, "policy": policy})
    return seats


def _whole(value: Any, name: str, minimum: int = 0, maximum: int = LARGEST) -> int:
    try:
        return whole_number(value, name, minimum=minimum, maximum=maximum)
    except NotAWholeNumber as err:
        raise DesignError(str(err)) from None


def deadline_problems(study: Study) -> list[str]:
    """A blinded study with no turn deadline: a countdown is what every seat shows there, so
    with none a person could hold a table forever, and agents' think time would be all that
    paced it."""
    if not study.agents_disclosed and not study.turn_deadline_seconds:
        return [
            "a blinded study (agents_disclosed = false) needs a turn deadline above 0 seconds: "
            "every table's turns are timed there, whoever sits at the other seats"
        ]
    return []


def person_seats(design: dict[str, Any]) -> list[int]:
    return [i for i, seat in enumerate(design["seats"]) if seat["kind"] == PERSON]


def arm_designs(study: Study) -> list[tuple[str, dict[str, Any]]]:
    """``(condition, design)`` of every arm people can be drawn into: each condition's, or the
    study's own when it has none. Arms whose design cannot be played are left out."""
    names = [c.name for c in study.conditions.all()] or [""]
    arms = []
    for name in names:
        try:
            arms.append((name, effective(study, name)["design"]))
        except DesignError:
            continue
    return arms


def group_lobby_design(study: Study) -> dict[str, Any] | None:
    """The design of the lobby where a group design's people meet before their group is drawn a
    condition (the arm with the most person seats, so the lobby waits for that many people), or
    None when the study is not a group design: one person per table in every arm, or Twenty
    Questions, randomises each person on arrival."""
    if study.game != "undercover":
        return None
    arms = arm_designs(study)
    if not arms:
        return None
    _, widest = max(arms, key=lambda arm: len(person_seats(arm[1])))
    return widest if len(person_seats(widest)) > 1 else None


def is_group_design(study: Study) -> bool:
    """Several people share a table in some arm: the group, not the person, is randomised."""
    return group_lobby_design(study) is not None


def uses_group_lobby(participant: Participant) -> bool:
    """Whether this participant's next table is a group lobby: a group design with conditions,
    and no group (so no condition) yet (:mod:`studyapp.participants.groups`)."""
    study = participant.study
    if participant.group_id is not None or participant.condition:
        return False
    return study.conditions.exists() and is_group_design(study)


# --- the models a study uses -------------------------------------------------------------------


def design_specs(game: str, design: dict[str, Any]) -> list[tuple[str, str]]:
    """``(spec, role)`` of every agent a normalised design can seat."""
    roles = ROLES[game]
    found = []
    for index, seat in enumerate(design["seats"]):
        if seat["kind"] == AGENT:
            found.append((seat["spec"], roles[index] if len(roles) > 1 else roles[0]))
    if "replacement_spec" in design:
        found.append((design["replacement_spec"], "player"))
    return found


def own_specs(study: Study) -> list[tuple[str, str, str]]:
    """The specs of the study's own design (no conditions): ``(where, spec, role)``."""
    try:
        normalised = normalise(study.game, study.design, study.oracle_spec)
    except DesignError:
        return []
    return [("study", spec, role) for spec, role in design_specs(study.game, normalised)]


def model_specs(study: Study) -> list[tuple[str, str, str]]:
    """Every model spec the study can put at a table: ``(where, spec, role)``, without repeats."""
    found: dict[tuple[str, str], str] = {}
    arms = [("", None)] + [(c.name, c) for c in study.conditions.all()]
    for name, _condition in arms:
        try:
            merged = effective(study, name)
        except DesignError:
            continue  # reported by the design check itself
        where = f"condition {name}" if name else "study"
        for spec, role in design_specs(study.game, merged["design"]):
            found.setdefault((spec, role), where)
    return [(where, spec, role) for (spec, role), where in found.items()]


def spec_problem(spec: str, game: str, role: str) -> str:
    """Why ``spec`` cannot play ``role`` here, or '' when it can (no call is made)."""
    try:
        if local_path(spec) is not None:
            return ""
        kind, _ = parse_spec(spec)
        if kind == "offline":
            return _offline_problem(spec, game, role)
        config = provider_config(spec)
    except ValueError as err:
        return str(err)
    if kind in ("openai", "anthropic") and not config.api_key:
        key = "OPENAI_API_KEY" if kind == "openai" else "ANTHROPIC_API_KEY"
        return f"{spec}: {key} is not set, so the provider cannot be called"
    return ""


def _offline_problem(spec: str, game: str, role: str) -> str:
    """An offline name the game does not have for this role ('' when it has one). Only the
    games' naming errors count here; building the agent is the table's business."""
    try:
        make_agent(spec, game=game, role=role)
    except ValueError as err:
        if str(err).startswith("no offline"):
            return str(err)
    return ""


def study_problems(study: Study) -> list[str]:
    """Everything that stops the study from being played: design errors and unusable specs."""
    problems = []
    for name in [""] + [c.name for c in study.conditions.all()]:
        try:
            effective(study, name)
        except DesignError as err:
            where = f"condition {name}: " if name else ""
            problems.append(f"{where}{err}")
    for where, spec, role in model_specs(study):
        problem = spec_problem(spec, study.game, role)
        if problem:
            problems.append(f"{where}: {problem}")
    return problems + seating_problems(study)


def language_problems(study: Study) -> list[str]:
    """Agents that cannot play in the study's language: an offline agent knows English only
    (games.languages), at a seat, as the lobby's or the dropout's replacement."""
    if study.language == "en":
        return []
    found = model_specs(study) if study.pk else own_specs(study)
    problems = [
        f"{where}: {why}"
        for where, spec, _role in found
        if (why := languages.offline_problem(spec, study.language))
    ]
    if study.dropout == "replace" and study.game == "twenty-questions":
        why = languages.offline_problem(settings.DEFAULT_AGENT_SPEC, study.language)
        if why:
            problems.append(
                f"dropout = replace would give a person's seat to the site's agent: {why}; or "
                "choose dropout = skip or end"
            )
    return problems


def seating_problems(study: Study) -> list[str]:
    """Arms that could never seat their people: an Undercover study with no design at all (five
    seats by default would be a guess, not a design), or a condition whose quota of people is
    smaller than one table's person seats, so its tables could never be filled by people."""
    problems = []
    if study.game == "undercover" and not (study.design or {}):
        problems.append(
            "Who is Undercover needs a design: list the seats (4 to 8, at least one a person)"
        )
    for condition in study.conditions.all() if study.pk else []:
        try:
            arm = effective(study, condition.name)["design"]
        except DesignError:
            continue
        people = len(person_seats(arm))
        if 0 < condition.quota < people:
            problems.append(
                f"condition {condition.name}: its quota of {condition.quota} people cannot fill "
                f"a table of {people} person seats"
            )
    return problems


def ping(spec: str, game: str, role: str) -> dict[str, Any]:
    """One tiny call to the model: ``{"spec", "ok", "latency_ms", "error"}``."""
    problem = spec_problem(spec, game, role)
    if problem:
        return {"spec": spec, "ok": False, "latency_ms": None, "error": problem}
    if spec.startswith("offline:"):
        return {"spec": spec, "ok": True, "latency_ms": 0.0, "error": ""}
    started = time.perf_counter()
    try:
        provider = provider_for(spec, cache=False)
        call = provider.complete(
            [{"role": "user", "content": "Reply with the word OK."}],
            temperature=0.0,
            max_tokens=5,
        )
        asyncio.run(closing(call))  # the SDK clients of this short loop are closed with it
    except Exception as err:  # any failure is the answer to show, not a crash of the admin page
        return {
            "spec": spec,
            "ok": False,
            "latency_ms": None,
            "error": f"{type(err).__name__}: {err}",
        }
    latency = round((time.perf_counter() - started) * 1000, 1)
    return {"spec": spec, "ok": True, "latency_ms": latency, "error": ""}
