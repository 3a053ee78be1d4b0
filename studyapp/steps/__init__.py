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
the dashboard and ``/healthz`` (:func:`status`).

The parts: :mod:`.executor` (registered steps, the executor, their database threads),
:mod:`.stream` (the Redis stream) and :mod:`.consumer` (an executor process reading it),
:mod:`.in_process` and :mod:`.inline` (the other two runners), :mod:`.status` (what the
executors hold)."""

from __future__ import annotations

import time
from typing import Any

from studyapp.background import server_loop
from studyapp.steps import in_process, stream
from studyapp.steps.consumer import consumer_name, serve
from studyapp.steps.executor import (
    ELSEWHERE,
    HANDLERS,
    Executor,
    Stats,
    Step,
    current_stats,
    record_model_call,
    register,
    sync,
)
from studyapp.steps.in_process import local_executor
from studyapp.steps.inline import run_inline
from studyapp.steps.status import status
from studyapp.steps.stream import GROUP, redis, stream_key, stream_mode, unread

__all__ = [
    "ELSEWHERE",
    "GROUP",
    "HANDLERS",
    "Executor",
    "Stats",
    "Step",
    "consumer_name",
    "current_stats",
    "enqueue",
    "local_executor",
    "record_model_call",
    "redis",
    "register",
    "run_inline",
    "serve",
    "status",
    "stream_key",
    "stream_mode",
    "sync",
    "unread",
]


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
    due = time.time() + max(delay, 0.0)
    if stream_mode():
        stream.add(name, args, kwargs, due)
        return True
    loop = server_loop()
    if loop is None:
        if not may_run_now:
            return False
        run_inline(name, args, kwargs)
        return True
    in_process.submit(loop, Step(name, tuple(args), kwargs, due))
    return True
