"""The table driver: after every commit, schedule what the table waits for next.

Three jobs move a table along without a human: an agent's turn, a turn deadline and a lobby's
wait limit. Each job names the table and the ``seq`` it was scheduled for, rebuilds the table from
its log when it runs and does nothing if the table has moved on, so a job delivered twice (a
Celery redelivery after a worker crash, a reconnect that schedules again) is harmless; the unique
``(table, seq)`` key settles any remaining race.

With a broker configured the jobs are Celery tasks (``studyapp.tables.tasks``). With the embedded
default (``CELERY_TASK_ALWAYS_EAGER``) they run in this process, on the server's event loop timer
and in its sync thread, so a socket handler never waits for an agent to think.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import random
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from games.base import Agent, Event
from games.runner import REPLY_CHARS, Move, choose
from studyapp.agents import agent_for_seat, turn_usage
from studyapp.background import server_loop
from studyapp.tables.models import Seat, Table, new_exit_code
from studyapp.tables.services import TableState, broadcast, commit, start, table_state

log = logging.getLogger(__name__)


def advance(snap: TableState) -> None:
    """Schedule the next step of a table that is being played."""
    movers = snap.waiting_for()
    if not movers:
        return
    table = snap.table
    if any(snap.seat(index).kind == Seat.Kind.AGENT for index in movers):
        delay = float(table.option("agent_delay_seconds")) if snap.has_humans() else 0.0
        schedule("take_agent_turn", (table.pk, snap.next_seq), delay)
    deadline = table.option("turn_deadline_seconds")
    if deadline and any(snap.seat(index).kind == Seat.Kind.HUMAN for index in movers):
        schedule("check_deadline", (table.pk, snap.next_seq), float(deadline))


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


def prepare_agent_turn(table_id: int, seq: int) -> AgentTurn | None:
    """The table, seat and agent for an agent turn at ``seq``; None if the table moved on.
    Runs in sync code: building the agent reads the seat's policy from the database."""
    snap = table_state(table_id)
    if snap.next_seq != seq:
        return None
    agents = [i for i in snap.waiting_for() if snap.seat(i).kind == Seat.Kind.AGENT]
    if not agents:
        return None
    index = agents[0]
    seat = snap.seat(index)
    try:
        agent = agent_for_seat(
            seat,
            game=snap.table.game,
            role=snap.engine.seats(snap.table.config)[index],
            seed=agent_seed(snap.table.seed, index, seq),
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
    if turn.agent is None:
        move = Move(snap.engine.failed(snap.state, index, turn.error), turn.error)
    else:
        try:
            move = await choose(snap.engine, snap.state, index, turn.agent)
        except Exception as err:  # a local model that raised, a bug in an agent
            log.exception("table %s: the agent of seat %s failed", snap.table.pk, index)
            error = f"{type(err).__name__}: {err}"
            move = Move(snap.engine.failed(snap.state, index, error), error)
    usage = turn_usage(turn.agent)
    if move.error:
        log.warning("table %s: seat %s could not move: %s", snap.table.pk, index, move.error)
        usage["error"] = move.error
        if move.reply:
            usage["reply"] = move.reply[:REPLY_CHARS]
    return move.event, usage


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
    """Questions withdrawn (``void``) since the oracle last answered."""
    count = 0
    for event in reversed(events):
        if event["type"] == "answer":
            break
        count += event["type"] == "void"
    return count


def resume(table_id: int) -> bool:
    """Staff resume a paused table (the answering model works again): play goes on where it
    stopped, and a further failure pauses it again at once."""
    if not Table.objects.filter(pk=table_id, status=Table.Status.PAUSED).update(
        status=Table.Status.PLAYING
    ):
        return False
    snap = table_state(table_id)
    broadcast(snap)
    advance(snap)
    return True


def take_agent_turn(table_id: int, seq: int) -> str:
    """Let the first agent seat the table waits for move, if the table is still at ``seq``."""
    turn = prepare_agent_turn(table_id, seq)
    if turn is None:
        return "stale"
    event, usage = run_async(agent_move(turn))
    return finish_agent_turn(turn.snap, event, usage)


async def take_agent_turn_async(table_id: int, seq: int) -> str:
    """The embedded mode's agent turn: the database work in the server's sync thread, the agent's
    thinking on the event loop, so a slow model never holds up the sockets."""
    turn = await sync_to_async(prepare_agent_turn)(table_id, seq)
    if turn is None:
        return "stale"
    event, usage = await agent_move(turn)
    return await sync_to_async(finish_agent_turn)(turn.snap, event, usage)


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
    deadline = float(snap.table.option("turn_deadline_seconds"))
    due = snap.last_at + timedelta(seconds=deadline) if snap.last_at else timezone.now()
    if timezone.now() < due:
        schedule("check_deadline", (table_id, seq), (due - timezone.now()).total_seconds())
        return "early"
    policy = snap.table.option("dropout")
    try:
        if policy == "end":
            event = {"type": "abort", "reason": "A player missed the turn deadline."}
            commit(snap, event, snap.engine.apply(snap.state, event))
            return "ended"
        index = humans[0]
        if policy == "skip":
            event = snap.engine.fallback(snap.state, index)
            commit(snap, event, snap.engine.apply(snap.state, event))
            return "skipped"
        spec = replacement_spec(snap, index)
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
    return "replaced"


def check_lobby(table_id: int) -> str:
    """At a lobby's wait limit: fill the empty seats with agents, or release the humans with a
    paid exit code, as the table is configured."""
    table = Table.objects.get(pk=table_id)
    if table.status != Table.Status.LOBBY:
        return "not a lobby"
    due = table.created_at + timedelta(seconds=float(table.option("wait_seconds")))
    if timezone.now() < due:
        schedule("check_lobby", (table_id,), (due - timezone.now()).total_seconds())
        return "early"
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
        status=Table.Status.ABORTED, exit_code=new_exit_code(), finished_at=timezone.now()
    )
    if updated:
        broadcast(table_state(table_id))
    return "released"


