"""The table driver: after every commit, schedule what the table waits for next.

Three jobs move a table along without a human: an agent's turn, a turn deadline and a lobby's
wait limit. Each job names the table and the ``seq`` it was scheduled for, rebuilds the table from
its log when it runs and does nothing if the table has moved on, so a job delivered twice (a
Celery redelivery after a worker crash, a reconnect that schedules again) is harmless; the unique
``(table, seq)`` key settles any remaining race.

With a broker configured the jobs are Celery tasks (``studyapp.tables.tasks``). With the embedded
default (``CELERY_TASK_ALWAYS_EAGER``) they run in this process, on the server's event loop timer
and in its sync thread, so a socket handler never waits for an agent to think. Everything else is
the same on both paths (docs/architecture.md lists where they split): a job is claimed by a
lease in the cache before it is scheduled, so the ticks of many sockets (connects, heartbeats)
schedule it once; the lease is held while the job runs and lapses when its worker dies, and the
periodic :func:`sweep` then schedules the job again.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import math
import random
import threading
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from channels.db import database_sync_to_async
from django.conf import settings
from django.core.cache import cache
from django.db import IntegrityError, transaction
from django.db.models import Count, Max
from django.db.models.functions import Coalesce
from django.utils import timezone

from games.base import Agent, Event
from games.runner import REPLY_CHARS, Move, choose
from studyapp.agents import agent_for_seat, turn_usage
from studyapp.background import run_async, server_loop
from studyapp.cache import claim, delete_if
from studyapp.db import returning_connections
from studyapp.tables import signals
from studyapp.tables.models import Seat, Table, new_exit_code
from studyapp.tables.services import (
    TableState,
    broadcast,
    caught_up,
    commit,
    start,
    table_state,
)

log = logging.getLogger(__name__)


def agent_delay(snap: TableState) -> float:
    """Agents next to people pause before moving, so the people can follow. At a table that
    does not disclose its agents (``agents_disclosed`` False) an agent takes a person's think
    time instead: a time drawn from ``agent_think_seconds`` [shortest, longest], the same for the
    same table and move (a redelivered turn waits as long)."""
    if not snap.has_humans():
        return 0.0
    think = snap.table.options.get("agent_think_seconds")
    if snap.table.options.get("agents_disclosed") is False and think:
        low, high = (float(v) for v in think)
        draw = random.Random(f"{snap.table.seed}:think:{snap.next_seq}").random()
        return low + (high - low) * draw
    return float(snap.table.option("agent_delay_seconds"))


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
    deadline = table.turn_deadline()
    if deadline is not None and any(snap.seat(i).kind == Seat.Kind.HUMAN for i in movers):
        due = (snap.last_at or timezone.now()) + timedelta(seconds=deadline)
        delay = (due - timezone.now()).total_seconds()
        if schedule("check_deadline", (table.pk, seq), delay, table=table):
            scheduled.append("deadline check scheduled")
    return scheduled


def agent_seed(table_seed: int, seat: int, seq: int) -> int:
    """A seed per (table, seat, turn): a redelivered agent turn proposes the same move."""
    return random.Random(f"{table_seed}:{seat}:{seq}").randrange(2**31)


@dataclass
class AgentTurn:
    """An agent seat's turn, ready to be played: ``agent`` is None when it could not be built
    (``error`` says why), and the turn is then the seat's fallback."""

    snap: TableState
    index: int
    agent: Agent | None
    error: str = ""
    skip: bool = False  # a seat whose person left under the "skip" policy: it only passes


def prepare_agent_turn(table_id: int, seq: int) -> AgentTurn | None:
    """The table, seat and agent for an agent turn at ``seq``; None if the table moved on.
    Runs in sync code: building the agent reads the seat's policy from the database."""
    snap = caught_up(table_id)
    if snap.next_seq != seq:
        return None
    agents = [i for i in snap.waiting_for() if snap.seat(i).kind == Seat.Kind.AGENT]
    if not agents:
        return None
    index = agents[0]
    seat = snap.seat(index)
    if seat.agent_spec == SKIP_SPEC:
        return AgentTurn(snap, index, None, skip=True)
    try:
        agent = agent_for_seat(
            seat,
            game=snap.table.game,
            role=snap.engine.seats(snap.table.config)[index],
            seed=agent_seed(snap.table.seed, index, seq),
            live=snap.has_humans(),
        )
    except Exception as err:  # a bad spec, a missing extra, a folder with no model
        log.exception("table %s: cannot build the agent of seat %s", table_id, index)
        return AgentTurn(snap, index, None, f"{type(err).__name__}: {err}")
    return AgentTurn(snap, index, agent)


