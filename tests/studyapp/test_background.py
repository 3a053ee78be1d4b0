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


def test_model_clients_of_the_threads_loops_are_closed_at_exit(llm_server) -> None:
    """A thread of the server (or a worker) keeps its loop, and the SDK clients opened on it, for
    the life of the process. At exit they are closed on their loops: left to the garbage
    collector during the interpreter's shutdown, each logged "Unclosed client session" to a
    stream already closed (the end of every test run)."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    code = (
        "import threading, django; django.setup()\n"
        "from studyapp.background import run_async\n"
        "from games.llm.providers import ProviderConfig, get_provider\n"
        "config = ProviderConfig(base_url=sys.argv[1], api_key='test')\n"
        "provider = get_provider('openai-compatible:m', config)\n"
        "def turn():\n"
        "    text = run_async(provider.complete([{'role': 'user', 'content': 'Hi?'}])).text\n"
        "    print('answered', text)\n"
        "thread = threading.Thread(target=turn, daemon=True)\n"
        "thread.start(); thread.join()\n"
    )
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-c", "import sys\n" + code, llm_server.openai_base_url],
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "studyapp.settings", "PYTHONPATH": str(root)},
        capture_output=True,
        text=True,
        timeout=60,
        cwd=root,
    )
    assert done.returncode == 0, done.stderr
    assert "answered <answer>ok</answer>" in done.stdout
    assert "Unclosed" not in done.stderr and "Error" not in done.stderr, done.stderr