def tick(table_id: int) -> None:
    """Catch up on anything overdue (called on connect and heartbeat): timers of the embedded
    mode die with the process, and after a restart this resumes the table from its log."""
    table = Table.objects.get(pk=table_id)
    if table.status == Table.Status.LOBBY:
        check_lobby(table_id)
    elif table.status == Table.Status.PLAYING:
        snap = table_state(table)
        if settings.CELERY_TASK_ALWAYS_EAGER:
            advance(snap)
        elif snap.waiting_for():
            check_deadline(table_id, snap.next_seq)


def resume_unfinished() -> list[int]:
    """Schedule the next step of every table left open (worker start, ``resume_tables``)."""
    resumed = []
    for table in Table.objects.filter(status__in=[Table.Status.LOBBY, Table.Status.PLAYING]):
        if table.status == Table.Status.LOBBY:
            schedule("check_lobby", (table.pk,), 0)
        else:
            advance(table_state(table))
        resumed.append(table.pk)
    return resumed


JOBS: dict[str, Callable[..., str]] = {
    "take_agent_turn": take_agent_turn,
    "check_deadline": check_deadline,
    "check_lobby": check_lobby,
}

# Embedded mode: jobs already waiting on a timer, so a reconnect does not schedule a second one.
_pending: set[tuple[str, tuple]] = set()
_pending_lock = threading.Lock()
_inline = threading.local()
_loops = threading.local()


def schedule(name: str, args: tuple, delay: float) -> None:
    """Run job ``name`` after ``delay`` seconds: a Celery task, or in-process when eager."""
    if not settings.CELERY_TASK_ALWAYS_EAGER:
        from studyapp.tables import tasks

        tasks.TASKS[name].apply_async(args, countdown=max(delay, 0))
        return
    loop = server_loop()
    if loop is None:
        # No server around (a management command, a plain test): agent turns run right here,
        # one after another; timers are left to the next connect or heartbeat.
        if name == "take_agent_turn":
            run_inline(JOBS[name], args)
        return
    key = (name, args)
    with _pending_lock:
        if key in _pending:
            return
        _pending.add(key)
    # A fresh context: the job must not inherit this sync thread's "executor in use" marker.
    loop.call_soon_threadsafe(_call_later, loop, max(delay, 0), key, context=contextvars.Context())


def _call_later(loop: asyncio.AbstractEventLoop, delay: float, key: tuple[str, tuple]) -> None:
    loop.call_later(delay, lambda: _spawn(loop, key))


_running: set[asyncio.Task] = set()


def _spawn(loop: asyncio.AbstractEventLoop, key: tuple[str, tuple]) -> None:
    task = loop.create_task(_run_job(key))
    _running.add(task)
    task.add_done_callback(_running.discard)


async def _run_job(key: tuple[str, tuple]) -> None:
    with _pending_lock:
        _pending.discard(key)
    name, args = key
    try:
        if name == "take_agent_turn":
            await take_agent_turn_async(*args)
        else:
            await sync_to_async(JOBS[name])(*args)
    except Exception:
        log.exception("table job %s%s failed", name, args)


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


def run_async(coro: Any) -> Any:
    """Await an agent from sync code on a loop kept per thread, so model clients that hold
    connections stay bound to one loop across turns."""
    loop = getattr(_loops, "loop", None)
    if loop is None or loop.is_closed():
        loop = asyncio.new_event_loop()
        _loops.loop = loop
    return loop.run_until_complete(coro)
