"""Django's PostgreSQL backend (psycopg 3, its connection pool) with two changes to how a
connection is taken from the pool:

- a thread inside :func:`studyapp.db.pool_wait` waits at most that long for a pooled connection
  instead of the pool's own ``timeout`` (``DB_POOL_TIMEOUT``). A table socket's reads use it
  (``DB_SOCKET_WAIT``): while the database is away a read gives up in a second or two and is tried
  again, rather than holding its socket for the pool's full wait (studyapp.tables.socket_db);
- an idle connection is checked by :func:`studyapp.db.usable` (a ``poll`` of its socket, and the
  pool's round trip only when the server sent something) rather than by a round trip on every
  checkout (Django's ``CONN_HEALTH_CHECKS`` with the pool; settings turn that off here). A
  connection the server ended (a restart) is thrown away and another taken, as before.

- page views and socket reads wait for a place in their share of the pool first
  (:func:`studyapp.db.current_share`), so a burst of pages never takes the connections a move
  needs.

Settings name this backend (``ENGINE``) only when the pool is on; everything else is Django's."""

from __future__ import annotations

from typing import Any

from django.db.backends.postgresql import base

from studyapp.db import Share, current_pool_wait, current_share, usable


class CheckedPool:
    """The process's pool as one thread sees it: ``getconn`` waits at most ``timeout`` (None: the
    pool's own), first for a place in its kind of work's share of the pool
    (:func:`studyapp.db.current_share`: page views and socket reads leave the last connections
    to moves), and hands out only a :func:`~studyapp.db.usable` connection; every other
    attribute is the pool's own."""

    def __init__(self, pool: Any, timeout: float | None, wrapper: DatabaseWrapper) -> None:
        self._pool = pool
        self._timeout = timeout
        self._wrapper = wrapper

    def getconn(self, timeout: float | None = None) -> Any:
        wait = self._timeout if timeout is None else timeout
        share = current_share()
        if share is not None:
            share.take(self._pool.timeout if wait is None else wait)
        try:
            conn = self._checked(wait)
        except BaseException:
            if share is not None:
                share.give_back()
            raise
        self._wrapper.share = share  # given back with the connection (DatabaseWrapper._close)
        return conn

    def _checked(self, wait: float | None) -> Any:
        attempt = 0
        while True:
            conn = self._pool.getconn(timeout=wait)
            # a pool of dead sessions is replaced one by one; past its size, the query says why
            if attempt >= self._pool.max_size or usable(conn):
                return conn
            conn.close()
            self._pool.putconn(conn)  # a closed connection is thrown away, and a new one made
            attempt += 1

    def __getattr__(self, name: str) -> Any:
        return getattr(self._pool, name)


class DatabaseWrapper(base.DatabaseWrapper):
    share: Share | None = None  # the share of the pool the connection it holds counts against

    @property
    def pool(self) -> Any:
        pool = super().pool
        return None if pool is None else CheckedPool(pool, current_pool_wait(), self)

    def _close(self) -> None:
        try:
            super()._close()
        finally:
            share, self.share = self.share, None
            if share is not None:
                share.give_back()
