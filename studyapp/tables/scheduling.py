"""Scheduling a table's next step: what the table waits for after a commit, sent as a step.

Three steps move a table along without a human: an agent's turn, a turn deadline and a lobby's
wait limit, each registered by :mod:`studyapp.tables.steps` and sent through
:func:`studyapp.steps.send` (an executor's event loop: a process of its own in production, the
server's loop under ``make run``). Each step names the table and the ``seq`` it was scheduled
for, rebuilds the table from its log when it runs and does nothing if the table has moved on, so
a step delivered twice (claimed from a dead executor, a reconnect that schedules again) is
harmless; the unique ``(table, seq)`` key settles any remaining race. A step is claimed by a
lease in the cache (:class:`Lease`, of :mod:`studyapp.claims`) before it is sent, so the ticks of
many sockets (connects, heartbeats) send it once; the lease is held while the step runs and
lapses when its executor dies, and the periodic sweep (:func:`studyapp.tables.driver.sweep`)
then sends the step again.
"""

from __future__ import annotations

import logging
import math
import random
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.utils import timezone

from studyapp import claims, steps
from studyapp.cache import UNREACHABLE
from studyapp.tables import timing
from studyapp.tables.models import Seat, Table, Turn
from studyapp.tables.store import TableState
from studyapp.tables.think import bounds_for

log = logging.getLogger(__name__)


def agent_delay(snap: TableState) -> float:
    """Agents next to people pause before moving, so the people can follow. At a table that
    does not disclose its agents (``agents_disclosed`` False) an agent takes a person's think
    time for the kind of move instead (:func:`think_seconds`, :mod:`studyapp.tables.think`)."""
    if not snap.has_humans():
        return 0.0
    think = blinded_think(snap)
    if think:
        return blinded_delay(snap, think)
    return timing.agent_pause(snap.table.opts)


def blinded_think(snap: TableState) -> Any:
    """The think-time bounds of a blinded table with people (:func:`timing.blinded_think`)."""
    return timing.blinded_think(snap.table.opts, snap.has_humans())


def move_kind(snap: TableState, seat: int) -> str:
    """The kind of move ``seat`` is asked for now (clue, vote, question, answer; '' for none)."""
    actions = snap.engine.legal_actions(snap.state, seat)
    return str(actions[0]["type"]) if actions else ""


def vote_opened(snap: TableState) -> int:
    """The number of the event that opened the vote in progress (the first ballot's)."""
    opened = len(snap.events)
    while opened > 0 and snap.events[opened - 1].get("type") == "vote":
        opened -= 1
    return opened


def next_agent(snap: TableState) -> int | None:
    """The agent seat that moves next, of those the table waits for (None: none). In a blinded
    vote, where everyone votes at once, it is the agent whose own think time (drawn from when
    the vote opened) ends first: agents' ballots land each at its own time, in no fixed seat
    order, not one right after another behind the slowest agent of lower seat number."""
    return next_ballot(snap, blinded_think(snap))[0]


def next_ballot(snap: TableState, think: Any) -> tuple[int | None, float | None]:
    """The agent seat that moves next and, when it casts a ballot in a blinded vote (``think``:
    the table's bounds), that ballot's think time from the moment the vote opened (else None).
    Each waiting agent's ballot is drawn here, once, for :func:`next_agent` and
    :func:`blinded_delay` alike."""
    agents = [i for i in snap.waiting_for() if snap.seat(i).kind == Seat.Kind.AGENT]
    if not agents or not think or move_kind(snap, agents[0]) != "vote":
        return (agents[0] if agents else None), None
    bounds = bounds_for(think, "vote")
    opened = vote_opened(snap)
    drawn, seat = min((think_seconds(snap.table, f"vote:{opened}:{s}", bounds), s) for s in agents)
    return seat, drawn


def blinded_delay(snap: TableState, think: Any) -> float:
    """The wait before a blinded table's next agent move, from the bounds of its kind of move
    (``think``: a pair for all kinds, or pairs by kind). A move made in turn (a clue) waits its
    think time from the move before it. Moves made at once (a vote: everyone still in votes
    together) are not made one think time after another, which would make agents' ballots trickle
    in long after the people's: each agent seat draws its own think time from the moment the
    vote opened, and waits only what is left of it (the first to end moves first:
    :func:`next_ballot`)."""
    seat, drawn = next_ballot(snap, think)
    if drawn is None:
        kind = move_kind(snap, seat) if seat is not None else ""
        return think_seconds(snap.table, snap.next_seq, bounds_for(think, kind))
    since = opened_at(snap, vote_opened(snap))
    if since is None:
        return drawn
    return max(0.0, drawn - (timezone.now() - since).total_seconds())


def opened_at(snap: TableState, opened: int) -> Any:
    """When the phase that began with event ``opened`` opened: the commit of the event before
    it (the table's start for the first)."""
    if opened == 0:
        return snap.table.started_at
    if opened == len(snap.events):
        return snap.last_at
    return (
        Turn.objects.filter(table_id=snap.table.pk, seq=opened - 1)
        .values_list("created_at", flat=True)
        .first()
    )


