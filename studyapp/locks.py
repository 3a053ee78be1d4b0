"""Named locks across processes, for work that must never run twice at once (paying a study's
people). On PostgreSQL a session-level advisory lock, which the server frees when the session
ends (a killed process holds nothing); on SQLite, whose database is one file on one machine, an
exclusive ``flock`` on a file beside the database, which the kernel frees with the process.

A lock is held for a whole run while the run commits its steps one by one (so what it recorded
survives a crash), hence a session lock and not a row lock inside one transaction.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from django.db import connection


class LockLost(Exception):
    """The lock's database session ended (the database restarted or cut the connection), so
    another run may hold it now: whatever was about to be done must not be."""


def _key(name: str) -> int:
    """A signed 64-bit key for ``pg_advisory_lock`` from the lock's name."""
    digest = hashlib.blake2b(name.encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


@contextlib.contextmanager
def exclusive(
    name: str, *, wait: float = 600.0, on_wait: Callable[[], None] | None = None
) -> Iterator[Callable[[], None]]:
    """Hold the lock ``name`` for the ``with`` block, waiting up to ``wait`` seconds for another
    holder to finish (``on_wait`` is called once when it has to wait); TimeoutError after that.
    Yields a check to call before each step that must not run unlocked: it raises
    :class:`LockLost` if the lock went with its database session."""
    if connection.vendor == "postgresql":
        with _advisory(name, wait, on_wait) as check:
            yield check
    else:
        with _file_lock(name, wait, on_wait) as check:
            yield check


def _poll(try_once: Callable[[], bool], wait: float, on_wait: Callable[[], None] | None) -> None:
    deadline = time.monotonic() + wait
    told = False
    while not try_once():
        if time.monotonic() >= deadline:
            raise TimeoutError("another run holds the lock")
        if not told and on_wait is not None:
            on_wait()
            told = True
        time.sleep(0.2)


@contextlib.contextmanager
def _advisory(
    name: str, wait: float, on_wait: Callable[[], None] | None
) -> Iterator[Callable[[], None]]:
    key = _key(name)
    connection.ensure_connection()
    raw = connection.connection  # the session that holds the lock, for the whole run

    def try_once() -> bool:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_try_advisory_lock(%s)", [key])
            return bool(cursor.fetchone()[0])

    def check() -> None:
        if connection.connection is not raw:
            raise LockLost(f"the database session holding the lock {name!r} ended")
        try:
            with connection.cursor() as cursor:
                cursor.execute(
                    "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted "
                    "AND pid = pg_backend_pid() AND objsubid = 1 "
                    "AND classid = ((%s::bigint >> 32) & 4294967295)::oid "
                    "AND objid = (%s::bigint & 4294967295)::oid",
                    [key, key],
                )
                held = cursor.fetchone()[0]
        except Exception as err:
            raise LockLost(f"could not confirm the lock {name!r}: {err}") from err
        if not held:
            raise LockLost(f"the lock {name!r} is no longer held")

    _poll(try_once, wait, on_wait)
    try:
        yield check
    finally:
        if connection.connection is raw:
            with contextlib.suppress(Exception), connection.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_unlock(%s)", [key])


@contextlib.contextmanager
def _file_lock(
    name: str, wait: float, on_wait: Callable[[], None] | None
) -> Iterator[Callable[[], None]]:
    database = Path(str(connection.settings_dict["NAME"]))
    folder = database.parent if database.parent.is_dir() else Path(".")
    safe = hashlib.sha256(name.encode()).hexdigest()[:16]
    path = folder / f"{database.name}.lock-{safe}"
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)

    def try_once() -> bool:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    try:
        _poll(try_once, wait, on_wait)
        yield lambda: None  # the kernel keeps it while the process lives
    finally:
        os.close(fd)  # closing the file frees the lock
