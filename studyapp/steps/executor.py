"""The executor: steps registered by name, each run on one event loop, sleeping until it is due
(costing nothing while it waits), at most ``limit`` held at once, their database work in a small
pool of threads (:func:`sync`). The stream's consumer (:mod:`.stream`) and the embedded server
(:mod:`.in_process`) both feed one."""

from __future__ import annotations

import asyncio
import contextvars
import logging
import time
import weakref
from collections import defaultdict, deque
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from django.conf import settings

from studyapp.background import serving
from studyapp.db import returning_connections

log = logging.getLogger("studyapp.steps")

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


class Stats:
    """What an executor did and holds, and how long each model spec's calls took (the last
    ``LATENCY_SAMPLES`` per spec), for :func:`studyapp.steps.status`."""

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


def record_model_call(spec: str, seconds: float) -> None:
    """A model call a step made took ``seconds`` (the executor's latency figures)."""
    stats = current_stats()
    if stats is not None:
        stats.model_call(spec, seconds)


# --- database work from a step ------------------------------------------------------------------

# The embedded servers' loops (:mod:`.in_process`): a step's database work there is done for
# the server, so a broadcast reaches its in-memory channel layer.
SERVER_LOOPS: weakref.WeakSet[asyncio.AbstractEventLoop] = weakref.WeakSet()
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
    served = loop if loop in SERVER_LOOPS else None

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