async def agent_move(turn: AgentTurn) -> tuple[Event, dict[str, Any]]:
    """The seat's move and what it cost. An agent that cannot move (it could not be built, its
    model call failed after the SDK's retries, its replies held no usable move) must neither stall
    the table nor cost anyone a turn: it is logged, the engine's ``failed`` move is made in its
    place (an oracle withdraws the question, other seats make the fallback move), and the turn's
    usage says why: ``error``, and ``reply``, the start of the model's last text, if it sent one."""
    snap, index = turn.snap, turn.index
    if turn.skip:
        return snap.engine.fallback(snap.state, index), {}
    if turn.agent is None:
        move = Move(snap.engine.failed(snap.state, index, turn.error), turn.error)
    else:
        budget = live_turn_seconds() if snap.has_humans() else None
        try:
            move = await asyncio.wait_for(
                choose(snap.engine, snap.state, index, turn.agent), budget
            )
        except TimeoutError as err:  # people are waiting: the live budget is spent
            if budget is None:  # not ours: an agent's own timeout at a table of agents
                log.exception("table %s: the agent of seat %s failed", snap.table.pk, index)
                error = f"{type(err).__name__}: {err}"
            else:
                error = f"the model did not move within the live budget of {budget:g} s"
            move = Move(snap.engine.failed(snap.state, index, error), error)
        except Exception as err:  # a local model that raised, a bug in an agent
            log.exception("table %s: the agent of seat %s failed", snap.table.pk, index)
            error = f"{type(err).__name__}: {err}"
            move = Move(snap.engine.failed(snap.state, index, error), error)
    usage = turn_usage(turn.agent)
    if move.error:
        # The reason may quote the model's reply, and an oracle's reply may name the secret word:
        # it goes to the turn's usage (staff only); the log line at WARNING says only where.
        log.warning(
            "table %s: seat %s could not move (reason in the turn's usage)", snap.table.pk, index
        )
        log.debug("table %s: seat %s could not move: %s", snap.table.pk, index, move.error)
        usage["error"] = move.error
        if move.reply:
            usage["reply"] = move.reply[:REPLY_CHARS]
    return move.event, usage


def live_turn_seconds() -> float:
    """The most an agent's turn may take at a table with people (LIVE_AGENT_TURN_SECONDS), its
    model calls and a corrective follow-up included; the seat's failed move is made after it."""
    return float(settings.LIVE_AGENT_TURN_SECONDS)


def finish_agent_turn(snap: TableState, event: Event, usage: dict[str, Any]) -> str:
    """Commit an agent's move. A withdrawn question that makes ``max_oracle_failures`` in a row
    pauses the table in the same transaction, so nothing is scheduled after it; staff see it on
    the live monitor and :func:`resume` it."""
    new_state = snap.engine.apply(snap.state, event)
    limit = int(snap.table.option("max_oracle_failures"))
    pause = event["type"] == "void" and failures_in_a_row([*snap.events, event]) >= limit
    playing = snap.table.status
    try:
        with transaction.atomic() if pause else contextlib.nullcontext():
            if pause:
                Table.objects.filter(pk=snap.table.pk).update(status=Table.Status.PAUSED)
                snap.table.status = Table.Status.PAUSED
            commit(snap, event, new_state, usage=usage)
    except IntegrityError:
        snap.table.status = playing
        return "duplicate"
    if pause:
        log.error("table %s paused: %s questions in a row not answered", snap.table.pk, limit)
        return "paused"
    return "moved"


def failures_in_a_row(events: list[Event]) -> int:
    """Questions withdrawn (``void``) since the oracle last answered or staff resumed the table."""
    count = 0
    for event in reversed(events):
        if event["type"] in ("answer", "resume"):
            break
        count += event["type"] == "void"
    return count


