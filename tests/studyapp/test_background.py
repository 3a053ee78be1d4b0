"""studyapp.background: finding the server's loop from its threads, and a loop per thread."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest
from asgiref.sync import sync_to_async

from studyapp.background import call_async, in_server, run_async, server_loop


def test_a_job_that_asks_for_the_loop_while_the_server_stops_is_not_left_waiting() -> None:
    """Shutting down, daphne joins its threads: a sweep still running must get None, not wait
    on a loop that will never run again (it used to, and the server never exited)."""
    loop = asyncio.new_event_loop()
    seen: dict[str, object] = {}
    done = threading.Event()

    def job() -> None:
        seen["while running"] = server_loop() is loop
        loop.call_soon_threadsafe(loop.stop)
        while loop.is_running():
            time.sleep(0.01)
        seen["after stopping"] = server_loop()
        done.set()

    async def request() -> None:  # what the site's ASGI application does for each request
        with in_server():
            await sync_to_async(job, thread_sensitive=False)()

    with pytest.raises(RuntimeError, match="stopped"):
        loop.run_until_complete(request())
    assert done.wait(5), "the job waited on the stopped loop"
    assert seen == {"while running": True, "after stopping": None}
    loop.close()


def test_outside_a_server_there_is_no_loop_and_async_work_runs_on_one_kept_per_thread() -> None:
    """As in a Celery worker: each thread keeps one loop, so clients bound to it are reused.
    Run in threads of the test's own, whose loops it closes (the test runner's thread keeps
    none). The server-thread path (back to the server's loop) is what every socket test uses."""

    async def current() -> asyncio.AbstractEventLoop:
        return asyncio.get_running_loop()

    def in_a_worker_thread(seen: list) -> None:
        assert server_loop() is None
        first = run_async(current())
        seen.append((first, call_async(current)))
        first.close()

    seen: list = []
    for _ in range(2):
        thread = threading.Thread(target=in_a_worker_thread, args=(seen,))
        thread.start()
        thread.join()
    (first, again), (other, _) = seen
    assert again is first  # the same loop for every call in one thread
    assert other is not first  # and another one in another thread
