"""The inline runner (no server, no broker: a command, a test with Django's test client): a
step's sync twin runs here, one step after another; a step that sends another queues it rather
than nesting it."""

from __future__ import annotations

import threading
from typing import Any

from studyapp.steps.executor import HANDLERS

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
