"""The places where the embedded mode (steps on the server's loop) and production (steps on an
executor reading the Redis stream, batch work on Celery) take different paths, each tested on
both (docs/architecture.md, "Eager and Celery"):

1. ``scheduling.schedule`` through ``studyapp.steps``: the server loop's executor after the
   delay / an entry of the Redis stream (sent only when due soon);
2. an agent's turn: the same step on the server's loop / on an executor (``steps.serve``);
3. the periodic sweep: the beat schedule run on the server's loop / Celery beat's ``sweep_tables``.

The production path runs on a real executor in this process (``steps.serve`` on a loop of its own,
reading the real Redis stream) and a real Celery worker (the in-memory broker), so the behaviour
under test is theirs, not a stand-in. A socket connect and heartbeats go through the real ASGI
application in both modes.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Iterator

import pytest
from asgiref.sync import sync_to_async
from celery.contrib.testing.worker import start_worker
from celery.signals import before_task_publish
from django.core.cache import cache
from django.db import OperationalError, connection

from studyapp import steps
from studyapp.celery import app
from studyapp.tables import driver, scheduling, services, tasks
from studyapp.tables.models import Seat, Table, Turn
from tests.studyapp.tables.conftest import make_session, socket

pytestmark = pytest.mark.django_db(transaction=True)

ORACLE = {"kind": "agent", "agent_spec": "offline:kb"}
QUESTIONER = {"kind": "agent", "agent_spec": "offline:infogain"}


@pytest.fixture
def celery_mode(settings) -> Iterator[list[str]]:
    """Celery on: tasks go to the in-memory broker and nothing runs them. Yields the names of
    the tasks sent."""
    settings.CELERY_TASK_ALWAYS_EAGER = False
    saved = (app.conf.broker_url, app.conf.task_always_eager, app.conf.broker_transport_options)
    app.conf.broker_url = "memory://"
    app.conf.task_always_eager = False
    app.conf.broker_transport_options = {}
    app._pool = None
    app.amqp._producer_pool = None
    sent: list[str] = []

    def count(sender: str | None = None, **_: object) -> None:
        sent.append(str(sender))

    before_task_publish.connect(count, weak=False)
    cache.clear()
    try:
        yield sent
    finally:
        before_task_publish.disconnect(count)
        app.conf.broker_url, app.conf.task_always_eager, app.conf.broker_transport_options = saved
        app._pool = None
        app.amqp._producer_pool = None


@pytest.fixture
def worker(celery_mode: list[str]) -> Iterator[list[str]]:
    """A real Celery worker (thread pool) consuming the in-memory broker."""
    if connection.vendor == "sqlite":
        pytest.skip(
            "SQLite's in-memory test database locks whole tables between threads; the worker "
            "tests run on PostgreSQL (DATABASE_URL), as Celery does in production"
        )
    with start_worker(app, pool="threads", concurrency=2, perform_ping_check=False):
        yield celery_mode


@pytest.fixture
def stream(celery_mode: list[str]) -> Iterator[None]:
    """Production's steps: sent to the site's Redis stream (REDIS_URL), which starts empty."""
    if steps.redis() is None:
        pytest.skip("the steps' stream needs Redis (REDIS_URL), as in production")
    steps.redis().delete(steps.stream_key())
    yield
    steps.redis().delete(steps.stream_key())


def stream_names() -> list[str]:
    """The steps in the stream (sent, and not yet run by an executor)."""
    return [fields[b"name"].decode() for _, fields in steps.redis().xrange(steps.stream_key())]


def drop_stream() -> None:
    """Every step in the stream dies with its executor before anyone ran it."""
    steps.redis().delete(steps.stream_key())


@pytest.fixture
def executor(stream: None) -> Iterator[steps.Executor]:
    """A real executor (``steps.serve``) on a loop of its own in a thread, reading the stream."""
    if connection.vendor == "sqlite":
        pytest.skip(
            "SQLite's in-memory test database locks whole tables between threads; the executor "
            "tests run on PostgreSQL (DATABASE_URL), as in production"
        )
    loop = asyncio.new_event_loop()
    stop = asyncio.Event()
    running = steps.Executor(loop, 100)
    thread = threading.Thread(
        target=loop.run_until_complete,
        args=(steps.serve(stop, name="test-executor", executor=running),),
        daemon=True,
    )
    thread.start()
    try:
        yield running
    finally:
        loop.call_soon_threadsafe(stop.set)
        thread.join(20)


def wait_until(check, seconds: float = 20.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.1)
    return False


async def await_until(check, seconds: float = 20.0) -> bool:
    """``wait_until`` for async tests: the check runs in the sync thread between waits, so the
    server loop's own jobs get that thread in the meantime."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if await sync_to_async(check)():
            return True
        await asyncio.sleep(0.1)
    return False