def resume(table_id: int) -> bool:
    """Staff resume a paused table (the answering model works again). A ``resume`` turn records
    when: it restarts the count of failures in a row, and the person whose turn it is gets a whole
    turn from now, not from before the pause."""
    if not Table.objects.filter(pk=table_id, status=Table.Status.PAUSED).update(
        status=Table.Status.PLAYING
    ):
        return False
    snap = table_state(table_id)
    event = {"type": "resume", "by": "staff"}
    try:
        commit(snap, event, snap.engine.apply(snap.state, event))
    except IntegrityError:  # another writer moved first; the table is playing either way
        advance(table_state(table_id))
    return True


def take_agent_turn(table_id: int, seq: int, lease: Lease | None = None) -> str:
    """Let the first agent seat the table waits for move, if the table is still at ``seq``."""
    turn = prepare_agent_turn(table_id, seq)
    if turn is None:
        return "stale"
    event, usage = run_async((lease or Lease("")).hold(agent_move(turn)))
    return finish_agent_turn(turn.snap, event, usage)


async def take_agent_turn_async(table_id: int, seq: int, lease: Lease | None = None) -> str:
    """The embedded mode's agent turn: the database work in the server's sync thread, the agent's
    thinking on the event loop, so a slow model never holds up the sockets."""
    turn = await database_sync_to_async(returning_connections(prepare_agent_turn))(table_id, seq)
    if turn is None:
        return "stale"
    event, usage = await (lease or Lease("")).hold(agent_move(turn))
    return await database_sync_to_async(returning_connections(finish_agent_turn))(
        turn.snap, event, usage
    )


# The seat of a person who left a table whose dropout policy is "skip": every turn of theirs is
# the engine's do-nothing move, played at once.
SKIP_SPEC = "skip"

# Offline agents are built per role; the site default may not play every role.
OFFLINE_ROLE_AGENTS = {("twenty-questions", "questioner"): "offline:infogain"}


def replacement_spec(snap: TableState, index: int) -> str:
    """The agent that takes over a seat: the table's choice, else the site default that fits."""
    if snap.table.options.get("replacement_spec"):
        return snap.table.options["replacement_spec"]
    role = snap.engine.seats(snap.table.config)[index]
    spec = settings.DEFAULT_AGENT_SPEC
    if spec.startswith("offline:"):
        return OFFLINE_ROLE_AGENTS.get((snap.table.game, role), spec)
    return spec


def check_deadline(table_id: int, seq: int) -> str:
    """Apply the table's dropout policy to humans who let the turn deadline pass."""
    snap = table_state(table_id)
    if snap.next_seq != seq:
        return "stale"
    humans = [i for i in snap.waiting_for() if snap.seat(i).kind == Seat.Kind.HUMAN]
    if not humans:
        return "no human to wait for"
    deadline = snap.table.turn_deadline()
    if deadline is None:
        return "no deadline"
    due = snap.last_at + timedelta(seconds=deadline) if snap.last_at else timezone.now()
    if timezone.now() < due:
        delay = (due - timezone.now()).total_seconds()
        schedule("check_deadline", (table_id, seq), delay, table=snap.table, again=True)
        return "early"
    return apply_dropout(snap, humans[0])


def apply_dropout(snap: TableState, index: int, *, dropped: bool = False) -> str:
    """The table's dropout policy for a person who missed the deadline (``dropped``: who left
    the study): ``end`` aborts the table, ``replace`` hands the seat to the replacement agent,
    ``skip`` plays the seat's do-nothing move for this turn, and for a person who left, for every
    turn of theirs from now on (the seat passes to :data:`SKIP_SPEC`)."""
    policy = snap.table.option("dropout")
    try:
        if policy == "end":
            why = "A player left the study." if dropped else "A player missed the turn deadline."
            event = {"type": "abort", "reason": why}
            commit(snap, event, snap.engine.apply(snap.state, event))
            return "ended"
        if policy == "skip" and not dropped:
            event = snap.engine.fallback(snap.state, index)
            commit(snap, event, snap.engine.apply(snap.state, event))
            return "skipped"
        spec = SKIP_SPEC if policy == "skip" else replacement_spec(snap, index)
        event = {"type": "takeover", "seat": index, "by": spec}
        commit(
            snap,
            event,
            snap.engine.apply(snap.state, event),
            kind=Seat.Kind.AGENT,
            agent_spec=spec,
        )
    except IntegrityError:
        return "stale"
    return "skipping" if spec == SKIP_SPEC else "replaced"


