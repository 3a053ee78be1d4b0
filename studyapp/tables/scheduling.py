"""Scheduling a table's next step: what the table waits for after a commit, sent as a step.

Four steps move a table along without a human: an agent's turn, a vote's agent ballots (all
asked at once: :mod:`studyapp.tables.ballots`), a turn deadline and a lobby's wait limit (each at
the time :mod:`studyapp.tables.pace` and :mod:`studyapp.tables.dues` give: an agent's pace and
think time, a turn's due time with the site's outages in it), each registered by
:mod:`studyapp.tables.steps` and sent through
:func:`studyapp.steps.enqueue` (an executor's event loop: a process of its own in production, the
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
from collections.abc import Callable

from django.conf import settings
from django.utils import timezone

from studyapp import claims, steps
from studyapp.cache import UNREACHABLE
from studyapp.tables import dues, pace
from studyapp.tables.models import Seat, Table
from studyapp.tables.store import TableState

log = logging.getLogger(__name__)

# The steps that move a table by its agents: run here at once where no executor runs them.
AGENT_STEPS = ("take_agent_turn", "cast_ballots")


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
    if agents and pace.in_a_vote(snap):  # every agent's ballot at once (studyapp.tables.ballots)
        if schedule("cast_ballots", (table.pk, pace.vote_opened(snap)), 0.0, table=table):
            scheduled.append("ballots scheduled")
    elif agents and schedule(
        "take_agent_turn", (table.pk, seq), pace.agent_delay(snap), table=table
    ):
        scheduled.append("agent turn scheduled")
    due = dues.deadline_due(snap)  # the one due time the driver and the board read too
    if due is not None:
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
        sent = steps.enqueue(
            name, args, {"lease": lease.key}, delay=delay, may_run_now=name in AGENT_STEPS
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