def person_table(session_key: str, **options: object) -> Table:
    return services.create_table(
        "twenty-questions",
        {"answer": "Apple", "max_questions": 20},
        [{"kind": "human", "session_key": session_key}, ORACLE],
        **options,
    )


async def connect_and_beat(table_id: int, session_key: str, beats: int) -> None:
    """A participant's page: connect, then ``beats`` heartbeat frames."""
    communicator = socket(table_id, session_key)
    connected, _ = await communicator.connect()
    assert connected
    await communicator.receive_from(timeout=5)  # the current view
    for _ in range(beats):
        await communicator.send_json_to({"type": "heartbeat"})
    await asyncio.sleep(0.5)
    await communicator.disconnect()


# 1. No deadline means no deadline, on both paths: the bug of issue 11 --------------------------


@pytest.mark.parametrize("deadline", [0, None])
async def test_a_person_without_a_deadline_keeps_the_seat_on_connect_when_eager(
    deadline: int | None,
) -> None:
    key = await make_session()
    table = await sync_to_async(person_table)(key, turn_deadline_seconds=deadline)
    await connect_and_beat(table.pk, key, beats=3)
    assert not await Turn.objects.filter(table=table).aexists()
    assert (await Seat.objects.aget(table=table, index=0)).kind == Seat.Kind.HUMAN


@pytest.mark.parametrize("deadline", [0, None])
async def test_a_person_without_a_deadline_keeps_the_seat_on_connect_on_an_executor(
    executor: steps.Executor, deadline: int | None
) -> None:
    key = await make_session()
    table = await sync_to_async(person_table)(key, turn_deadline_seconds=deadline)
    await connect_and_beat(table.pk, key, beats=3)
    await asyncio.sleep(1.0)  # anything sent has had time to run on the executor
    assert not await Turn.objects.filter(table=table).aexists()
    assert (await Seat.objects.aget(table=table, index=0)).kind == Seat.Kind.HUMAN
    assert "check_deadline" not in executor.stats.ran
    assert "check_deadline" not in stream_names()


def test_a_deadline_of_zero_is_never_due(settings) -> None:
    settings.TABLE_SWEEP_SECONDS = 0.0
    table = person_table("session-a", turn_deadline_seconds=0)
    assert table.turn_deadline() is None
    assert driver.check_deadline(table.pk, 0) == "no deadline"
    driver.sweep()
    driver.tick(table.pk)
    assert not Turn.objects.filter(table=table).exists()


# 1b. Heartbeats do not become tasks ----------------------------------------------------------


async def test_many_heartbeats_send_at_most_one_step_per_step(stream: None) -> None:
    key = await make_session()
    table = await sync_to_async(person_table)(key, turn_deadline_seconds=30)
    drop_stream()
    # One socket's burst is cut by its rate limit; several sockets' ticks by the job's lease.
    for _ in range(10):
        await connect_and_beat(table.pk, key, beats=50)
    sent = await sync_to_async(stream_names)()
    assert sent.count("check_deadline") <= 1
    assert len(sent) <= 1


# 2. An agent's turn: on the server loop and on a worker --------------------------------------


def agent_table(seed: int) -> Table:
    return services.create_table("twenty-questions", None, [QUESTIONER, ORACLE], seed=seed)


def finished_cleanly(table: Table) -> bool:
    snap = services.table_state(table.pk)
    seqs = list(Turn.objects.filter(table=table).values_list("seq", flat=True))
    return snap.is_over and seqs == list(range(len(seqs)))


def test_agents_play_a_table_to_the_end_inline() -> None:
    table = agent_table(seed=3)  # no server loop, eager: turns run inline
    assert finished_cleanly(table)


