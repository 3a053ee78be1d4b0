"""An executor process outlives anything Redis does to its stream (studyapp/steps/consumer.py):
a ``FLUSHDB`` while it is blocked reading, the stream's key deleted, its consumer group destroyed,
and Redis restarted without its data. Each time it makes the stream and group again, writes one
line saying so, lets the step it holds finish, and runs the steps sent afterwards. Real Redis:
the site's (this test run's own database) and, for the restart, a redis-server of the test's
own."""

from __future__ import annotations

import asyncio
import logging
import shutil
import subprocess
import threading
import time
from collections.abc import Callable, Iterator

import pytest
import redis as redis_py

from studyapp import steps
from tests.e2e.site import free_port

RAN: list[str] = []


async def nap(label: str, seconds: float) -> str:
    await asyncio.sleep(seconds)
    RAN.append(label)
    return "done"


def nap_inline(label: str, seconds: float) -> str:
    RAN.append(label)
    return "done"


steps.register("test_outlive_nap", nap, nap_inline)


class Running:
    """``steps.serve`` on a loop of its own in a thread, as ``manage.py run_steps`` runs it."""

    def __init__(self, name: str) -> None:
        self.loop = asyncio.new_event_loop()
        self.stop = asyncio.Event()
        self.executor = steps.Executor(self.loop, 100)
        self.failure: BaseException | None = None
        self.thread = threading.Thread(target=self._run, args=(name,), daemon=True)
        self.thread.start()

    def _run(self, name: str) -> None:
        try:
            self.loop.run_until_complete(steps.serve(self.stop, name=name, executor=self.executor))
        except BaseException as err:  # the process would have exited
            self.failure = err

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.stop.set)
        self.thread.join(15)


def wait_for(check: Callable[[], bool], seconds: float = 10.0) -> bool:
    deadline = time.time() + seconds
    while time.time() < deadline:
        if check():
            return True
        time.sleep(0.05)
    return check()


@pytest.fixture
def stream(settings) -> Iterator[redis_py.Redis]:
    settings.CELERY_TASK_ALWAYS_EAGER = False
    client = steps.redis()
    if client is None:
        pytest.skip("the steps' stream needs Redis (REDIS_URL), as in production")
    RAN.clear()
    client.delete(steps.stream_key())
    yield client
    client.delete(steps.stream_key())
    RAN.clear()


def remade_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "made again" in r.getMessage()]


def outlives(what: Callable[[redis_py.Redis, str], object], stream, caplog) -> None:
    caplog.set_level(logging.WARNING, logger="studyapp.steps")
    running = Running("outliving")
    try:
        assert steps.enqueue("test_outlive_nap", ("before", 0.0))
        assert wait_for(lambda: RAN == ["before"])
        assert steps.enqueue("test_outlive_nap", ("in hand", 2.0))
        assert wait_for(lambda: running.executor.stats.working == 1)
        time.sleep(0.3)  # blocked on XREADGROUP again
        what(stream, steps.stream_key())
        time.sleep(1.5)
        assert running.thread.is_alive(), running.failure
        assert steps.enqueue("test_outlive_nap", ("after", 0.0))
        assert wait_for(lambda: sorted(RAN) == ["after", "before", "in hand"]), RAN
        assert running.thread.is_alive(), running.failure
        assert len(remade_lines(caplog)) == 1, remade_lines(caplog)
        assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
    finally:
        running.close()
    assert running.failure is None


def test_it_outlives_a_flushdb_while_it_is_blocked_reading(stream, caplog) -> None:
    outlives(lambda client, key: client.flushdb(), stream, caplog)


def test_it_outlives_its_streams_key_deleted(stream, caplog) -> None:
    outlives(lambda client, key: client.delete(key), stream, caplog)


def test_it_outlives_its_consumer_group_destroyed(stream, caplog) -> None:
    outlives(lambda client, key: client.xgroup_destroy(key, steps.GROUP), stream, caplog)


# Redis restarted with nothing in it -------------------------------------------------------------


def start_redis(port: int) -> subprocess.Popen:
    server = subprocess.Popen(
        [
            shutil.which("redis-server") or "redis-server",
            "--port",
            str(port),
            "--save",
            "",
            "--appendonly",
            "no",
            "--bind",
            "127.0.0.1",
        ],
        stdout=subprocess.DEVNULL,
    )
    client = redis_py.Redis(port=port)
    assert wait_for(lambda: _answers(client), 10)
    return server


def _answers(client: redis_py.Redis) -> bool:
    try:
        return bool(client.ping())
    except redis_py.ConnectionError:
        return False


def add(client: redis_py.Redis, label: str, seconds: float) -> None:
    client.xadd(
        steps.stream_key(),
        {
            "name": "test_outlive_nap",
            "args": f'["{label}", {seconds}]',
            "kwargs": "{}",
            "due": repr(time.time()),
        },
    )


def test_it_outlives_redis_restarted_empty(stream, settings, caplog) -> None:
    if shutil.which("redis-server") is None:
        pytest.skip("needs redis-server to start a Redis of its own")
    caplog.set_level(logging.WARNING, logger="studyapp.steps")
    port = free_port()
    settings.REDIS_URL = f"redis://127.0.0.1:{port}/0"
    server = start_redis(port)
    own = redis_py.Redis(port=port)
    running = Running("restarted")
    try:
        assert wait_for(lambda: own.exists(steps.stream_key()) == 1)
        add(own, "before", 0.0)
        assert wait_for(lambda: RAN == ["before"])
        add(own, "in hand", 3.0)
        assert wait_for(lambda: running.executor.stats.working == 1)
        server.kill()
        server.wait(10)
        time.sleep(1.0)
        server = start_redis(port)  # empty: no stream, no group
        assert wait_for(lambda: own.exists(steps.stream_key()) == 1, 15)  # made again
        add(own, "after", 0.0)
        assert wait_for(lambda: sorted(RAN) == ["after", "before", "in hand"], 15), RAN
        assert running.thread.is_alive(), running.failure
        assert len(remade_lines(caplog)) == 1, remade_lines(caplog)
    finally:
        running.close()
        server.kill()
        server.wait(10)
    assert running.failure is None
