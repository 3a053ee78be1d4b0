"""The executor of real-time steps (studyapp/steps.py): many steps waiting at once on one loop
hold no thread, a step runs when it is due, at most ``limit`` are held, and through the real Redis
stream a dead executor's steps are claimed by a live one and a restarted one takes up its own.
The tables' use of it is tested in tests/studyapp/tables/test_tables_eager_and_celery.py and
tests/production/."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator

import pytest

from studyapp import slots, steps

RAN: list[tuple[str, float]] = []


async def nap(label: str, seconds: float) -> str:
    await asyncio.sleep(seconds)
    RAN.append((label, time.time()))
    return "done"


def nap_inline(label: str, seconds: float) -> str:
    RAN.append((label, time.time()))
    return "done"


steps.register("test_nap", nap, nap_inline)


@pytest.fixture(autouse=True)
def fresh() -> Iterator[None]:
    RAN.clear()
    yield
    RAN.clear()


async def test_a_thousand_steps_wait_at_once_on_one_loop_without_threads() -> None:
    executor = steps.Executor(asyncio.get_running_loop(), 2000)
    threads_before = threading.active_count()
    started = time.time()
    for n in range(1000):
        executor.submit(steps.Step("test_nap", (f"s{n}", 0.5), {}, started + 0.2))
    await asyncio.sleep(0.1)
    assert executor.stats.waiting == 1000  # each sleeping until it is due
    assert threading.active_count() == threads_before
    await asyncio.wait(executor.tasks, timeout=10)
    took = time.time() - started
    assert len(RAN) == 1000
    assert 0.7 <= took < 2.0, took  # 0.2 s until due + 0.5 s of waiting, all at once
    assert min(at for _, at in RAN) >= started + 0.7
    assert executor.stats.ran["test_nap"] == 1000


async def test_an_executor_holds_at_most_its_limit() -> None:
    executor = steps.Executor(asyncio.get_running_loop(), 3)
    for n in range(3):
        executor.submit(steps.Step("test_nap", (f"s{n}", 0.2), {}, 0))
    assert not executor.room.is_set()
    await asyncio.wait(executor.tasks, timeout=5)
    assert executor.room.is_set()


def test_with_no_loop_and_no_broker_a_step_runs_inline_in_order(settings) -> None:
    settings.CELERY_TASK_ALWAYS_EAGER = True
    assert steps.enqueue("test_nap", ("first", 0.0))
    assert [label for label, _ in RAN] == ["first"]
    assert not steps.enqueue("test_nap", ("later", 0.0), delay=30, may_run_now=False)
    with pytest.raises(KeyError):
        steps.enqueue("no_such_step")


# Through the real Redis stream ---------------------------------------------------------------


@pytest.fixture
def stream(settings) -> Iterator[object]:
    settings.CELERY_TASK_ALWAYS_EAGER = False
    client = steps.redis()
    if client is None:
        pytest.skip("the steps' stream needs Redis (REDIS_URL), as in production")
    client.delete(steps.stream_key())
    yield client
    client.delete(steps.stream_key())


def run_executor(name: str, stop: asyncio.Event, executor: steps.Executor) -> threading.Thread:
    thread = threading.Thread(
        target=executor.loop.run_until_complete,
        args=(steps.serve(stop, name=name, executor=executor),),
        daemon=True,
    )
    thread.start()
    return thread


def test_a_dead_executors_steps_are_claimed_and_run_by_a_live_one(stream, settings) -> None:
    settings.STEPS_STALE_SECONDS = 1.5
    client = stream
    key = steps.stream_key()
    client.xgroup_create(key, steps.GROUP, id="0", mkstream=True)
    for n in range(5):
        assert steps.enqueue("test_nap", (f"orphan{n}", 0.0))
    # an executor read them and died before running any: they are pending under its name
    taken = client.xreadgroup(steps.GROUP, "dead-executor", {key: ">"}, count=10)
    assert len(taken[0][1]) == 5
    loop = asyncio.new_event_loop()
    stop = asyncio.Event()
    live = steps.Executor(loop, 100)
    thread = run_executor("live-executor", stop, live)
    try:
        deadline = time.time() + 10
        while len(RAN) < 5 and time.time() < deadline:
            time.sleep(0.1)
        assert sorted(label for label, _ in RAN) == [f"orphan{n}" for n in range(5)]
        assert steps.enqueue("test_nap", ("fresh", 0.0), delay=0.3)
        while len(RAN) < 6 and time.time() < deadline:
            time.sleep(0.1)
        assert RAN[-1][0] == "fresh"
        time.sleep(0.3)
        assert client.xpending(key, steps.GROUP)["pending"] == 0  # acknowledged when done
        assert client.xlen(key) == 0  # and gone from the stream
    finally:
        loop.call_soon_threadsafe(stop.set)
        thread.join(15)
    assert len(RAN) == 6  # each ran once


def test_a_live_executors_waiting_steps_are_not_taken_by_another(stream, settings) -> None:
    settings.STEPS_STALE_SECONDS = 1.5
    loops = [asyncio.new_event_loop() for _ in range(2)]
    stops = [asyncio.Event() for _ in range(2)]
    executors = [steps.Executor(loop, 100) for loop in loops]
    first = run_executor("first", stops[0], executors[0])
    second = None
    try:
        time.sleep(0.5)
        for n in range(4):
            steps.enqueue("test_nap", (f"late{n}", 0.0), delay=4.0)  # longer than the stale time
        time.sleep(1.5)
        assert executors[0].stats.waiting == 4
        second = run_executor("second", stops[1], executors[1])
        time.sleep(4.0)
        assert sorted(label for label, _ in RAN) == [f"late{n}" for n in range(4)]
        assert executors[1].stats.ran["test_nap"] == 0  # kept fresh by the first's heartbeat
    finally:
        for loop, stop in zip(loops, stops, strict=True):
            loop.call_soon_threadsafe(stop.set)
        first.join(15)
        if second is not None:
            second.join(15)


def test_a_restarted_executor_takes_up_its_own_pending_steps_at_once(stream, settings) -> None:
    settings.STEPS_STALE_SECONDS = 60  # no claim from another would come in time
    client = stream
    key = steps.stream_key()
    client.xgroup_create(key, steps.GROUP, id="0", mkstream=True)
    steps.enqueue("test_nap", ("mine", 0.0))
    client.xreadgroup(steps.GROUP, "steps-1", {key: ">"}, count=10)  # then killed
    loop, stop = asyncio.new_event_loop(), asyncio.Event()
    thread = run_executor("steps-1", stop, steps.Executor(loop, 10))
    try:
        deadline = time.time() + 5
        while not RAN and time.time() < deadline:
            time.sleep(0.05)
        assert [label for label, _ in RAN] == ["mine"]
    finally:
        loop.call_soon_threadsafe(stop.set)
        thread.join(15)


# Model slots across processes -----------------------------------------------------------------


async def test_a_models_calls_in_flight_never_exceed_its_site_wide_limit(settings) -> None:
    settings.MODEL_CALL_LIMITS = {"openai:limited": 3}
    settings.MODEL_CALL_LIMIT = 0
    inside, most = 0, 0

    async def call() -> None:
        nonlocal inside, most
        async with slots.model_slot("openai:limited"):
            inside += 1
            most = max(most, inside)
            await asyncio.sleep(0.05)
            inside -= 1

    started = time.monotonic()
    await asyncio.gather(*(call() for _ in range(12)))
    assert most == 3
    assert time.monotonic() - started >= 0.2  # 12 calls, 3 at a time, 0.05 s each
    async with slots.model_slot("openai:unlimited"):  # no limit: no slot, no wait
        pass
    if slots.redis_for_slots() is not None:
        assert slots.held("openai:limited") == 0  # every slot given back
