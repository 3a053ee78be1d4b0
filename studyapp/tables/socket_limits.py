"""What one table socket may send (studyapp.tables.consumers): a frame's size, frames and moves
per second (a token bucket each), how often a heartbeat is heard, and how many sockets one seat
or one session may hold open in this process. Plain bookkeeping: the socket decides what to say
and log when a limit is reached."""

from __future__ import annotations

import time
from typing import Any

from django.conf import settings
from django.utils.translation import gettext_lazy

# A move is a few hundred bytes (the form's fields and htmx's headers); a frame larger than this
# is refused and the socket closed with TOO_LARGE. daphne is started with a larger limit of its
# own (4 MiB, deploy/ and the Procfile), so a frame up to that size gets this reason and a log
# line; beyond it daphne closes the socket itself (code 1009).
MAX_FRAME_BYTES = 64 * 1024
# Per socket: heartbeats closer together than this are ignored (the page sends one every
# HEARTBEAT_SECONDS), and moves beyond a small burst are refused until the bucket refills.
HEARTBEAT_MIN_SECONDS = 5.0
MOVE_BURST = settings.SOCKET_MOVE_BURST
MOVES_PER_SECOND = settings.SOCKET_MOVES_PER_SECOND
FRAME_BURST = settings.SOCKET_FRAME_BURST
FRAMES_PER_SECOND = settings.SOCKET_FRAMES_PER_SECOND
# This process's open table sockets, by ("seat", seat id) and ("session", session key).
OPEN_SOCKETS: dict[tuple[str, Any], set[Any]] = {}
TOO_FAST = gettext_lazy("Too many moves at once: wait a moment, then try again.")


class TokenBucket:
    """A burst of ``burst``, then ``rate`` a second."""

    def __init__(self, burst: float, rate: float) -> None:
        self.burst, self.rate = burst, rate
        self.tokens: float = burst
        self.at = 0.0

    def take(self) -> bool:
        """Whether one more may go now (and if so, it is counted)."""
        now = time.monotonic()
        self.tokens = min(self.burst, self.tokens + (now - self.at) * self.rate)
        self.at = now
        if self.tokens < 1:
            return False
        self.tokens -= 1
        return True


def count_socket(
    socket: Any, seat_id: int | None, session_key: str | None
) -> tuple[tuple[str, Any], ...] | None:
    """Count ``socket`` against SOCKETS_PER_SEAT and SOCKETS_PER_SESSION (this process's open
    sockets): the keys it is counted under, or None, and nothing counted, when one of them is
    full."""
    keys = []
    if seat_id is not None:
        keys.append((("seat", seat_id), settings.SOCKETS_PER_SEAT))
    if session_key:
        keys.append((("session", session_key), settings.SOCKETS_PER_SESSION))
    if any(len(OPEN_SOCKETS.get(key, ())) >= cap for key, cap in keys):
        return None
    for key, _ in keys:
        OPEN_SOCKETS.setdefault(key, set()).add(socket)
    return tuple(key for key, _ in keys)


def uncount_socket(socket: Any, counted_as: tuple[tuple[str, Any], ...]) -> None:
    for key in counted_as:
        held = OPEN_SOCKETS.get(key)
        if held is not None:
            held.discard(socket)
            if not held:
                del OPEN_SOCKETS[key]
