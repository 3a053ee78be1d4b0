"""Work that must not hold up a request in the embedded mode (no broker, tasks run in-process).

Under daphne a view runs in a sync thread next to the server's event loop, so long work can be
handed to that loop (the table driver's timers) or to a thread of the server process (pipeline
jobs). With no server around (a management command, a test using Django's test client) there is
nothing to return to early, so callers run the work inline and stay deterministic.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import contextvars
import os
import threading
import weakref
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

from django.db import connections

_loops = threading.local()
_kept: weakref.WeakSet[asyncio.AbstractEventLoop] = weakref.WeakSet()  # every loop of run_async
_serving = threading.local()  # the server loop a background thread works for (:func:`serving`)
# The server's loop (and process) while it serves a request or a socket (:func:`in_server`). A
# context variable: asgiref runs a sync call in a copy of its caller's context, so the threads
# the server starts for views and database calls see it, and no other thread does.
_server: contextvars.ContextVar[tuple[asyncio.AbstractEventLoop, int] | None] = (
    contextvars.ContextVar("studyapp_server_loop", default=None)
)


@contextlib.contextmanager
def in_server() -> Iterator[None]:
    """Entered by the site's ASGI application (studyapp.asgi) around each request and socket,
    on the server's loop: code run for them, in the sync threads asgiref starts too, finds that
    loop (:func:`server_loop`)."""
    token = _server.set((asyncio.get_running_loop(), os.getpid()))
    try:
        yield
    finally:
        # a coroutine closed by the garbage collector exits in another context: nothing to undo
        with contextlib.suppress(ValueError):
            _server.reset(token)


def server_loop() -> asyncio.AbstractEventLoop | None:
    """The running event loop of the server this code runs under, if any: the current one in
    async code; from a sync thread the server started (a view, a consumer's database call) the
    loop :func:`in_server` marked for it. None with no server (a management command, a test using
    Django's test client, a Celery worker) or once the server's loop has stopped: a job that
    asks while the server shuts down must not wait on a loop that will never run it."""
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        pass
    loop = getattr(_serving, "loop", None)
    if loop is None:
        if not in_server_thread():
            return None
        loop = _server.get()[0]  # type: ignore[index]  # in_server_thread: it is set
    return loop if loop.is_running() and not loop.is_closed() else None


@contextlib.contextmanager
def serving(loop: asyncio.AbstractEventLoop | None) -> Iterator[None]:
    """Background work of the embedded server, run in a thread of its own: while it runs,
    :func:`server_loop` in this thread is the server's loop, as in a thread the server started."""
    _serving.loop = loop
    try:
        yield
    finally:
        _serving.loop = None


def in_server_thread() -> bool:
    """Whether this is a sync thread the server started for a request or a socket (a view, a
    consumer's database call): it runs in the context :func:`in_server` marked, in this process
    (a forked child's copy is not the server's), and asgiref's ``async_to_sync`` sends async work
    from it back to the server's loop."""
    try:
        asyncio.get_running_loop()
        return False  # the loop's own thread, not one it started
    except RuntimeError:
        pass
    marked = _server.get()
    return marked is not None and marked[1] == os.getpid()


def run_async(coro: Awaitable[Any]) -> Any:
    """Await ``coro`` from sync code on an event loop kept per thread (a Celery worker, a
    command). ``async_to_sync`` would start a thread and a loop for every call, and clients bound
    to a loop (a model SDK's connections, the channel layer's Redis pool) would be made anew each
    time; here they are reused across calls."""
    loop = getattr(_loops, "loop", None)
    if loop is None or loop.is_closed():
        loop = asyncio.new_event_loop()
        _loops.loop = loop
        _kept.add(loop)
    return loop.run_until_complete(coro)


def close_loop(loop: asyncio.AbstractEventLoop) -> None:
    """Close an idle loop of :func:`run_async` and, first, the model clients opened on it (their
    connections are bound to it). Nothing for a loop that runs or is closed."""
    if loop.is_running() or loop.is_closed():
        return
    from games.llm.providers import close_clients

    try:
        loop.run_until_complete(close_clients())
        loop.run_until_complete(loop.shutdown_asyncgens())
    finally:
        loop.close()


def close_thread_loop() -> None:
    """Close this thread's loop (:func:`close_loop`), for a thread about to end."""
    loop = getattr(_loops, "loop", None)
    _loops.loop = None
    if loop is not None:
        close_loop(loop)


@atexit.register
def close_kept_loops() -> None:
    """At exit, the loops threads kept (a server's background threads, a worker's) close their
    model clients: left to the garbage collector during the interpreter's shutdown, each client
    logged "Unclosed client session" to streams already closed."""
    for loop in list(_kept):
        with contextlib.suppress(Exception):
            close_loop(loop)


def call_async(func: Callable[..., Awaitable[Any]], *args: Any) -> Any:
    """Call an async function that does not call back into sync code (a channel-layer send)
    from sync code, and wait for it: on the server's loop from one of its threads while it runs
    (the in-memory channel layer must be used from the loop that owns it), else on this thread's
    loop (:func:`run_async`).

    On the server's loop it runs as a task of that loop (``run_coroutine_threadsafe``), not
    through asgiref's ``async_to_sync``, which would also carry the caller's context and send
    the coroutine's own sync calls back to this thread: work a send never needs, which took
    about 8% of a daphne's CPU (``benchmarks/ws_load.py --mode study``). A coroutine that
    calls ``sync_to_async`` must not come here from a server thread: it would wait on this
    blocked thread."""
    loop = server_loop()
    if loop is None:
        return run_async(func(*args))
    return asyncio.run_coroutine_threadsafe(func(*args), loop).result()


def start_thread(name: str, work: Callable[..., Any], *args: Any) -> threading.Thread:
    """Run ``work(*args)`` in a daemon thread of this process. The thread closes its own database
    connections and its event loop (with the model clients on it) when done, so finished jobs
    leave no idle connection behind."""

    def target() -> None:
        try:
            work(*args)
        finally:
            close_thread_loop()
            connections.close_all()

    thread = threading.Thread(target=target, name=name, daemon=True)
    thread.start()
    return thread
