"""Waiting in the page for a JavaScript condition without Playwright's ``wait_for_function``: its
polling evaluates the predicate with ``eval`` inside the page, which the site's
Content-Security-Policy (``script-src 'self'``, no ``'unsafe-eval'``) refuses, as it should. This
asks the page over the DevTools protocol instead (``page.evaluate``, which a page's CSP does not
govern), every 50 ms, so every test still runs under the site's real policy."""

from __future__ import annotations

import time
from typing import Any


def wait_for_js(page: Any, expression: str, timeout: float = 15.0) -> Any:
    """The first truthy value of ``expression`` in the page (an expression, or a function's
    source), waiting up to ``timeout`` seconds; TimeoutError after that."""
    deadline = time.monotonic() + timeout
    while True:
        value = page.evaluate(expression)
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"the page never satisfied: {expression}")
        time.sleep(0.05)
