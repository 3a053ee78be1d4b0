"""Work that must not hold up a request in the embedded mode (no broker, tasks run in-process).

Under daphne a view runs in a sync thread next to the server's event loop, so long work can be
handed to that loop (the table driver's timers) or to a thread of the server process (pipeline
jobs). With no server around (a management command, a test using Django's test client) there is
nothing to return to early, so callers run the work inline and stay deterministic.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any

from asgiref.sync import async_to_sync
from django.db import connections


async def _current_loop() -> asyncio.AbstractEventLoop:
    return asyncio.get_running_loop()


def server_loop() -> asyncio.AbstractEventLoop | None:
    """The event loop of the server this code runs under, if any. From a sync thread started by
    the server (a view, a consumer's database call) ``async_to_sync`` reaches that loop; with no
    server it makes a throwaway loop, which is closed by the time it returns."""
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        pass
    loop = async_to_sync(_current_loop)()
    return loop if loop.is_running() else None


def start_thread(name: str, work: Callable[..., Any], *args: Any) -> threading.Thread:
    """Run ``work(*args)`` in a daemon thread of this process. The thread closes its own database
    connections when done, so finished jobs leave no idle connection behind."""

    def target() -> None:
        try:
            work(*args)
        finally:
            connections.close_all()

    thread = threading.Thread(target=target, name=name, daemon=True)
    thread.start()
    return thread
