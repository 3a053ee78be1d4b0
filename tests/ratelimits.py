"""The site's rate limits count in fixed windows (studyapp.ratelimit: ten seconds and a minute;
the socket and HTTP move paths: ten seconds). A test that sends a burst and expects the limit to
refuse its tail starts the burst at a window's start, so that a slow machine does not spread it
over two windows (each of which then holds too few to refuse)."""

from __future__ import annotations

import time


def at_window_start(seconds: int = 10) -> None:
    """Wait for the next fixed window of ``seconds`` to begin."""
    time.sleep(seconds - time.time() % seconds)
