"""A table's rules on time, in one place: how long a lobby waits and holds, how long a turn may
take (a person's deadline, an agent's pause or think time), when the live monitor calls a table
stuck, and how long a paused or idle table is left alone.

Functions of a table's options (:class:`studyapp.tables.options.TableOptions`) and its
seats, read nowhere else; they take values, never a table's state, so the table's models and
log store may read them. Two modules above the log store apply them to a table as its log has
it: :mod:`studyapp.tables.dues` the due time of a person's turn (with the site's outages), and
:mod:`studyapp.tables.pace` when an agent moves. No database reads.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.utils import timezone

from studyapp.tables import outages, think
from studyapp.tables.options import TableOptions

HUMAN = "human"  # Seat.Kind.HUMAN
AGENT = "agent"  # Seat.Kind.AGENT


def _limit(value: Any) -> float | None:
    """A limit in seconds, or None: 0, empty or a negative number all mean "none"."""
    try:
        seconds = float(value or 0)
    except (TypeError, ValueError):
        return None
    return seconds if seconds > 0 else None


# -- the lobby


def lobby_deadline(table: Any) -> datetime:
    """When a lobby's wait ends (``wait_seconds`` after it opened): its empty places are filled,
    or its people released (:func:`studyapp.tables.driver.check_lobby`)."""
    return table.created_at + timedelta(seconds=float(table.opts.wait_seconds))


def start_hold(table: Any) -> datetime | None:
    """When a full lobby may start at the earliest (``start_after_seconds`` after it opened),
    or None when it may start as soon as it is full. A blinded study's lobbies hold a drawn
    while, so that a table whose other seats are agents does not start at once where one
    waiting for people would not (studyapp.participants.study_tables); a group's lobby never
    holds."""
    hold = table.opts.start_after_seconds
    if not hold or table.opts.group_lobby:
        return None
    return table.created_at + timedelta(seconds=float(hold))


def lobby_check_seconds(opts: TableOptions) -> float:
    """How long after it opened a lobby is first checked: at its wait limit, or when its hold
    ends if that is sooner (:func:`start_hold`)."""
    wait = float(opts.wait_seconds)
    hold = opts.start_after_seconds
    if hold and not opts.group_lobby:
        wait = min(wait, float(hold))
    return wait


def lobby_check_due(table: Any) -> datetime:
    """When a lobby is next judged: its wait limit, or the end of its hold if sooner."""
    return table.created_at + timedelta(seconds=lobby_check_seconds(table.opts))


# -- a person's turn


def table_turn_deadline(opts: TableOptions) -> float | None:
    """The table's turn deadline in seconds (``turn_deadline_seconds``), or None when there is
    none: a study that lets people leave and come back."""
    return _limit(opts.turn_deadline_seconds)


def turn_deadline(opts: TableOptions, seat_kinds: Iterable[str]) -> float | None:
    """The deadline a person's turn has at a table of these seats: the table's, except at a table
    that keeps it for people who wait on each other (``deadline_between_people``) where at most
    one seat is a person's: alone with agents (a lobby filled by agents), a person takes the
    time they need. None: no deadline."""
    deadline = table_turn_deadline(opts)
    if deadline is None or not opts.deadline_between_people:
        return deadline
    people = sum(kind == HUMAN for kind in seat_kinds)
    return deadline if people > 1 else None


def turn_due(since: datetime, deadline: float, paused: float = 0.0) -> datetime:
    """When a turn that began at ``since`` is past its deadline (``paused``: seconds of the
    site's own outages meanwhile, which do not count against the person)."""
    return since + timedelta(seconds=deadline + paused)


def seconds_left(due: datetime, now: datetime | None = None) -> int:
    """Whole seconds until ``due`` (0 once it passed): what a countdown shows."""
    return max(0, round((due - (now or timezone.now())).total_seconds()))


# -- an agent's turn


def agent_pause(opts: TableOptions) -> float:
    """The pause an agent next to people takes before it moves, so they can follow
    (``agent_delay_seconds``)."""
    return float(opts.agent_delay_seconds)


def blinded_think(opts: TableOptions, has_humans: bool) -> Any:
    """The think-time bounds of a blinded table with people (a pair, or pairs by kind of move:
    :mod:`studyapp.tables.think`), or None where agents keep the site's short pause."""
    bounds = opts.agent_think_seconds
    if has_humans and opts.agents_disclosed is False and bounds:
        return bounds
    return None


def live_turn_seconds() -> float:
    """The most an agent's turn may take at a table with people (LIVE_AGENT_TURN_SECONDS), its
    model calls and a corrective follow-up included; the seat's failed move is made after it."""
    return float(settings.LIVE_AGENT_TURN_SECONDS)


def agent_budget(opts: TableOptions, has_humans: bool, kind: str = "") -> tuple[float, float]:
    """[shortest, longest] seconds an agent waits before it moves, its model call not counted: a
    blinded table's think-time bounds for the kind of move (``kind``: clue, vote, question,
    answer; '' a clue's), else the pause (which the scheduler skips at a table of agents alone:
    :func:`studyapp.tables.pace.agent_delay`)."""
    bounds = blinded_think(opts, has_humans)
    if bounds:
        low, high = sorted(think.bounds_for(bounds, kind))
        return low, high
    pause = agent_pause(opts)
    return pause, pause


# -- the live monitor


def stuck_after(
    opts: TableOptions, seat_kinds: list[str], mover_kind: str, move_kind: str = ""
) -> float | None:
    """How long a turn may take before the live monitor calls the table stuck: an agent's
    longest wait (:func:`agent_budget`, a blinded table's think time included) plus the time a
    model call may take (STUCK_AGENT_TURN_SECONDS), or a person's turn deadline (the one the
    driver applies) plus the same grace; None when a person has no deadline (they may think as
    long as they like)."""
    grace = float(settings.STUCK_AGENT_TURN_SECONDS)
    if mover_kind != HUMAN:
        return agent_budget(opts, HUMAN in seat_kinds, move_kind)[1] + grace
    deadline = turn_deadline(opts, seat_kinds)
    return None if deadline is None else deadline + grace


# -- paused and idle tables


def paused_limit(opts: TableOptions) -> float | None:
    """How long a paused table waits for staff to resume it before the sweep ends it
    (``paused_limit_seconds``); None (0, empty, negative): it waits for staff."""
    return _limit(opts.paused_limit_seconds)


def idle_limit(opts: TableOptions) -> float | None:
    """A study's limit on how long a person may leave their table waiting before they count as
    having left the study (``idle_limit_seconds``); None: no limit."""
    return _limit(opts.idle_limit_seconds)


def missed_turns_limit(opts: TableOptions) -> int:
    """How many turn deadlines in a row a person may miss before they count as having left
    (``missed_turns_limit``): each missed turn is played for them and they keep their seat
    (:func:`studyapp.tables.driver.miss_turn`); 0: never for missed turns alone (the idle
    limit still applies). A table that does not say (one outside any study) has 1: its first
    missed deadline applies its dropout policy, as tables always did."""
    value = opts.missed_turns_limit
    return 1 if value is None else max(0, int(value))


def missed_in_a_row(events: list[dict[str, Any]], index: int) -> int:
    """How many of seat ``index``'s turns in a row, to the end of the log, the person missed
    (their turns played for them at the deadline: ``"missed": true``). A move of their own or the
    seat changing hands ends the count."""
    count = 0
    for event in reversed(events):
        if event.get("seat") != index:
            continue
        if event.get("missed") and event.get("type") not in ("abort", "takeover", "resume"):
            count += 1
            continue
        break
    return count


def idle_seconds(
    since: datetime | None, now: datetime, *, table: Any = None, seat: int | None = None
) -> float:
    """How long a person has been idle since their last sign of life ``since``, the site's
    outages meanwhile (and the seat's own, when given) not counted: what every idle limit
    compares, at a table (``table``, a Table) and between rounds alike."""
    if since is None:
        return 0.0
    waited = (now - since).total_seconds()
    key = None if table is None else outages.table_key(table.pk, table.created_at)
    return waited - outages.paused_seconds(since, now, table=key, seat=seat)
