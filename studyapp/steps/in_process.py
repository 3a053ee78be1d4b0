"""The in-process runner (``make run``: a server, no broker): the same executor on the
server's own loop, fed directly instead of through Redis. The dashboard runs in the same process
and reads its figures directly (:func:`studyapp.steps.status`)."""

from __future__ import annotations

import asyncio
import weakref

from django.conf import settings

from studyapp.steps.executor import SERVER_LOOPS, Executor, Step

EMBEDDED: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Executor] = (
    weakref.WeakKeyDictionary()
)


def local_executor(loop: asyncio.AbstractEventLoop) -> Executor:
    """The embedded server's executor, on its own loop (made on first use)."""
    executor = EMBEDDED.get(loop)
    if executor is None:
        executor = EMBEDDED[loop] = Executor(loop, settings.STEPS_IN_FLIGHT)
        SERVER_LOOPS.add(loop)
    return executor


def submit(loop: asyncio.AbstractEventLoop, step: Step) -> None:
    """Hand ``step`` to the server loop's executor (from any thread)."""
    loop.call_soon_threadsafe(local_executor(loop).submit, step)