def think_seconds(table: Table, seq: int | str, bounds: list[float]) -> float:
    """An agent's think time at a blinded table for the move at ``seq``: drawn from a
    log-normal distribution (people's move times are skewed: most moves quick, a few slow) whose
    median is the geometric mean of ``bounds`` [shortest, longest] and whose bounds lie two
    standard deviations out, cut to the bounds. The draw is seeded by the table's own
    ``think_seed`` (its id and creation time for a table made without one) and the move, never
    by the game's seed, which the tables of a study round share: every table and move draws
    anew, and a redelivered turn waits as long. ``seq`` names the move (its number, or for a
    vote the vote and the seat: :func:`blinded_delay`)."""
    low, high = sorted(float(v) for v in bounds)
    if high <= 0 or high == low:
        return max(high, 0.0)
    low = max(low, min(0.5, high / 10))  # a log-normal needs a floor above 0
    seed = table.opts.think_seed
    if seed is None:
        seed = f"{table.pk}:{int(table.created_at.timestamp() * 1_000_000)}"
    rng = random.Random(f"{seed}:think:{seq}")
    centre = (math.log(low) + math.log(high)) / 2
    spread = (math.log(high) - math.log(low)) / 4
    return min(high, max(low, math.exp(rng.gauss(centre, spread))))


def advance(snap: TableState) -> list[str]:
    """Schedule the next step of a table that is being played (an agent's turn, a deadline).
    Safe to call as often as one likes: a step already scheduled is not scheduled again.
    Returns what it scheduled now."""
    movers = snap.waiting_for()
    if not movers:
        return []
    table, seq = snap.table, snap.next_seq
    scheduled = []
    agents = any(snap.seat(index).kind == Seat.Kind.AGENT for index in movers)
    if agents and schedule("take_agent_turn", (table.pk, seq), agent_delay(snap), table=table):
        scheduled.append("agent turn scheduled")
    deadline = snap.turn_deadline()
    if deadline is not None and any(snap.seat(i).kind == Seat.Kind.HUMAN for i in movers):
        due = timing.turn_due(snap.last_at or timezone.now(), deadline)
        delay = (due - timezone.now()).total_seconds()
        if schedule("check_deadline", (table.pk, seq), delay, table=table):
            scheduled.append("deadline check scheduled")
    return scheduled


def lease_key(name: str, table: Table, args: tuple) -> str:
    """The cache key that stands for one job of one table. It names the table's creation time as
    well as its id, so a table id used again (a test database made anew) is a new key."""
    born = int(table.created_at.timestamp() * 1_000_000)
    return ":".join(["tables", "job", name, str(born), *map(str, args)])


class Lease(claims.Lease):
    """A table job's lease (:class:`studyapp.claims.Lease`), ``TABLE_JOB_LEASE_SECONDS`` long.
    ``schedule`` queues it for the job's delay plus that; the job that runs it claims it, renews
    it while it works and releases it at the end (an agent turn that moved the table on leaves it
    to lapse: its ``seq`` is past). A job whose worker dies stops renewing, the lease lapses, and
    the next tick or sweep schedules the job again."""

    def __init__(self, key: str) -> None:
        super().__init__(key, settings.TABLE_JOB_LEASE_SECONDS)


def schedule(name: str, args: tuple, delay: float, *, table: Table, again: bool = False) -> bool:
    """Send step ``name`` (registered by :mod:`studyapp.tables.steps`) to run after ``delay``
    seconds, unless it is already scheduled or running. ``again``: the step reschedules itself (a
    deadline checked early). Returns whether it was sent now.

    In production a step is sent only when it is due within ``TABLE_SCHEDULE_HORIZON_SECONDS``:
    an executor holds what it reads until it is due, and the sweep sends a later step when it
    comes near. With no server and no broker (a management command, a plain test), agent turns
    run right here, one after another, and timers are left to the next connect, heartbeat or
    sweep."""
    delay = max(delay, 0.0)
    if steps.stream_mode() and delay > settings.TABLE_SCHEDULE_HORIZON_SECONDS:
        return False
    lease = Lease(lease_key(name, table, args))
    try:
        if not lease.queue(delay, again=again):
            return False
        sent = steps.send(
            name, args, {"lease": lease.key}, delay=delay, may_run_now=name == "take_agent_turn"
        )
        if not sent:
            lease.unqueue()
        return sent
    except UNREACHABLE as err:
        # Redis away even after the pools' retries: the move that called this is committed and
        # must not fail for it (a socket would close). The step is sent again by the next
        # heartbeat's tick, or by the sweep once a lease left behind has lapsed.
        log.warning(
            "table %s: %s%s not scheduled (%s: %s); the next tick or sweep sends it",
            table.pk,
            name,
            args,
            type(err).__name__,
            err,
        )
        return False


def under_lease(held: Lease, job: Callable[[], str]) -> str:
    """Run a table job as its task does: under its lease, skipped if a copy is running. An agent
    turn that moved the table on leaves its lease to lapse: its key names a ``seq`` that is past,
    so nothing schedules it again (one round trip less per turn)."""
    if not held.claim():
        return "running elsewhere"
    result = ""
    try:
        result = job()
        return result
    finally:
        if result != "moved":
            held.release()