def drop_out(table_id: int, index: int) -> str:
    """A person left the study (they withdrew, or were idle past the study's limit): apply the
    table's dropout policy to their seat now instead of at the deadline. Their seat is no longer
    theirs afterwards, so moves they still send are refused."""
    for _ in range(3):  # another move may land first; judge again on the new log
        snap = table_state(table_id)
        if snap.table.status not in (Table.Status.LOBBY, Table.Status.PLAYING) or snap.is_over:
            return "over"
        if snap.table.status == Table.Status.LOBBY:
            return "lobby"
        if snap.seat(index).kind != Seat.Kind.HUMAN:
            return "not a person's seat"
        result = apply_dropout(snap, index, dropped=True)
        if result != "stale":
            return result
    return "stale"


def check_lobby(table_id: int) -> str:
    """At a lobby's wait limit: fill the empty seats with agents, or release the humans with a
    paid exit code, as the table is configured."""
    table = Table.objects.get(pk=table_id)
    if table.status != Table.Status.LOBBY:
        return "not a lobby"
    due = table.created_at + timedelta(seconds=float(table.option("wait_seconds")))
    if timezone.now() < due:
        delay = (due - timezone.now()).total_seconds()
        schedule("check_lobby", (table_id,), delay, table=table, again=True)
        return "early"
    if table.options.get("group_lobby"):  # a study's group forms with whoever came
        from studyapp.tables.lobby import form_group

        return f"group {form_group(table_id)}"
    vacant = [seat for seat in table.seats.all() if seat.is_vacant]
    seated = len(vacant) < table.seats.count()
    if seated and table.option("lobby_timeout") == "fill":
        spec = table.option("replacement_spec")  # Undercover seats are all "player"
        Seat.objects.filter(pk__in=[seat.pk for seat in vacant]).update(
            kind=Seat.Kind.AGENT, agent_spec=spec
        )
        start(table)
        return "filled"
    updated = Table.objects.filter(pk=table_id, status=Table.Status.LOBBY).update(
        status=Table.Status.ABORTED,
        exit_code=table.options.get("exit_code") or new_exit_code(),  # a study's fixed code
        finished_at=timezone.now(),
    )
    if updated:
        broadcast(table_state(table_id))
    return "released"


def tick(table_id: int) -> TableState | None:
    """Catch up on anything overdue (called on connect and heartbeat), the same with and without
    Celery: a lobby past its wait limit starts, and a table being played has its next step
    scheduled unless it already is (a timer lost with a process, a task lost with a worker).
    It never judges a deadline itself: only a job that finds the deadline passed does.
    Returns the table rebuilt from its log when it rebuilt one (a table being played), so a
    socket's heartbeat can compare it with its board without reading the log again."""
    if settings.CELERY_TASK_ALWAYS_EAGER and (loop := server_loop()) is not None:
        ensure_sweeping(loop)
    table = Table.objects.get(pk=table_id)
    if table.status == Table.Status.LOBBY:
        due = table.created_at + timedelta(seconds=float(table.option("wait_seconds")))
        if due <= timezone.now():
            check_lobby(table_id)
        else:
            delay = (due - timezone.now()).total_seconds()
            schedule("check_lobby", (table_id,), delay, table=table)
    elif table.status == Table.Status.PLAYING:
        snap = table_state(table)
        advance(snap)
        return snap
    return None


def resume_unfinished() -> list[int]:
    """Schedule the next step of every table left open (worker start, ``resume_tables``)."""
    resumed = []
    for table in Table.objects.filter(status__in=[Table.Status.LOBBY, Table.Status.PLAYING]):
        if table.status == Table.Status.LOBBY:
            schedule("check_lobby", (table.pk,), 0, table=table)
        else:
            advance(table_state(table))
        resumed.append(table.pk)
    return resumed


def idle_limit(table: Table) -> float | None:
    """A study's limit on how long a person may leave their table waiting before they count as
    having left the study (``idle_limit_seconds``); None: no limit."""
    try:
        seconds = float(table.options.get("idle_limit_seconds") or 0)
    except (TypeError, ValueError):
        return None
    return seconds if seconds > 0 else None


