"""Claims on background work and the liveness of whoever holds them: one vocabulary for the
site's three kinds of background work (the tables' jobs, pipeline jobs, the dashboard's analysis).

- **claim**: take the work, so that no second copy runs it; False when someone else holds it;
- **renew** (a heartbeat's **beat**): the holder is alive and still working;
- **release**: done; the work is free again;
- **is_stale**: a holder silent past its limit is gone (its process died): its claim lapses and the
  work may be claimed again.

Two stores, for two kinds of work:

- :class:`Lease`, a key in the shared cache that lapses by itself (the store's expiry), for the
  tables' jobs: many short jobs, each claimed before it is sent (queued) and again when it runs
  (running). On Redis (the cache of every site with a broker) it is redis-py's own ``Lock``
  (``SET NX PX`` to claim, its owner-checked ``reacquire`` and ``release``). The embedded mode's
  cache is Django's in-process locmem cache, with no Redis to hold a lock: there
  :class:`CacheLock` gives the same calls and answers with Django's cache calls under a process
  lock (the locmem cache lives in this one process, so that lock makes each compare-and-set
  atomic across the server's threads). The one step a Lock lacks, turning a queued lease into a
  running one, is its two calls: release the queued token, then claim anew, sent together in one
  pipeline on Redis (:func:`take_over`).
- **rows**, for long work whose state is a database row anyway (a pipeline ``Job``, the
  dashboard's ``AnalysisResult``): claimed by a conditional update (:func:`claim_row`: the row
  still holds the claim stamp the claimer read) that also stamps the row's ``heartbeat_at``;
  kept alive by that stamp, which the holder's :class:`Heartbeat` thread beats
  (:func:`beat_row`); stale when it is older than the limit (:func:`is_stale` for a row in
  hand, :func:`silent` in a query). Every stamp is written explicitly: ``QuerySet.update``
  never sets an ``auto_now`` field, so no claim may rest on one.

The time limits are settings, all here by name: ``TABLE_JOB_LEASE_SECONDS`` (a table job's
lease), ``JOB_HEARTBEAT_SECONDS`` and ``JOB_STALE_SECONDS`` (a pipeline job's heart),
``ANALYSIS_STALE_SECONDS`` (an analysis computation silent this long is started again; it beats
every ``JOB_HEARTBEAT_SECONDS``, or a quarter of its limit when that is shorter).
"""

from __future__ import annotations

import asyncio
import logging
import math
import threading
import time
import uuid
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta
from typing import Any

from django.core.cache import caches
from django.core.cache.backends.redis import RedisCache
from django.db import connection, models
from django.utils import timezone
from redis.exceptions import LockError, LockNotOwnedError, NoScriptError

log = logging.getLogger(__name__)

QUEUED = "queued"  # the token of a lease claimed for a job sent but not yet running

# --- leases in the shared cache --------------------------------------------------------------


class CacheLock:
    """The calls of redis-py's ``Lock`` that :class:`Lease` makes, on a Django cache that is not
    Redis (the embedded mode's locmem cache; see the module for why)."""

    _atomic = threading.Lock()

    def __init__(self, cache: Any, name: str, timeout: float | None) -> None:
        self.cache, self.name, self.timeout = cache, name, timeout
        self.token: str | None = None

    def acquire(self, *, blocking: bool = False, token: str | None = None) -> bool:
        token = token or uuid.uuid4().hex
        with self._atomic:
            if not self.cache.add(self.name, token, self.timeout):
                return False
        self.token = token
        return True

    def reacquire(self) -> bool:
        with self._atomic:
            if self.token is None or self.cache.get(self.name) != self.token:
                raise LockNotOwnedError("Cannot reacquire a lock that's no longer owned")
            self.cache.set(self.name, self.token, self.timeout)
        return True

    def release(self) -> None:
        token, self.token = self.token, None
        if token is None:
            raise LockError("Cannot release a lock that's not owned or is already unlocked.")
        self.do_release(token)

    def do_release(self, expected_token: str) -> None:
        with self._atomic:
            if self.cache.get(self.name) != expected_token:
                raise LockNotOwnedError("Cannot release a lock that's no longer owned")
            self.cache.delete(self.name)


