"""The Celery app's signal handlers (studyapp/celery.py)."""

from __future__ import annotations

import os
import threading

from celery.signals import worker_process_shutdown, worker_shutdown

from studyapp.background import run_async


def kept_loop() -> object:
    """A loop a worker's thread keeps (run_async), as a task that called a model leaves it."""
    loops: list = []

    async def which() -> None:
        import asyncio

        loops.append(asyncio.get_running_loop())

    thread = threading.Thread(target=lambda: run_async(which()))
    thread.start()
    thread.join()
    return loops[0]


def test_a_worker_process_closes_its_threads_loops_and_clients_when_it_shuts_down() -> None:
    """A prefork pool process leaves by os._exit (no exit hooks run): the shutdown signal closes
    the loops its threads kept, and the model clients on them, first."""
    loop = kept_loop()
    assert not loop.is_closed()
    worker_process_shutdown.send(sender=None, pid=os.getpid(), exitcode=0)
    assert loop.is_closed()


def test_a_worker_closes_them_when_it_shuts_down() -> None:
    loop = kept_loop()
    worker_shutdown.send(sender=None)
    assert loop.is_closed()
