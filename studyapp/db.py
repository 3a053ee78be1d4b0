"""Database connections as the site's processes use them: the pool each process sizes for itself,
a forked process that leaves its parent's connections alone, and transient errors told apart.

PostgreSQL connections come from one psycopg pool per process (settings: ``DB_POOL_SIZE``);
a thread takes one for a request or a database call and gives it back at the end. This module
only adjusts that pool: Celery sizes it per process kind (:func:`size_pool`), and a forked child
(a Celery pool process, an export's second process) starts with no pool of its own rather than
sharing its parent's sockets (:func:`forget_inherited_connections`).
"""

from __future__ import annotations

import contextlib
import functools
import os
import select
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from django.db import InterfaceError, OperationalError, connections
from psycopg_pool import ConnectionPool

# Errors that say the database could not be reached or the connection broke, not that a query
# was wrong: a read may be tried again on a fresh connection.
TRANSIENT = (OperationalError, InterfaceError)

# What a forked child inherited, kept referenced so that it is never garbage collected: freeing a
# psycopg connection closes it, and libpq's goodbye on a socket the parent still uses would end
# the parent's session on the server.
_inherited: list[Any] = []


def pool_options() -> dict[str, Any] | None:
    """This process's pool settings (the same dict Django reads when it makes the pool), or None
    when the database has no pool (SQLite, DB_POOL_SIZE=0)."""
    from django.conf import settings

    return settings.DATABASES["default"].get("OPTIONS", {}).get("pool") or None


def size_pool(max_size: int) -> None:
    """Let this process hold at most ``max_size`` connections: Celery's worker and beat signals
    call it before the process's first query. A process that already has its pool keeps it as it
    is (a worker started inside a running process, as the tests do)."""
    options = pool_options()
    backend = sys.modules.get("django.db.backends.postgresql.base")
    if options is None or (backend and backend.DatabaseWrapper._connection_pools.get("default")):
        return
    options["max_size"] = max_size
    options["min_size"] = min(options.get("min_size", 0), max_size)


def forget_inherited_connections() -> None:
    """In a freshly forked child: drop (without closing) the connections and pools the parent
    made, so that the child opens its own. The pool's threads did not survive the fork, and its
    idle connections are the parent's sockets."""
    backend = sys.modules.get("django.db.backends.postgresql.base")
    if backend is None:
        return
    pools = backend.DatabaseWrapper._connection_pools
    if pools:
        _inherited.append(dict(pools))
        pools.clear()
    for conn in connections.all(initialized_only=True):
        if conn.vendor == "postgresql" and conn.connection is not None:
            _inherited.append(conn.connection)
            conn.connection = None


os.register_at_fork(after_in_child=forget_inherited_connections)


def is_pool_timeout(error: BaseException) -> bool:
    """Whether ``error`` is a wait for a pooled connection that ran out (the process is busy, the
    database may be fine). A page's request, which waited the whole pool timeout, is not tried
    again; a socket's short wait (DB_SOCKET_WAIT) is, and only such a move is, since it wrote
    nothing (studyapp.tables.socket_db)."""
    cause = error.__cause__
    return type(cause).__name__ == "PoolTimeout"


_waits = threading.local()


@contextlib.contextmanager
def pool_wait(seconds: float | None) -> Iterator[None]:
    """Meanwhile, a connection this thread takes from the pool is waited for at most ``seconds``
    (the site's backend, studyapp.postgres, reads it), not the pool's ``DB_POOL_TIMEOUT``: for a
    call that is tried again after a short pause (a socket's read) rather than left to wait.
    None: the pool's own wait."""
    before = getattr(_waits, "seconds", None)
    _waits.seconds = seconds
    try:
        yield
    finally:
        _waits.seconds = before


def current_pool_wait() -> float | None:
    """This thread's :func:`pool_wait`, or None."""
    return getattr(_waits, "seconds", None)


