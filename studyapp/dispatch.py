"""The one dispatcher: run a Celery task (the task object itself), now or after a delay, wherever
this site runs its background work. Every app sends its work through :func:`send` (the tables'
agent turns, deadlines and lobby checks; pipeline jobs; the dashboard's analysis), and this module
alone decides how it runs:

- **Celery** (a broker is configured): the task is sent to the broker; a worker runs it.
- **Embedded, under a server** (``CELERY_TASK_ALWAYS_EAGER`` and a running daphne loop): after
  the delay (a timer on the server's loop), the same task runs in a thread of this process
  (:data:`EXECUTOR`, or a thread of its own for a long job), so a page or a socket never waits
  for it; code in it that must reach the server's loop (the in-memory channel layer) does
  (:func:`studyapp.background.serving`). The periodic tasks of
  ``CELERY_BEAT_SCHEDULE`` run on the server's loop the same way (:func:`start_beat`), in place
  of Celery beat.
- **Embedded, no server** (a management command, a test using Django's test client): nobody can
  wait for later, so work that ``may_run_now`` runs right here, one task after another (a task
  that sends another, an agent turn that schedules the next, queues it rather than nesting);
  other work (a deadline due later) is not run, and :func:`send` says so.

Callers pass the task object (a ``shared_task``), so a task that does not exist fails at import,
not when it is due. Only the beat schedule names tasks by their names (Celery's own format): the
embedded beat looks those up in Celery's registry (:func:`registered`).
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import logging
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from celery import Task
from celery.loaders.base import autodiscover_tasks
from django.apps import apps
from django.conf import settings
from django.db import transaction

from studyapp.background import server_loop, serving, start_thread
from studyapp.db import returning_connections

log = logging.getLogger(__name__)

# Threads of the embedded mode's background work: apart from the threads the sockets' database
# calls use, so a long pipeline job never holds up a move.
EXECUTOR = ThreadPoolExecutor(max_workers=8, thread_name_prefix="dispatch")

_inline = threading.local()
_running: set[asyncio.Future] = set()
_beating: set[asyncio.AbstractEventLoop] = set()


def celery_mode() -> bool:
    """Whether background work goes to Celery workers (a broker is configured)."""
    return not settings.CELERY_TASK_ALWAYS_EAGER


def send(
    task: Task,
    args: tuple = (),
    kwargs: dict[str, Any] | None = None,
    *,
    delay: float = 0.0,
    may_run_now: bool = True,
    after_commit: bool = False,
    own_thread: str | None = None,
) -> bool:
    """Run the Celery task ``task`` with ``args`` and ``kwargs`` after ``delay`` seconds (see the
    module for where). ``may_run_now``: with no server and no broker, run it here at once rather
    than not at all. ``after_commit``: send it once the current transaction commits (the task
    reads a row this transaction writes). ``own_thread``: in the embedded mode, run it in a
    thread of its own by that name (a long job) rather than a shared one. Returns whether the
    task was sent or run."""
    if after_commit:
        transaction.on_commit(
            lambda: send(
                task, args, kwargs, delay=delay, may_run_now=may_run_now, own_thread=own_thread
            )
        )
        return True
    if not isinstance(task, Task):
        raise TypeError(f"dispatch.send takes a Celery task object, not {task!r}")
    delay = max(delay, 0.0)
    kwargs = kwargs or {}
    if celery_mode():
        from studyapp.celery import app

        # argsrepr and kwargsrepr given: Celery would otherwise format them for its log on every send
        app.send_task(
            task.name,
            args,
            kwargs,
            countdown=delay or None,
            argsrepr=repr(args),
            kwargsrepr=repr(kwargs),
            **declared(),
        )
        return True
    loop = server_loop()
    if loop is None:
        if not may_run_now:
            return False
        run_inline(task, args, kwargs)
        return True
    job = (task, args, kwargs, own_thread)
    if delay <= 0:
        _start(loop, *job)
    else:
        # A fresh context: the timer must not inherit this thread's "executor in use" marker.
        loop.call_soon_threadsafe(_later, loop, delay, *job, context=contextvars.Context())
    return True


def declared() -> dict[str, Any]:
    """What :func:`send` tells Celery to declare before publishing. On Redis nothing: a task is
    pushed onto its queue's list by name (kombu's default, direct exchange) and the queue needs no
    declaring, while Celery declares it again on every send (a cached no-op that still cost a
    quarter of ``send_task``'s CPU, 0.13 of 0.47 ms). Other brokers: Celery's default."""
    if settings.CELERY_BROKER_URL.startswith(("redis://", "rediss://")):
        return {"declare": []}
    return {}


def registered(name: str) -> Task:
    """The Celery task registered under ``name`` (a beat entry's), from Celery's registry. A web
    process has not loaded the apps' tasks modules (a worker does at its start): the first lookup
    imports each installed app's ``tasks`` module, which registers its tasks (Celery's own
    autodiscovery, without the system checks its loader's Django fixup runs then, seconds inside a
    request)."""
    from studyapp.celery import app

    if name not in app.tasks:
        autodiscover_tasks([config.name for config in apps.get_app_configs()])
    return app.tasks[name]


def run_inline(task: Task, args: tuple, kwargs: dict[str, Any]) -> None:
    """Run tasks one after another in this thread instead of nesting them."""
    queue = getattr(_inline, "queue", None)
    if queue is not None:
        queue.append((task, args, kwargs))
        return
    _inline.queue = [(task, args, kwargs)]
    try:
        while _inline.queue:
            next_task, next_args, next_kwargs = _inline.queue.pop(0)
            next_task(*next_args, **next_kwargs)
    finally:
        _inline.queue = None


def _later(loop: asyncio.AbstractEventLoop, delay: float, *job: Any) -> None:
    loop.call_later(delay, _start, loop, *job)


def _start(
    loop: asyncio.AbstractEventLoop, task: Task, args: tuple, kwargs: dict, own_thread: str | None
) -> None:
    """Run the task in a thread: its own, named ``own_thread`` (a long job), or one of
    :data:`EXECUTOR`'s (whose event loops, and the model clients bound to them, are kept)."""
    work = functools.partial(_run, loop, task, args, kwargs)
    if own_thread:
        start_thread(own_thread, work)
    else:
        EXECUTOR.submit(returning_connections(work))


def _run(loop: asyncio.AbstractEventLoop, task: Task, args: tuple, kwargs: dict) -> None:
    """A task as the embedded server runs it, working for the server's loop (the in-memory
    channel layer is reached there)."""
    with serving(loop):
        try:
            task(*args, **kwargs)
        except Exception:
            log.exception("background task %s%s failed", task.name, args)


def start_beat() -> None:
    """The embedded server's stand-in for Celery beat: every entry of ``CELERY_BEAT_SCHEDULE``
    runs on the server's loop as often as it says, from the first call on (the site's ASGI
    application calls it for every request and socket, :mod:`studyapp.asgi`). Nothing under
    Celery, where beat does it, or with no server."""
    loop = server_loop()
    if celery_mode() or loop is None or loop in _beating:
        return
    _beating.add(loop)
    for entry in settings.CELERY_BEAT_SCHEDULE.values():
        loop.call_soon_threadsafe(
            _spawn_beat,
            loop,
            entry["task"],
            float(entry["schedule"]),
            context=contextvars.Context(),
        )


def _spawn_beat(loop: asyncio.AbstractEventLoop, name: str, every: float) -> None:
    async def beating() -> None:
        while True:
            await asyncio.sleep(every)
            task = registered(name)
            await loop.run_in_executor(EXECUTOR, returning_connections(_run), loop, task, (), {})

    future = loop.create_task(beating())
    _running.add(future)