def redis_client(cache: Any) -> Any:
    """The redis-py client behind Django's Redis cache (None for any other cache)."""
    if isinstance(cache, RedisCache):
        return cache._cache.get_client(write=True)
    return None


def make_lock(key: str, timeout: float | None) -> Any:
    """A lock named by ``key`` in the default cache (its prefix and version applied, as the
    cache's own calls do) that lapses ``timeout`` seconds after it is claimed or renewed."""
    cache = caches["default"]
    client = redis_client(cache)
    if client is None:
        return CacheLock(cache, key, timeout)
    return client.lock(cache.make_and_validate_key(key), timeout=timeout, thread_local=False)


def overwrite(key: str, token: str, timeout: float) -> None:
    """Set the lease ``key`` to ``token`` whoever holds it (a job that queues itself again)."""
    cache = caches["default"]
    client = redis_client(cache)
    if client is None:
        with CacheLock._atomic:
            cache.set(key, token, timeout)
    else:
        client.set(cache.make_and_validate_key(key), token, px=int(timeout * 1000))


class Lease:
    """A claim on one job in the shared cache (Redis in production, so it holds across daphne
    processes and workers), ``seconds`` long unless renewed. It is queued (:meth:`queue`) before
    the job is sent, so a job is sent once however often it is asked for; claimed when it runs
    (:meth:`claim`), so a copy delivered twice runs once; renewed while it runs (:meth:`hold`);
    and released at the end. A job whose worker dies stops renewing, the lease lapses, and the
    job may be queued and claimed again. An empty key is no lease (a job run inline or by hand):
    every call on it succeeds."""

    def __init__(self, key: str, seconds: float) -> None:
        self.key = key
        self.seconds = float(seconds)
        self.token = ""  # the running claim's ('' while none is held)
        self._lock: Any = None

    def queue(self, delay: float, *, again: bool = False) -> bool:
        """Claim the job as queued for ``delay`` seconds and the lease's own: False if it is
        queued or running already. ``again``: the running job queues itself anew (a deadline
        checked early), over its own running claim."""
        if not self.key:
            return True
        ttl = math.ceil(max(delay, 0.0) + self.seconds)  # whole seconds, as before
        if again:
            overwrite(self.key, QUEUED, ttl)
            return True
        return bool(make_lock(self.key, ttl).acquire(blocking=False, token=QUEUED))

    def unqueue(self) -> bool:
        """Give back a queued claim whose job was not sent after all."""
        return bool(self.key) and _released(make_lock(self.key, None), QUEUED)

    def claim(self) -> bool:
        """Start running: the lease, free or queued, becomes this run's. False if another copy of
        the job is running right now."""
        if not self.key:
            return True
        lock = make_lock(self.key, self.seconds)
        token = f"running:{uuid.uuid4().hex}"
        if not take_over(lock, token):
            return False
        self._lock, self.token = lock, token
        return True

    def renew(self) -> bool:
        """This run is alive: its lease runs ``seconds`` from now. False if it lapsed and
        someone else holds the job (or it queued itself again)."""
        if self._lock is None:
            return bool(not self.key)
        try:
            return bool(self._lock.reacquire())
        except LockError:
            return False

    def release(self) -> bool:
        """The run is over: the job is free, unless someone else holds it by now."""
        lock, self._lock, self.token = self._lock, None, ""
        if lock is None:
            return False
        try:
            lock.release()
        except LockError:
            return False
        return True

    async def hold(self, work: Awaitable[Any]) -> Any:
        """Await ``work`` (an agent thinking), renewing the lease while it runs."""
        if not self.key:
            return await work

        async def keep() -> None:
            while True:
                await asyncio.sleep(self.seconds / 3)
                self.renew()

        keeper = asyncio.ensure_future(keep())
        try:
            return await work
        finally:
            keeper.cancel()