def returning_connections(func: Callable[..., Any]) -> Callable[..., Any]:
    """``func`` that gives this thread's database connections back (to the pool) when it is
    done, as Django does at the end of a request. For functions run through ``sync_to_async``:
    asgiref 3.13 runs them with the caller's context-local storage, so Channels'
    ``database_sync_to_async``, which closes old connections outside that context, misses the
    connection the function used and leaves it checked out of the pool for good."""

    @functools.wraps(func)
    def returning(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        finally:
            for conn in connections.all(initialized_only=True):
                if not conn.in_atomic_block:  # a caller's transaction (a test's) owns it
                    conn.close_if_unusable_or_obsolete()

    return returning


def quiet(raw: Any) -> bool:
    """Whether an idle psycopg connection is usable as far as can be told without a round trip:
    open, not known broken, and nothing from the server waiting on its socket. An idle session
    hears from PostgreSQL only when something happened to it: the server ending it (a restart,
    ``pg_terminate_backend``, an idle timeout) sends an error and closes the socket, which then
    polls readable; a notice is harmless but is read by the round trip (:func:`usable`)."""
    if raw.closed or raw.broken:
        return False
    poller = select.poll()
    poller.register(raw.fileno(), select.POLLIN | select.POLLERR | select.POLLHUP)
    return not poller.poll(0)


def usable(raw: Any) -> bool:
    """Whether an idle pooled connection may be handed out: :func:`quiet`, or else psycopg_pool's
    own check (an empty query, which reads what the server sent) passes. The pool's check run on
    every checkout was a round trip per request, socket call and task (2 to 4% of daphne's and
    the worker's CPU on ``benchmarks/ws_load.py --mode study``); this one costs a ``poll``."""
    if quiet(raw):
        return True
    if raw.closed:
        return False
    try:
        ConnectionPool.check_connection(raw)
    except Exception:
        return False
    return True


# How long a Celery pool process keeps one pooled connection from task to task (between_tasks).
KEEP_SECONDS = 60.0


def between_tasks() -> None:
    """Between two tasks of a Celery worker process, what Django does between two requests, with
    one difference: a pooled PostgreSQL connection that is still good is kept for the next task
    rather than given back to the pool and taken again (a pool process runs one task at a time;
    giving back, taking out and checking cost about a tenth of an agent turn's CPU). It is given
    back, to be checked at its next checkout, when a query of the task failed, when the task left
    its autocommit changed, when the server sent something while it sat idle (the server ended
    the session: :func:`quiet`), or after ``KEEP_SECONDS`` (the pool's ``max_lifetime`` can then
    retire it). Everything else (SQLite, no pool) is Django's ``close_if_unusable_or_obsolete``."""
    for conn in connections.all(initialized_only=True):
        if conn.in_atomic_block:  # an eager task inside its caller's transaction
            continue
        if not kept(conn):
            conn.close_if_unusable_or_obsolete()


def kept(conn: Any) -> bool:
    """Whether :func:`between_tasks` keeps ``conn``. With the pool, Django's ``CONN_MAX_AGE`` is
    0, so ``close_at`` is the moment the connection was taken from the pool."""
    raw = conn.connection
    return bool(
        raw is not None
        and conn.vendor == "postgresql"
        and conn.settings_dict.get("OPTIONS", {}).get("pool")
        and not conn.errors_occurred
        and conn.get_autocommit() == conn.settings_dict["AUTOCOMMIT"]
        and conn.close_at is not None
        and time.monotonic() - conn.close_at < KEEP_SECONDS
        and quiet(raw)
    )


# --- Who may take the pool's last connections ------------------------------------------------
#
# A daphne process serves pages and its tables' sockets from one pool. A burst of arrivals (150
# people opening the study link in 3 s) would otherwise hold every connection with page views,
# and a seated player's move, which waits only DB_SOCKET_WAIT for one, failed to save. So page
# views hold at most the pool less ``DB_POOL_SOCKETS`` connections at once (a page past that
# waits for a page's connection, and after DB_POOL_TIMEOUT gets the 503 page that says to try
# again in a few seconds), a socket's reads at most the pool less one, and a move's commit may
# take any: moves never wait behind pages or reads.

PAGE, READ, MOVE = "page", "read", "move"
_work = threading.local()


@contextlib.contextmanager
def working_on(kind: str) -> Iterator[None]:
    """Meanwhile, connections this thread takes count against ``kind``'s share of the pool
    (:data:`PAGE`, :data:`READ`; a :data:`MOVE` has no limit but the pool's)."""
    before = getattr(_work, "kind", None)
    _work.kind = kind
    try:
        yield
    finally:
        _work.kind = before


class Share:
    """At most ``size`` of this process's pooled connections held at once by one kind of work."""

    def __init__(self, kind: str, size: int) -> None:
        self.kind = kind
        self.size = size
        self.slots = threading.BoundedSemaphore(size)

    def take(self, wait: float) -> None:
        from psycopg_pool import PoolTimeout

        if not self.slots.acquire(timeout=wait):
            # a wait for a pooled connection that ran out, as the pool's own (is_pool_timeout)
            raise PoolTimeout(f"no connection of the {self.kind}s' share free after {wait:.2f} sec")

    def give_back(self) -> None:
        with contextlib.suppress(ValueError):  # a share made anew (a fork) since it was taken
            self.slots.release()


_shares: dict[tuple[str, int], Share] = {}
_shares_lock = threading.Lock()


def current_share() -> Share | None:
    """The share this thread's next pooled connection counts against, or None (no limit)."""
    from django.conf import settings

    kind = getattr(_work, "kind", None)
    options = pool_options()
    if kind not in (PAGE, READ) or options is None:
        return None
    pool = int(options["max_size"])
    size = max(1, pool - (settings.DB_POOL_SOCKETS if kind == PAGE else 1))
    if size >= pool:
        return None
    with _shares_lock:
        share = _shares.get((kind, pool))
        if share is None:
            share = _shares[(kind, pool)] = Share(kind, size)
    return share


def _forget_shares() -> None:
    _shares.clear()


os.register_at_fork(after_in_child=_forget_shares)
