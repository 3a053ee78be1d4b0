"""Real-time steps: the tables' short jobs (an agent's turn, a turn deadline, a lobby's wait),
run on an event loop where a model call, a think-time pause or a blinded vote's staggered ballot
holds no process and no thread. Batch work (pipeline jobs, the dashboard's analysis, the sweep
and beat) stays on Celery (:mod:`studyapp.dispatch`).

An app registers its steps by name (:func:`register`: the async handler an executor awaits, and
a sync twin for a command or a plain test with no loop to hand the step to) and enqueues them with
:func:`enqueue`, which alone decides where a step runs:

- **stream** (a broker is configured, ``make production``): the step is added to a Redis stream
  (``XADD``) with the time it is due; executor processes (``manage.py run_steps``, any number on
  any machine) read it through one consumer group, so each step goes to one executor, which
  sleeps on its loop until the step is due, runs it, and acknowledges it (``XACK``) only then.
  An executor that dies leaves its steps pending; a live executor claims those silent past
  ``STEPS_STALE_SECONDS`` (``XAUTOCLAIM``) and runs them, while a live executor's own pending
  steps are kept fresh by its heartbeat (``XCLAIM``). The table's lease per (table, seq) and its
  log's unique (table, seq) key make a second delivery harmless, as before.
- **embedded, under a server** (``make run``): the same :class:`Executor` on the server's own
  loop, fed in-process instead of through Redis.
- **inline** (no server, no broker: a command, a test with Django's test client): the sync twin
  runs here, one step after another (a step that sends another queues it rather than nesting).

Each executor bounds the steps it holds (``STEPS_IN_FLIGHT``: reading stops while it holds
that many) and runs their database work in a small pool of threads (``STEPS_DB_THREADS``), the
only threads it has. What it holds and how long the models take is published in the cache for
the dashboard and ``/healthz`` (:func:`status`)."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import json
import logging
import os
import socket
import threading
import time
import weakref
from collections import defaultdict, deque
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.core.cache import caches

from studyapp.background import server_loop, serving
from studyapp.cache import UNREACHABLE, redis_resilience
from studyapp.claims import redis_client
from studyapp.db import returning_connections
from studyapp.dispatch import celery_mode

log = logging.getLogger(__name__)

GROUP = "executors"
# What a handler returns when a live copy of its step holds the step's lease: the entry is not
# acknowledged, so it is claimed and tried again once the other copy is done or dead.
ELSEWHERE = "running elsewhere"


@dataclass(frozen=True)
class Handlers:
    run: Callable[..., Awaitable[str]]  # the executor's
    inline: Callable[..., str]  # the sync twin, for no loop at all


HANDLERS: dict[str, Handlers] = {}


def register(name: str, run: Callable[..., Awaitable[str]], inline: Callable[..., str]) -> None:
    HANDLERS[name] = Handlers(run, inline)


@dataclass
class Step:
    name: str
    args: tuple
    kwargs: dict[str, Any]
    due: float  # epoch seconds
    entry: str = ""  # the stream entry's id ('' in-process)
    delivered: int = 1


# --- enqueueing ------------------------------------------------------------------------------


def redis() -> Any:
    """The site's Redis client (the cache's), or None when the cache is not Redis."""
    return redis_client(caches["default"])


def stream_key() -> str:
    """The stream's key, under the cache's prefix (one site's steps apart from another's)."""
    return caches["default"].make_and_validate_key("steps:stream")


def stream_mode() -> bool:
    """Whether steps go through the Redis stream to executor processes (a broker and a Redis
    cache are configured: the production topology)."""
    return celery_mode() and redis() is not None


def enqueue(
    name: str,
    args: tuple = (),
    kwargs: dict[str, Any] | None = None,
    *,
    delay: float = 0.0,
    may_run_now: bool = True,
) -> bool:
    """Run step ``name`` with ``args`` and ``kwargs`` after ``delay`` seconds, wherever this site
    runs its steps (see the module). Returns whether it was sent (or run)."""
    if name not in HANDLERS:
        raise KeyError(f"no step is registered as {name!r}")
    kwargs = kwargs or {}
    delay = max(delay, 0.0)
    due = time.time() + delay
    if stream_mode():
        redis().xadd(
            stream_key(),
            {
                "name": name,
                "args": json.dumps(args),
                "kwargs": json.dumps(kwargs),
                "due": repr(due),
            },
            maxlen=settings.STEPS_STREAM_MAXLEN,
            approximate=True,
        )
        return True
    loop = server_loop()
    if loop is None:
        if not may_run_now:
            return False
        run_inline(name, args, kwargs)
        return True
    step = Step(name, tuple(args), kwargs, due)
    loop.call_soon_threadsafe(local_executor(loop).submit, step)
    return True


_inline = threading.local()


def run_inline(name: str, args: tuple, kwargs: dict[str, Any]) -> None:
    """Run steps one after another in this thread (the sync twins) instead of nesting them."""
    queue = getattr(_inline, "queue", None)
    if queue is not None:
        queue.append((name, args, kwargs))
        return
    _inline.queue = [(name, args, kwargs)]
    try:
        while _inline.queue:
            next_name, next_args, next_kwargs = _inline.queue.pop(0)
            HANDLERS[next_name].inline(*next_args, **next_kwargs)
    finally:
        _inline.queue = None


# --- the executor -------------------------------------------------------------------------------


class Stats:
    """What an executor did and holds, and how long each model spec's calls took (the last
    ``LATENCY_SAMPLES`` per spec), for :func:`status`."""

    LATENCY_SAMPLES = 500

    def __init__(self) -> None:
        self.waiting = 0  # held, not yet due
        self.queued = 0  # due, waiting for a database thread or a model slot
        self.working = 0
        self.done = 0
        self.failed = 0
        self.ran: dict[str, int] = defaultdict(int)  # steps run, by name
        self.latency: dict[str, deque[float]] = defaultdict(
            lambda: deque(maxlen=self.LATENCY_SAMPLES)
        )
        self.calls: dict[str, int] = defaultdict(int)

    def model_call(self, spec: str, seconds: float) -> None:
        self.latency[spec].append(seconds)
        self.calls[spec] += 1

    def as_dict(self) -> dict[str, Any]:
        return {
            "waiting": self.waiting,
            "queued": self.queued,
            "working": self.working,
            "done": self.done,
            "failed": self.failed,
            "models": {
                spec: {"calls": self.calls[spec], **percentiles(list(samples))}
                for spec, samples in self.latency.items()
            },
        }


def percentiles(samples: list[float]) -> dict[str, float | None]:
    if not samples:
        return {"p50": None, "p95": None}
    ordered = sorted(samples)

    def at(share: float) -> float:
        return round(ordered[min(len(ordered) - 1, int(share * len(ordered)))], 3)

    return {"p50": at(0.5), "p95": at(0.95)}


class Executor:
    """Runs steps on one event loop: each sleeps until it is due (costing nothing while it
    waits), then runs its handler; at most ``limit`` are held at once."""

    def __init__(self, loop: asyncio.AbstractEventLoop, limit: int) -> None:
        self.loop = loop
        self.limit = limit
        self.held: dict[str, Step] = {}  # by entry id (stream mode)
        self.tasks: set[asyncio.Task] = set()
        self.stats = Stats()
        self.room = asyncio.Event()
        self.room.set()

    def __len__(self) -> int:
        return len(self.tasks)

    def submit(self, step: Step, on_done: Callable[[Step, str], Any] | None = None) -> None:
        if step.entry:
            self.held[step.entry] = step
        task = self.loop.create_task(self._run(step, on_done))
        self.tasks.add(task)
        if len(self.tasks) >= self.limit:
            self.room.clear()
        task.add_done_callback(self._forget)

    def _forget(self, task: asyncio.Task) -> None:
        self.tasks.discard(task)
        if len(self.tasks) < self.limit:
            self.room.set()

    async def _run(self, step: Step, on_done: Callable[[Step, str], Any] | None) -> None:
        stats = self.stats
        wait = step.due - time.time()
        if wait > 0:
            stats.waiting += 1
            try:
                await asyncio.sleep(wait)
            finally:
                stats.waiting -= 1
        stats.working += 1
        result = "failed"
        token = CURRENT.set(self)
        try:
            result = await HANDLERS[step.name].run(*step.args, **step.kwargs)
        except Exception:
            stats.failed += 1
            log.exception("step %s%s failed", step.name, tuple(step.args))
        finally:
            CURRENT.reset(token)
            stats.working -= 1
            stats.done += 1
            stats.ran[step.name] += 1
            self.held.pop(step.entry, None)
        if on_done is not None:
            await on_done(step, result)


CURRENT: contextvars.ContextVar[Executor | None] = contextvars.ContextVar(
    "studyapp_steps_executor", default=None
)


def current_stats() -> Stats | None:
    """The stats of the executor running the current step (None outside one)."""
    executor = CURRENT.get()
    return executor.stats if executor is not None else None


_local: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Executor] = weakref.WeakKeyDictionary()


def local_executor(loop: asyncio.AbstractEventLoop) -> Executor:
    """The embedded server's executor, on its own loop (made on first use). The dashboard runs in
    the same process and reads its figures directly (:func:`status`)."""
    executor = _local.get(loop)
    if executor is None:
        executor = _local[loop] = Executor(loop, settings.STEPS_IN_FLIGHT)
    return executor


# --- database work from a step ------------------------------------------------------------------

_threads: ThreadPoolExecutor | None = None


def threads() -> ThreadPoolExecutor:
    global _threads
    if _threads is None:
        _threads = ThreadPoolExecutor(settings.STEPS_DB_THREADS, thread_name_prefix="steps-db")
    return _threads


async def sync(func: Callable[..., Any], *args: Any) -> Any:
    """Run sync code (the ORM, a broadcast, scheduling the next step) from a step, in one of the
    executor's database threads. On the embedded server the thread works for the server's loop
    (:func:`studyapp.background.serving`), so a broadcast reaches the in-memory channel layer."""
    loop = asyncio.get_running_loop()
    served = loop if loop in _local else None

    def call() -> Any:
        with serving(served):
            return func(*args)

    stats = current_stats()
    if stats is not None:
        stats.queued += 1
    try:
        return await loop.run_in_executor(threads(), returning_connections(call))
    finally:
        if stats is not None:
            stats.queued -= 1


# --- the stream's consumer (an executor process) ------------------------------------------------


def consumer_name() -> str:
    return f"{socket.gethostname()}-{os.getpid()}"


class Blip:
    """Redis away while the executor reads: each failure is logged with its error, and the site's
    one-line-per-fault filter (:class:`studyapp.logs.OncePerFault`) writes the fault's start once,
    counts the repeats and writes its end when Redis answers again."""

    def __init__(self, what: str) -> None:
        self.what = what

    def failed(self, err: BaseException) -> None:
        log.warning("%s: cannot reach the steps' stream", self.what, extra={"fault_error": err})

    def ok(self) -> None:
        pass


async def serve(
    stop: asyncio.Event | None = None,
    *,
    name: str | None = None,
    executor: Executor | None = None,
) -> None:
    """An executor process's main loop: read steps from the stream as room allows, run them,
    acknowledge them when done, keep this executor's pending steps fresh, take over a dead
    executor's, and publish what it holds. Runs until ``stop`` is set."""
    from redis.asyncio import Redis
    from redis.exceptions import ResponseError

    stop = stop or asyncio.Event()
    name = name or consumer_name()
    loop = asyncio.get_running_loop()
    executor = Executor(loop, settings.STEPS_IN_FLIGHT) if executor is None else executor
    client = Redis.from_url(settings.REDIS_URL, **redis_resilience(asynchronous=True))
    key = stream_key()
    blip = Blip(f"steps executor {name}")

    async def ensure_group() -> None:
        try:
            await client.xgroup_create(key, GROUP, id="0", mkstream=True)
        except ResponseError as err:
            if "BUSYGROUP" not in str(err):
                raise

    async def done(step: Step, result: str) -> None:
        if result == ELSEWHERE:
            return  # left pending: claimed and tried again once the other copy is over
        try:
            async with client.pipeline(transaction=False) as pipe:
                pipe.xack(key, GROUP, step.entry)
                pipe.xdel(key, step.entry)
                await pipe.execute()
        except (*UNREACHABLE, ResponseError):
            pass  # left pending (or Redis lost it): a later claim finds its table moved on

    def take(entries: list, *, claimed: bool = False) -> None:
        for entry, fields in entries:
            entry = entry.decode() if isinstance(entry, bytes) else entry
            if entry in executor.held or not fields:
                continue
            fields = {k.decode(): v.decode() for k, v in fields.items()}
            try:
                step = Step(
                    fields["name"],
                    tuple(json.loads(fields["args"])),
                    json.loads(fields["kwargs"]),
                    float(fields["due"]),
                    entry,
                    2 if claimed else 1,
                )
            except (KeyError, ValueError):
                log.error("steps: entry %s is not a step; dropped", entry)
                loop.create_task(done(Step("", (), {}, 0, entry), "bad entry"))
                continue
            if step.name not in HANDLERS:
                log.error("steps: no step is registered as %r; entry %s dropped", step.name, entry)
                loop.create_task(done(step, "unknown"))
                continue
            executor.submit(step, done)

    async def read() -> None:
        while not stop.is_set():
            await executor.room.wait()
            room = max(1, executor.limit - len(executor))
            try:
                answer = await client.xreadgroup(
                    GROUP, name, {key: ">"}, count=min(room, 256), block=1000
                )
                blip.ok()
            except ResponseError as err:
                if "NOGROUP" not in str(err):
                    raise
                await ensure_group()  # Redis lost the stream (a restart without persistence)
                continue
            except UNREACHABLE as err:
                blip.failed(err)
                await asyncio.sleep(0.5)
                continue
            for _stream, entries in answer or []:
                take(entries)

    async def keep() -> None:
        """Every second: this executor's held steps are alive (their idle time starts again), a
        dead executor's steps silent past STEPS_STALE_SECONDS are claimed, and the status is
        published."""
        stale_ms = int(settings.STEPS_STALE_SECONDS * 1000)
        while not stop.is_set():
            await asyncio.sleep(1.0)
            try:
                if executor.held:
                    await client.xclaim(key, GROUP, name, 0, list(executor.held), justid=True)
                if len(executor) < executor.limit:
                    answer = await client.xautoclaim(
                        key, GROUP, name, stale_ms, "0-0", count=min(100, executor.limit)
                    )
                    take(answer[1], claimed=True)
                blip.ok()
            except ResponseError as err:
                if "NOGROUP" in str(err):
                    with contextlib.suppress(*UNREACHABLE, ResponseError):
                        await ensure_group()
                else:
                    log.warning("steps: %s", err)
            except UNREACHABLE as err:
                blip.failed(err)

    while True:
        try:
            await ensure_group()
            break
        except UNREACHABLE as err:
            blip.failed(err)
            await asyncio.sleep(0.5)
    try:  # this executor's own steps left pending by its previous run (same name): at once
        for _stream, entries in (
            await client.xreadgroup(GROUP, name, {key: "0"}, count=executor.limit) or []
        ):
            take(entries, claimed=True)
    except (*UNREACHABLE, ResponseError) as err:
        log.warning("steps: own pending steps not read (%s); they are claimed later", err)
    publisher = loop.create_task(_publish_forever(executor, name, stop))
    keeper = loop.create_task(keep())
    try:
        await read()
    finally:
        keeper.cancel()
        publisher.cancel()
        if executor.tasks:  # a clean stop lets the steps it holds finish
            await asyncio.wait(executor.tasks, timeout=settings.STEPS_STOP_SECONDS)
        for task in list(executor.tasks):
            task.cancel()
        await client.aclose()
        _forget_status(name)