async def test_agents_play_a_table_to_the_end_on_the_server_loop() -> None:
    table = await sync_to_async(agent_table)(seed=3)

    def finished_or_ticked() -> bool:
        """SQLite's in-memory test database refuses a read while a turn is written in another
        thread ("table is locked", no waiting), and a turn whose write was refused so is lost:
        the check waits, and ticks the table as a sweep would, so the lost turn is sent again."""
        try:
            if finished_cleanly(table):
                return True
            driver.tick(table.pk)
        except OperationalError:
            pass
        return False

    assert await await_until(finished_or_ticked)


async def test_agents_vote_to_the_end_of_an_undercover_table_on_the_server_loop() -> None:
    """A vote's ballots are one step (cast_ballots), asked at once: on the server's loop too."""
    seats = [{"kind": "agent", "agent_spec": "offline:kb"}] * 5
    table = await sync_to_async(services.create_table)("undercover", None, seats, seed=4)

    def finished_or_ticked() -> bool:
        try:
            if finished_cleanly(table):
                return True
            driver.tick(table.pk)
        except OperationalError:
            pass
        return False

    assert await await_until(finished_or_ticked)
    votes = await Turn.objects.filter(table=table, event__type="vote").acount()
    assert votes >= 5


def test_agents_play_a_table_to_the_end_on_an_executor(executor: steps.Executor) -> None:
    table = agent_table(seed=3)
    assert wait_until(lambda: finished_cleanly(table))
    assert executor.stats.ran["take_agent_turn"] >= Turn.objects.filter(table=table).count() // 2


# 3. A lost job: its lease lapses and the sweep schedules it again ----------------------------


def test_the_sweep_reschedules_an_agent_turn_whose_step_was_lost(
    stream: None, settings, request
) -> None:
    settings.TABLE_JOB_LEASE_SECONDS = 1
    settings.TABLE_SWEEP_SECONDS = 0.0
    table = agent_table(seed=5)
    assert stream_names() == ["take_agent_turn"]
    drop_stream()  # the step dies with its executor before anyone ran it
    assert driver.sweep() == {}  # its lease still stands: nothing is sent twice
    time.sleep(1.1)
    assert driver.sweep() == {"agent turn scheduled": 1}
    assert stream_names() == ["take_agent_turn"]
    if connection.vendor == "sqlite":
        return  # see the executor fixture
    request.getfixturevalue("executor")
    assert wait_until(lambda: finished_cleanly(table))


async def test_a_move_whose_next_step_cannot_be_scheduled_keeps_its_socket(
    stream: None, settings, caplog
) -> None:
    """Redis out of reach (past the pools' retries) when a person's move schedules the oracle's
    answer: the move is committed, the socket stays open (it closed with 1011 before), and the
    next heartbeat after Redis is back sends the answer's task."""
    caplog.set_level(logging.WARNING, logger="studyapp.tables.scheduling")  # a worker set ERROR
    key = await make_session()
    table = await sync_to_async(person_table)(key)
    communicator = socket(table.pk, key)
    assert (await communicator.connect())[0]
    await communicator.receive_from(timeout=5)
    default = settings.CACHES["default"]
    settings.REDIS_RETRIES = 0
    settings.CACHES = {
        "default": {"BACKEND": "studyapp.cache.RedisCache", "LOCATION": "redis://127.0.0.1:1/0"}
    }
    await communicator.send_json_to({"type": "question", "text": "Is it alive?"})
    assert 'data-seq="1"' in await communicator.receive_from(timeout=5)
    # the board goes out before the next step is scheduled: wait for the scheduler's word
    assert await await_until(lambda: "take_agent_turn" in caplog.text), caplog.text
    assert "not scheduled" in caplog.text
    assert await Turn.objects.filter(table=table).acount() == 1
    settings.CACHES = {"default": default}
    assert await sync_to_async(stream_names)() == []
    await communicator.send_json_to({"type": "heartbeat"})
    assert await await_until(lambda: stream_names() == ["take_agent_turn"])
    assert await communicator.receive_nothing(timeout=0.2)  # still open: no close frame
    await communicator.disconnect()


