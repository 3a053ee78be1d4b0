"""One way to try a call again after a failure that passes (a database restarting, a connection
cut): :func:`retry` and :func:`retry_async` run ``call``; when it raises one of ``retry_on``
(and ``give_up`` does not say the error is final), they pause for the next of ``pauses`` seconds
and run it again; after the last pause the error is raised. Only for a call that may safely run
twice (a read, a GET): a write whose commit failed may have been written.

Redis commands are tried again by redis-py's own ``Retry`` (studyapp.cache.redis_resilience) and
model calls by the providers' SDKs; this is for the calls those do not cover.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")

# A database call that fails for a moment: tried again after these pauses (seconds), so about a
# second in all before the person is told (the socket's notice, the 503 page).
DATABASE_PAUSES = (0.2, 0.6)


def never(_: BaseException) -> bool:
    return False


def retry(
    call: Callable[[], T],
    *,
    retry_on: type[BaseException] | tuple[type[BaseException], ...],
    pauses: tuple[float, ...] = DATABASE_PAUSES,
    give_up: Callable[[BaseException], bool] = never,
    before_retry: Callable[[], object] | None = None,
) -> T:
    """``call()``, tried again after each of ``pauses`` while it raises ``retry_on`` (unless
    ``give_up(error)``); ``before_retry`` runs before each pause (to drop a broken connection)."""
    for pause in (*pauses, None):
        try:
            return call()
        except retry_on as err:
            if pause is None or give_up(err):
                raise
            if before_retry is not None:
                before_retry()
            time.sleep(pause)
    raise AssertionError("unreachable")


async def retry_async(
    call: Callable[[], Awaitable[T]],
    *,
    retry_on: type[BaseException] | tuple[type[BaseException], ...],
    pauses: tuple[float, ...] = DATABASE_PAUSES,
    give_up: Callable[[BaseException], bool] = never,
) -> T:
    """:func:`retry` for a coroutine function: the pauses do not hold up the event loop."""
    for pause in (*pauses, None):
        try:
            return await call()
        except retry_on as err:
            if pause is None or give_up(err):
                raise
            await asyncio.sleep(pause)
    raise AssertionError("unreachable")
