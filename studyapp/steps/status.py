"""What the executors hold, for the dashboard and ``/healthz``: each executor process publishes
its figures in the cache every second; the embedded server's executor is read directly."""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from typing import Any

from django.core.cache import caches

from studyapp.cache import UNREACHABLE
from studyapp.steps.executor import Executor, sync
from studyapp.steps.in_process import EMBEDDED
from studyapp.steps.stream import unread

STATUS_PREFIX = "steps:executor:"
STATUS_INDEX = "steps:executors"
STATUS_SECONDS = 10  # an executor silent this long is gone from the status


async def publish_forever(executor: Executor, name: str, stop: asyncio.Event) -> None:
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


def forget(name: str) -> None:
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
    for index, executor in enumerate(list(EMBEDDED.values())):  # the embedded server's own
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