def take_over(lock: Any, token: str) -> bool:
    """Claim ``lock`` with ``token`` if it is free or queued (a running claim stays). The Lock's
    two calls, in this order: its owner-checked release of the queued token, then its ``SET NX
    PX``. On Redis both go in one pipeline, one round trip instead of two on every agent turn;
    the order is the same, so nothing changes but the wait."""
    if isinstance(lock, CacheLock):
        _released(lock, QUEUED)  # queued becomes free; a running claim stays
        return lock.acquire(blocking=False, token=token)
    pipe = lock.redis.pipeline(transaction=False)
    pipe.evalsha(lock.lua_release.sha, 1, lock.name, QUEUED)
    pipe.set(lock.name, token, nx=True, px=int(lock.timeout * 1000))
    released, taken = pipe.execute(raise_on_error=False)
    if isinstance(taken, Exception):
        raise taken
    if isinstance(released, NoScriptError):
        # A Redis that has not seen the release script yet (new, or restarted). A lease taken
        # anyway was free, and there was nothing to release; else the Lock's own calls, which
        # load the script.
        if not taken:
            _released(lock, QUEUED)
            return bool(lock.acquire(blocking=False, token=token))
    elif isinstance(released, Exception):
        raise released
    if taken:
        lock.local.token = lock.redis.get_encoder().encode(token)  # as Lock.acquire keeps it
    return bool(taken)


def _released(lock: Any, token: str) -> bool:
    try:
        lock.do_release(token)
    except LockNotOwnedError:
        return False
    return True


# --- claims on database rows ------------------------------------------------------------------


def claim_row(rows: models.QuerySet, **changes: Any) -> bool:
    """Claim a row by a conditional update: ``rows`` is the row filtered by what it must still
    hold (queued, or the timestamp the claimer read); False if someone else changed it first."""
    return bool(rows.update(**changes))


def beat_row(rows: models.QuerySet, field: str = "heartbeat_at", **changes: Any) -> bool:
    """One sign of life of a row's holder: ``rows`` is the row filtered by the holder's claim (the
    stamp its claim wrote), ``field`` is stamped with now and ``changes`` written with it; False
    when the claim is no longer there (finished, or taken over)."""
    return bool(rows.update(**{field: timezone.now()}, **changes))


def stale_before(seconds: float, now: datetime | None = None) -> datetime:
    """The time before which a holder's last sign of life is too old."""
    return (now or timezone.now()) - timedelta(seconds=seconds)


def silent(field: str, seconds: float, now: datetime | None = None) -> models.Q:
    """Rows whose ``field`` (the holder's last beat) is older than ``seconds``, or never set."""
    return models.Q(**{f"{field}__lt": stale_before(seconds, now)}) | models.Q(
        **{f"{field}__isnull": True}
    )


def is_stale(stamp: datetime | None, seconds: float) -> bool:
    """Whether a holder whose last sign of life was at ``stamp`` has been silent ``seconds``."""
    return stamp is None or time.time() - stamp.timestamp() >= seconds


class Heartbeat:
    """Calls ``beat`` from a thread of its own every ``interval`` seconds while the ``with``
    block runs, whatever the block does meanwhile (a job silent in one long call is alive; only
    a holder whose process is gone goes stale). A failed beat is logged and the next one tries
    again; the thread closes its own database connection at the end."""

    def __init__(self, beat: Callable[[], Any], interval: float, *, name: str) -> None:
        self.beat = beat
        self.interval = float(interval)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def _run(self) -> None:
        try:
            while not self._stop.wait(self.interval):
                try:
                    self.beat()
                except Exception:  # a database hiccup: the next beat tries again
                    log.warning("%s: heartbeat failed", self._thread.name, exc_info=True)
        finally:
            connection.close()  # this thread's own connection

    def __enter__(self) -> Heartbeat:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