def test_a_second_copy_of_a_running_job_does_nothing() -> None:
    lease = scheduling.Lease("tables:job:test:1")
    assert lease.claim()
    assert tasks.take_agent_turn(0, 0, "tables:job:test:1") == "running elsewhere"
    lease.release()
    assert cache.get("tables:job:test:1") is None


# Only the sweep drops a person idle past the limit, so these show that it runs.


async def test_the_embedded_server_sweeps_on_its_own_loop(settings) -> None:
    settings.TABLE_SWEEP_SECONDS = 0.2
    key = await make_session()
    table = await sync_to_async(person_table)(
        key, turn_deadline_seconds=0, idle_limit_seconds=1, dropout="end"
    )
    await connect_and_beat(table.pk, key, beats=1)
    ended = await await_until(
        lambda: Table.objects.get(pk=table.pk).status == Table.Status.ABORTED, 10
    )
    assert ended


def test_celery_beat_sweeps_with_the_same_function(worker: list[str], settings) -> None:
    from studyapp.tables.tasks import sweep_tables

    settings.TABLE_SWEEP_SECONDS = 0.0
    table = person_table("session-a", turn_deadline_seconds=0, idle_limit_seconds=1, dropout="end")
    time.sleep(1.1)
    sweep_tables.delay()
    assert wait_until(lambda: Table.objects.get(pk=table.pk).status == Table.Status.ABORTED)


# The sweep leaves alone a quiet table that only people can move, until something can fall due.


def rebuilds_in(sweep_once: object) -> int:
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as queries:
        sweep_once()
    return sum('FROM "tables_turn"' in q["sql"] and "ORDER BY" in q["sql"] for q in queries)


def test_a_quiet_table_waiting_on_a_person_is_rebuilt_once_not_every_sweep(settings) -> None:
    settings.TABLE_SWEEP_SECONDS = 0.0
    table = person_table("session-a", turn_deadline_seconds=0)  # no deadline, no idle limit
    assert rebuilds_in(driver.sweep) == 1
    assert rebuilds_in(driver.sweep) == 0  # settled: nothing can fall due without a turn
    services.submit(table.pk, 0, {"type": "question", "text": "Is it alive?"})  # a new turn
    services.submit(table.pk, 0, {"type": "question", "text": "Is it red?"})
    assert rebuilds_in(driver.sweep) == 1


def test_an_idle_limit_is_still_applied_to_a_settled_table(settings) -> None:
    settings.TABLE_SWEEP_SECONDS = 0.0
    table = person_table("session-a", turn_deadline_seconds=0, idle_limit_seconds=2, dropout="end")
    driver.sweep()
    assert rebuilds_in(driver.sweep) == 0  # settled until the idle limit can fall due
    time.sleep(2.1)
    driver.sweep()
    assert Table.objects.get(pk=table.pk).status == Table.Status.ABORTED


def test_a_table_waiting_on_an_agent_is_never_settled(stream: None, settings) -> None:
    settings.TABLE_SWEEP_SECONDS = 0.0
    settings.TABLE_JOB_LEASE_SECONDS = 1
    agent_table(seed=6)
    drop_stream()
    assert rebuilds_in(driver.sweep) == 1  # the lease stands: nothing sent, but not settled
    assert rebuilds_in(driver.sweep) == 1


# The socket's own limits (the same on both paths) ----------------------------------------------


async def test_a_socket_that_floods_moves_is_told_to_slow_down() -> None:
    from studyapp.tables.socket_limits import MOVE_BURST, TOO_FAST

    key = await make_session()
    table = await sync_to_async(person_table)(key, turn_deadline_seconds=0)
    communicator = socket(table.pk, key)
    await communicator.connect()
    await communicator.receive_from(timeout=5)
    for n in range(MOVE_BURST + 5):
        await communicator.send_json_to({"type": "question", "text": f"Is it alive? {n}"})
    frames = []
    while not await communicator.receive_nothing(timeout=0.5):
        frames.append(await communicator.receive_from(timeout=5))
    await communicator.disconnect()
    assert sum(str(TOO_FAST) in frame for frame in frames) >= 4
    questions = Turn.objects.filter(table=table, event__type="question")
    assert 1 <= await questions.acount() <= MOVE_BURST
