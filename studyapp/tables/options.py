"""A table's options, typed: what ``Table.options`` (a JSON object) may hold, read one way.

Every key the code reads is a field of :class:`TableOptions`. A key a site-wide setting backs
(``wait_seconds``, ``turn_deadline_seconds``, ...: :data:`SETTING_DEFAULTS`) reads as that
setting when the table does not give it, at read time, so a table follows the site's setting
until it sets its own. :meth:`TableOptions.from_json` reads any stored row without failing: a key
it does not know, or a value of a kind it cannot read, is kept as it was (``other``) and
:meth:`TableOptions.to_json` writes it back, so nothing stored is lost. :meth:`TableOptions.checked`
is the strict reading for a new table (:func:`studyapp.tables.services.create_table`): a value
that would not work is refused there, with the reason.

The rules on time that read these options (the lobby's wait, turn deadlines, an agent's pause or
think time, the limits) live in :mod:`studyapp.tables.timing`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings

from studyapp.tables import think

DROPOUT_POLICIES = ("replace", "skip", "end")
LOBBY_TIMEOUTS = ("fill", "exit")

# The keys a site-wide setting backs when a table does not give them ("replacement_spec": an
# empty value too).
SETTING_DEFAULTS = {
    "wait_seconds": "LOBBY_WAIT_SECONDS",
    "turn_deadline_seconds": "TURN_DEADLINE_SECONDS",
    "agent_delay_seconds": "AGENT_DELAY_SECONDS",
    "max_oracle_failures": "MAX_ORACLE_FAILURES",
    "paused_limit_seconds": "PAUSED_TABLE_LIMIT_SECONDS",
    "replacement_spec": "DEFAULT_AGENT_SPEC",
}
# Limits where 0, empty or a negative number means "none" (and so does a value nobody can read,
# as it always has: a table with a bad limit is not held to it).
LIMITS = ("turn_deadline_seconds", "paused_limit_seconds", "idle_limit_seconds")


class SiteDefault:
    """A field that reads as a setting while the table has not given it (stored as None)."""

    def __init__(self, setting: str) -> None:
        self.setting = setting
        self.name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        if obj is None:  # the dataclass asks for the field's default: not given
            return None
        value = obj.__dict__.get(self.name)
        if value is None and self.name in LIMITS and self.name in obj.given:
            return None  # a limit the table set to null: none (as 0 is)
        return getattr(settings, self.setting) if value in (None, "") else value

    def __set__(self, obj: Any, value: Any) -> None:
        obj.__dict__[self.name] = value  # only __init__ sets it: the dataclass is frozen


@dataclass(frozen=True)
class TableOptions:
    # -- the lobby
    wait_seconds: float = SiteDefault("LOBBY_WAIT_SECONDS")  # type: ignore[assignment]
    lobby_timeout: str = "fill"  # fill (agents take the empty places) | exit (people released)
    lobby_kind: str = ""  # which joiners share a lobby
    start_after_seconds: float | None = None  # a blinded lobby's hold (timing.start_hold)
    group_lobby: bool = False  # a study's group forms here (studyapp.participants.groups)
    group_formed: Any = None  # the closed group lobby's board: "full", or the group's number
    exit_code: str = ""  # a study's fixed lobby-timeout code
    # -- play
    turn_deadline_seconds: float | None = SiteDefault("TURN_DEADLINE_SECONDS")  # type: ignore[assignment]
    deadline_between_people: bool = False  # the deadline only where people wait on each other
    dropout: str = "replace"  # replace | skip | end
    replacement_spec: str = SiteDefault("DEFAULT_AGENT_SPEC")  # type: ignore[assignment]
    agent_delay_seconds: float = SiteDefault("AGENT_DELAY_SECONDS")  # type: ignore[assignment]
    max_oracle_failures: int = SiteDefault("MAX_ORACLE_FAILURES")  # type: ignore[assignment]
    paused_limit_seconds: float | None = SiteDefault("PAUSED_TABLE_LIMIT_SECONDS")  # type: ignore[assignment]
    idle_limit_seconds: float | None = None
    missed_turns_limit: int | None = None  # turn deadlines missed in a row (timing.py)
    language: str = "en"
    # -- a table people are sent to and from (a study's: studyapp.participants.study_tables,
    # which keeps the study's own part, its condition, round and group, in its own app)
    person_seats: list[int] = field(default_factory=list)
    return_url: str = ""
    agents_disclosed: bool | None = None  # None: the table says nothing (not a study's)
    agent_think_seconds: Any = None  # a blinded table's bounds (studyapp.tables.think)
    think_seed: int | None = None
    model_clue_form: bool = False  # model seats' clues in people's form (agent_turns.in_form)
    # -- a game an experiment job stored (studyapp.pipelines.runners.experiment)
    job: int | None = None
    record: str | None = None
    experiment: Any = None
    usage: Any = None
    model_options: Any = None
    case: Any = None
    sample: int | None = None
    setting: str | None = None
    oracle_failed: Any = None
    # -- what the stored object had that is no field's value here, kept as it was
    other: Mapping[str, Any] = field(default_factory=dict)
    given: frozenset[str] = frozenset()  # the fields the stored object gave

    @classmethod
    def from_json(cls, options: Mapping[str, Any] | None) -> TableOptions:
        """Read a stored ``Table.options``, whatever it holds: never fails."""
        values, other = _read(options or {})
        return cls(**values, other=other, given=frozenset(values))

    @classmethod
    def checked(cls, options: Mapping[str, Any]) -> TableOptions:
        """The options of a new table, or ValueError saying what is wrong with them."""
        values, other = _read(options)
        wrong = sorted(set(other) & set(FIELDS))
        if wrong:
            name = wrong[0]
            raise ValueError(f"table option {name}: {options[name]!r} is not a {kind(name)}")
        opts = cls(**values, other=other, given=frozenset(values))
        if opts.dropout not in DROPOUT_POLICIES:
            raise ValueError("dropout must be replace, skip or end")
        if opts.lobby_timeout not in LOBBY_TIMEOUTS:
            raise ValueError("lobby_timeout must be fill or exit")
        if opts.agent_think_seconds is not None:
            problem = think.bounds_problem(opts.agent_think_seconds)
            if problem:
                raise ValueError(f"agent_think_seconds: {problem}")
        return opts

    def to_json(self) -> dict[str, Any]:
        """The object to store: every field given or set, and everything kept in ``other``."""
        out = {}
        for name, default in DEFAULTS.items():
            value = self.__dict__[name]
            if name in self.given or value != default:
                out[name] = value
        return {**out, **self.other}

    # -- readings

    def stored(self, name: str) -> Any:
        """What the table itself gives for a field a setting backs (None or '' where it falls
        back to the setting), e.g. whether it chose its own ``replacement_spec``."""
        return self.__dict__.get(name)

    @property
    def blinded(self) -> bool:
        """A study table that does not disclose its agents (``agents_disclosed`` False)."""
        return self.agents_disclosed is False

    @property
    def disclosed(self) -> bool:
        return self.agents_disclosed is True

    def hands_over(self, lobby: bool) -> bool:
        """Whether the replacement agent may take a person's place: a dropout replaced, or (a
        lobby) an empty place filled at the wait limit."""
        return self.dropout == "replace" or (lobby and self.lobby_timeout == "fill")


FIELDS = {f.name: f for f in dataclasses.fields(TableOptions) if f.name not in ("other", "given")}
DEFAULTS: dict[str, Any] = {
    name: (f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default)
    for name, f in FIELDS.items()
}
_SECONDS = {"wait_seconds", "start_after_seconds", "agent_delay_seconds", *LIMITS}
_INTS = {
    "max_oracle_failures",
    "missed_turns_limit",
    "think_seed",
    "job",
    "sample",
}
_STRS = {
    "lobby_timeout",
    "lobby_kind",
    "exit_code",
    "dropout",
    "replacement_spec",
    "language",
    "return_url",
    "record",
    "experiment",
    "setting",
}
_BOOLS = {"group_lobby", "deadline_between_people"}
_NULLABLE_BOOLS = {"agents_disclosed"}
_INT_LISTS = {"person_seats"}


def kind(name: str) -> str:
    """What field ``name`` holds, in words (for the reason a value is refused)."""
    for names, words in (
        (_SECONDS, "number"),
        (_INTS, "whole number"),
        (_STRS, "string"),
        (_BOOLS | _NULLABLE_BOOLS, "true or false"),
        (_INT_LISTS, "list of whole numbers"),
    ):
        if name in names:
            return words
    return "value"


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _fits(name: str, value: Any) -> bool:
    """Whether ``value`` is a value field ``name`` takes as it is (None: not given)."""
    if value is None:
        return name not in _BOOLS and name != "person_seats"
    if name in _SECONDS:
        return _number(value)
    if name in _INTS:
        return isinstance(value, int) and not isinstance(value, bool)
    if name in _STRS:
        return isinstance(value, str)
    if name in _BOOLS or name in _NULLABLE_BOOLS:
        return isinstance(value, bool)
    if name in _INT_LISTS:
        return isinstance(value, list) and all(
            isinstance(v, int) and not isinstance(v, bool) for v in value
        )
    return True


def _read(options: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The field values ``options`` gives, and what it holds that is no field's value."""
    values: dict[str, Any] = {}
    other: dict[str, Any] = {}
    for name, value in options.items():
        if name in FIELDS and _fits(name, value):
            values[name] = value
            continue
        other[name] = value
        if name in FIELDS and isinstance(value, str) and (name in _SECONDS or name in _INTS):
            try:  # a number written as text (a hand-edited row) still counts as that number
                number = float(value)
            except ValueError:
                pass
            else:
                values[name] = int(number) if name in _INTS and number.is_integer() else number
                continue
        if name in LIMITS:  # a limit nobody can read is none
            values[name] = 0
    return values, other