# --- what the executors hold, for the dashboard and /healthz -----------------------------------

STATUS_PREFIX = "steps:executor:"
STATUS_INDEX = "steps:executors"
STATUS_SECONDS = 10  # an executor silent this long is gone from the status


async def _publish_forever(executor: Executor, name: str, stop: asyncio.Event) -> None:
    while not stop.is_set():
        with contextlib.suppress(Exception):  # never take the executor down for a status line
            await sync(_publish, name, executor.stats.as_dict())
        await asyncio.sleep(1.0)


def _publish(name: str, stats: dict[str, Any]) -> None:
    cache = caches["default"]
    with contextlib.suppress(*UNREACHABLE):
        cache.set(STATUS_PREFIX + name, {**stats, "at": time.time()}, STATUS_SECONDS)
        names = set(cache.get(STATUS_INDEX) or ())
        if name not in names:
            cache.set(STATUS_INDEX, sorted(names | {name}), None)


def _forget_status(name: str) -> None:
    cache = caches["default"]
    with contextlib.suppress(*UNREACHABLE):
        cache.delete(STATUS_PREFIX + name)


def status() -> dict[str, Any]:
    """The executors alive now (published within ``STATUS_SECONDS``) and, summed, the steps
    they hold: ``working`` (running now), ``queued`` (due, waiting for a database thread),
    ``waiting`` (not yet due), ``unread`` (in the stream, read by no executor yet), and each model
    spec's calls with their latency (p50, p95 of each executor's recent calls; the highest)."""
    cache = caches["default"]
    names = list(cache.get(STATUS_INDEX) or ())
    found = cache.get_many([STATUS_PREFIX + n for n in names])
    alive = {n: found[STATUS_PREFIX + n] for n in names if STATUS_PREFIX + n in found}
    if len(alive) < len(names):
        with contextlib.suppress(*UNREACHABLE):
            cache.set(STATUS_INDEX, sorted(alive), None)
    for index, executor in enumerate(list(_local.values())):  # the embedded server's own
        alive[f"embedded-{os.getpid()}-{index}"] = executor.stats.as_dict()
    total: dict[str, Any] = {"executors": len(alive), "working": 0, "queued": 0, "waiting": 0}
    models: dict[str, dict[str, Any]] = {}
    for stats in alive.values():
        for count in ("working", "queued", "waiting"):
            total[count] += stats.get(count, 0)
        for spec, figures in stats.get("models", {}).items():
            seen = models.setdefault(spec, {"calls": 0, "p50": None, "p95": None})
            seen["calls"] += figures["calls"]
            for share in ("p50", "p95"):
                if figures[share] is not None:
                    seen[share] = max(seen[share] or 0.0, figures[share])
    total["models"] = models
    total["unread"] = unread()
    return total


def unread() -> int | None:
    """Steps in the stream no executor has read yet (None without a stream)."""
    client = redis() if stream_mode() else None
    if client is None:
        return None
    try:
        for group in client.xinfo_groups(stream_key()):
            if group.get("name") in (GROUP, GROUP.encode()):
                return int(group.get("lag") or 0)
    except Exception:  # no stream yet, or Redis away
        return None
    return None


def record_model_call(spec: str, seconds: float) -> None:
    """A model call a step made took ``seconds`` (the executor's latency figures)."""
    stats = current_stats()
    if stats is not None:
        stats.model_call(spec, seconds)