def sweep() -> dict[str, int]:
    """The periodic catch-up (Celery beat, or a timer on the embedded server's loop): lobbies
    past their wait limit, and every table that has been quiet for a while has its next step
    scheduled again unless a live job holds it (an agent turn whose worker died, a deadline that
    is due), and a study participant idle past the study's limit is dropped. Returns counts."""
    now = timezone.now()
    done: Counter[str] = Counter()
    for table in Table.objects.filter(status=Table.Status.LOBBY):
        if table.created_at + timedelta(seconds=float(table.option("wait_seconds"))) <= now:
            done[f"lobby {check_lobby(table.pk)}"] += 1
    quiet_since = now - timedelta(seconds=settings.TABLE_SWEEP_SECONDS)
    quiet = list(
        Table.objects.filter(status=Table.Status.PLAYING)
        .annotate(
            last=Coalesce(Max("turns__created_at"), "started_at", "created_at"),
            turn_count=Count("turns"),
        )
        .filter(last__lte=quiet_since)
        .values_list("pk", "created_at", "turn_count", "last")
    )
    settled = cache.get_many([settled_key(*row) for row in quiet])
    for table_id, *facts in quiet:
        if settled_key(table_id, *facts) in settled:
            continue
        snap = table_state(table_id)
        steps = drop_idle(snap, now) or advance(snap)
        for name in steps:
            done[name] += 1
        if not steps:
            settle(snap, now)
    for table_id in paused_too_long(now):
        done[f"paused table {end_paused(table_id)}"] += 1
    for _, counts in signals.swept.send(sender=Table, now=now):
        for name, count in (counts or {}).items():
            done[name] += count
    return dict(done)


PAUSED_ENDED = (
    "The game was ended: the answering side stayed unavailable. This round counts as ended; "
    "you can go on."
)


def paused_too_long(now: Any) -> list[int]:
    """Paused tables whose pause (the turn that paused them) is older than their limit."""
    rows = (
        Table.objects.filter(status=Table.Status.PAUSED)
        .annotate(paused_at=Coalesce(Max("turns__created_at"), "started_at", "created_at"))
        .values_list("pk", "options", "paused_at")
    )
    due = []
    for table_id, options, paused_at in rows:
        limit = Table(options=options or {}).paused_limit()
        if limit is not None and (now - paused_at).total_seconds() >= limit:
            due.append(table_id)
    return due


def end_paused(table_id: int) -> str:
    """End a table paused past its limit with an ``abort`` turn, so nobody waits without end for
    staff: the game is over (no winner), and the commit announces it (``signals.game_over``), so
    a study books the round as it books any ended round and lets the person go on, even if they
    never return. The table row is locked, so a staff resume at the same moment either comes
    first (the table plays on) or finds it ended."""
    with transaction.atomic():
        locked = Table.objects.select_for_update().filter(pk=table_id).first()
        if locked is None or locked.status != Table.Status.PAUSED:
            return "resumed"
        snap = table_state(table_id)
        event = {"type": "abort", "reason": PAUSED_ENDED, "paused": True}
        try:
            commit(snap, event, snap.engine.apply(snap.state, event))
        except IntegrityError:
            return "stale"
    log.error("table %s ended: paused longer than its limit", table_id)
    return "ended"


def settled_key(table_id: int, created_at: Any, turns: int, last: Any) -> str:
    """What the sweep's judgement rested on: the table (its creation time too, as in a job's
    lease key, so an id used again is new), its number of turns and when it last moved."""
    born, moved = (int(at.timestamp() * 1_000_000) for at in (created_at, last))
    return f"tables:settled:{table_id}:{born}:{turns}:{moved}"


