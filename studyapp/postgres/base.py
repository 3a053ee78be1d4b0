"""Django's PostgreSQL backend (psycopg 3, its connection pool) with one change: a thread inside
:func:`studyapp.db.pool_wait` waits at most that long for a pooled connection instead of the
pool's own ``timeout`` (``DB_POOL_TIMEOUT``). A table socket's reads use it (``DB_SOCKET_WAIT``):
while the database is away a read gives up in a second or two and is tried again, rather than
holding its socket for the pool's full wait (studyapp.tables.socket_db). Settings name this
backend (``ENGINE``) only when the pool is on; everything else is Django's."""

from __future__ import annotations

from typing import Any

from django.db.backends.postgresql import base

from studyapp.db import current_pool_wait


class ShortWait:
    """The process's pool as one thread sees it: ``getconn`` waits at most ``timeout``; every
    other attribute is the pool's own."""

    def __init__(self, pool: Any, timeout: float) -> None:
        self._pool = pool
        self._timeout = timeout

    def getconn(self, timeout: float | None = None) -> Any:
        return self._pool.getconn(timeout=self._timeout if timeout is None else timeout)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._pool, name)


class DatabaseWrapper(base.DatabaseWrapper):
    @property
    def pool(self) -> Any:
        pool = super().pool
        wait = current_pool_wait()
        return pool if pool is None or wait is None else ShortWait(pool, wait)
