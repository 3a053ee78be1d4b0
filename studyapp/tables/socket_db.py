"""How a table socket calls the database (studyapp.tables.consumers; the socket's session load
in studyapp.asgi too): each call one ``database_sync_to_async`` method with a short wait for a
pooled connection, reads tried again through a brief outage, a move only where it cannot have
been written."""

from __future__ import annotations

import functools
from typing import Any

from channels.db import database_sync_to_async
from django.conf import settings
from django.db import connections

from studyapp.db import (
    MOVE,
    READ,
    TRANSIENT,
    is_pool_timeout,
    pool_wait,
    returning_connections,
    working_on,
)
from studyapp.retry import retry_async


def db_call(func: Any) -> Any:
    """``database_sync_to_async``: on PostgreSQL in a thread pool, so many sockets' moves overlap
    their database waits; on SQLite in the one sync thread (a file database takes one writer)."""
    parallel = connections["default"].vendor == "postgresql"
    return database_sync_to_async(returning_connections(func), thread_sensitive=not parallel)


def briefly(func: Any, kind: str) -> Any:
    """``func`` waiting at most ``DB_SOCKET_WAIT`` for a pooled connection (studyapp.db.pool_wait),
    not the pool's ``DB_POOL_TIMEOUT``, out of ``kind``'s share of the pool (a read's leaves the
    last connection to moves, and pages never hold the sockets' share: studyapp.db.working_on)."""

    @functools.wraps(func)
    def waiting_briefly(*args: Any, **kwargs: Any) -> Any:
        with pool_wait(settings.DB_SOCKET_WAIT), working_on(kind):
            return func(*args, **kwargs)

    return waiting_briefly


def db_read(func: Any) -> Any:
    """:func:`db_call` for a call that may safely run twice (a read, or marking a seat
    connected): it waits at most ``DB_SOCKET_WAIT`` for a pooled connection (not the pool's
    ``DB_POOL_TIMEOUT``), and a transient database error, that short wait's end included, is tried
    again, on a fresh connection (the failed one goes back to the pool, which drops it), after
    each of the database pauses (:mod:`studyapp.retry`). So a database that is away costs a
    socket a few seconds before its person is told, not the pool's full wait per read. Not for a
    move: a move whose commit failed may have been written (:func:`db_move`)."""
    call = db_call(briefly(func, READ))

    async def retrying(*args: Any, **kwargs: Any) -> Any:
        return await retry_async(lambda: call(*args, **kwargs), retry_on=TRANSIENT)

    return retrying


def db_move(func: Any) -> Any:
    """:func:`db_call` for a move: the same short wait for a pooled connection, and a wait that
    ends is tried again like a read (the move never reached the database); any other database
    error is the caller's to look into (:meth:`TableConsumer.move_failed`)."""
    call = db_call(briefly(func, MOVE))

    async def retrying(*args: Any, **kwargs: Any) -> Any:
        return await retry_async(
            lambda: call(*args, **kwargs),
            retry_on=TRANSIENT,
            give_up=lambda err: not is_pool_timeout(err),
        )

    return retrying