def settle(snap: TableState, now: Any) -> None:
    """A quiet table the sweep found nothing to do for, waiting only on people, is not rebuilt
    again at this turn until something could fall due: the idle limit, or its turn deadline
    coming within TABLE_SCHEDULE_HORIZON_SECONDS (when its job is sent); with neither, nothing
    can fall due without a new turn, which is a new key. A visitor's table left open would
    otherwise be rebuilt every few seconds, forever. A table waiting on an agent is never
    settled: its lease may belong to a worker that died."""
    if any(snap.seat(i).kind != Seat.Kind.HUMAN for i in snap.waiting_for()):
        return
    since = snap.last_at or now
    due = []
    if (limit := idle_limit(snap.table)) is not None:
        due.append(since + timedelta(seconds=limit))
    if (deadline := snap.table.turn_deadline()) is not None:
        horizon = settings.TABLE_SCHEDULE_HORIZON_SECONDS
        due.append(since + timedelta(seconds=deadline - horizon))
    seconds = min((at - now).total_seconds() for at in due) if due else SETTLED_SECONDS
    if seconds >= 1:
        key = settled_key(snap.table.pk, snap.table.created_at, snap.next_seq, since)
        cache.set(key, True, math.floor(seconds))


# How long the sweep leaves alone a quiet table that waits on people with no time limit.
SETTLED_SECONDS = 3600


def drop_idle(snap: TableState, now: Any) -> list[str]:
    """Drop the people this table has waited on longer than its idle limit: announced
    (``signals.seat_idle``), so a study marks its participant dropped (which applies the table's
    dropout policy to the seat); a table with no study behind it applies the policy alone."""
    limit = idle_limit(snap.table)
    waited = (now - (snap.last_at or now)).total_seconds()
    if limit is None or waited < limit:
        return []
    dropped = []
    for index in snap.waiting_for():
        if snap.seat(index).kind != Seat.Kind.HUMAN:
            continue
        answers = signals.seat_idle.send(sender=Table, table_id=snap.table.pk, seat=index)
        if not any(taken for _, taken in answers):
            drop_out(snap.table.pk, index)
        dropped.append("idle person dropped")
    return dropped


JOBS: dict[str, Callable[..., str]] = {
    "take_agent_turn": take_agent_turn,
    "check_deadline": check_deadline,
    "check_lobby": check_lobby,
}

_inline = threading.local()
QUEUED = "queued"


def lease_key(name: str, table: Table, args: tuple) -> str:
    """The cache key that stands for one job of one table. It names the table's creation time as
    well as its id, so a table id used again (a test database made anew) is a new key."""
    born = int(table.created_at.timestamp() * 1_000_000)
    return ":".join(["tables", "job", name, str(born), *map(str, args)])


@dataclass
class Lease:
    """A claim on a job in the shared cache (Redis in production, so it holds across daphne
    processes and workers). ``schedule`` adds it as queued for the job's delay plus a margin; the
    job that runs it renews it while it works and deletes it at the end (an agent turn that moved
    the table on leaves it to lapse: its ``seq`` is past). A job whose worker dies
    stops renewing, the lease lapses within ``TABLE_JOB_LEASE_SECONDS``, and the next tick or
    sweep schedules the job again. An empty key is no lease (a job run inline or by hand)."""

    key: str
    token: str = ""

    def take(self) -> bool:
        """Start running: False if another copy of the job is running right now (the lease is
        neither missing nor queued). One round trip (:func:`studyapp.cache.claim`)."""
        if not self.key:
            return True
        token = f"running:{uuid.uuid4().hex}"
        if not claim(cache, self.key, QUEUED, token, self.seconds()):
            return False
        self.token = token
        return True

    def renew(self) -> None:
        if self.key:
            cache.set(self.key, self.token, self.seconds())

    def release(self) -> None:
        if self.key:
            delete_if(cache, self.key, self.token)

    @staticmethod
    def seconds() -> int:
        return math.ceil(settings.TABLE_JOB_LEASE_SECONDS)

    async def hold(self, work: Any) -> Any:
        """Await ``work`` (an agent thinking), renewing the lease while it runs."""
        if not self.key:
            return await work

        async def keep() -> None:
            while True:
                await asyncio.sleep(settings.TABLE_JOB_LEASE_SECONDS / 3)
                self.renew()

        keeper = asyncio.ensure_future(keep())
        try:
            return await work
        finally:
            keeper.cancel()


def schedule(name: str, args: tuple, delay: float, *, table: Table, again: bool = False) -> bool:
    """Run job ``name`` after ``delay`` seconds, unless it is already scheduled or running:
    a Celery task, or a timer on the embedded server's loop. ``again``: the job reschedules
    itself (a deadline checked early). Returns whether it was scheduled now.

    A Celery task is sent only when it is due within ``TABLE_SCHEDULE_HORIZON_SECONDS``: a
    countdown longer than the broker's visibility timeout would be delivered twice, and the
    sweep sends it when it comes near."""
    delay = max(delay, 0.0)
    celery = not settings.CELERY_TASK_ALWAYS_EAGER
    loop = None if celery else server_loop()
    if not celery and loop is None:
        # No server around (a management command, a plain test): agent turns run right here,
        # one after another; timers are left to the next connect, heartbeat or sweep.
        if name == "take_agent_turn":
            run_inline(JOBS[name], args)
            return True
        return False
    if celery and delay > settings.TABLE_SCHEDULE_HORIZON_SECONDS:
        return False
    key = lease_key(name, table, args)
    ttl = math.ceil(delay + settings.TABLE_JOB_LEASE_SECONDS)  # whole seconds for Redis
    if again:
        cache.set(key, QUEUED, ttl)
    elif not cache.add(key, QUEUED, ttl):
        return False
    if celery:
        from studyapp.tables import tasks

        tasks.TASKS[name].apply_async(args, {"lease": key}, countdown=delay)
        return True
    ensure_sweeping(loop)
    # A fresh context: the job must not inherit this sync thread's "executor in use" marker.
    job = (name, args, key)
    loop.call_soon_threadsafe(_call_later, loop, delay, job, context=contextvars.Context())
    return True


def run_job(name: str, args: tuple, lease: str = "") -> str:
    """A table job as a Celery worker runs it: under its lease, skipped if a copy is running.
    An agent turn that moved the table on leaves its lease to lapse: its key names a ``seq``
    that is past, so nothing schedules it again (one round trip less per turn)."""
    held = Lease(lease)
    if not held.take():
        return "running elsewhere"
    result = ""
    try:
        if name == "take_agent_turn":
            result = take_agent_turn(*args, lease=held)
        else:
            result = JOBS[name](*args)
        return result
    finally:
        if result != "moved":
            held.release()


def _call_later(loop: asyncio.AbstractEventLoop, delay: float, job: tuple) -> None:
    loop.call_later(delay, lambda: _spawn(loop, job))


_running: set[asyncio.Task] = set()


def _spawn(loop: asyncio.AbstractEventLoop, job: tuple) -> None:
    task = loop.create_task(_run_job(*job))
    _running.add(task)
    task.add_done_callback(_running.discard)


async def _run_job(name: str, args: tuple, key: str) -> None:
    """A table job as the embedded server runs it: the same lease as on a Celery worker."""
    held = Lease(key)
    if not held.take():
        return
    try:
        if name == "take_agent_turn":
            await take_agent_turn_async(*args, lease=held)
        else:
            await database_sync_to_async(returning_connections(JOBS[name]))(*args)
    except Exception:
        log.exception("table job %s%s failed", name, args)
    finally:
        held.release()


_sweepers: set[asyncio.AbstractEventLoop] = set()


def ensure_sweeping(loop: asyncio.AbstractEventLoop) -> None:
    """The embedded server's stand-in for Celery beat: :func:`sweep` every
    ``TABLE_SWEEP_SECONDS`` on its loop, started with the first job it schedules."""
    if loop in _sweepers:
        return
    _sweepers.add(loop)

    async def sweeping() -> None:
        while True:
            await asyncio.sleep(settings.TABLE_SWEEP_SECONDS)
            try:
                await database_sync_to_async(returning_connections(sweep))()
            except Exception:
                log.exception("table sweep failed")

    loop.call_soon_threadsafe(_spawn_sweeper, loop, sweeping, context=contextvars.Context())


def _spawn_sweeper(loop: asyncio.AbstractEventLoop, sweeping: Callable[[], Any]) -> None:
    task = loop.create_task(sweeping())
    _running.add(task)


def run_inline(job: Callable[..., Any], args: tuple) -> None:
    """Run jobs one after another instead of nesting (an agent turn schedules the next)."""
    queue = getattr(_inline, "queue", None)
    if queue is not None:
        queue.append((job, args))
        return
    _inline.queue = [(job, args)]
    try:
        while _inline.queue:
            next_job, next_args = _inline.queue.pop(0)
            next_job(*next_args)
    finally:
        _inline.queue = None
