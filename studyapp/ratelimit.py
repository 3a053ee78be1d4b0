"""A modest limit on new participants per client address at the study link, so one address cannot
fill a study (or its quotas) with records. Counters live in the cache (Redis when configured, so
every daphne process counts together): fixed windows of 10 seconds and of a minute, counted with
the cache's atomic increment."""

from __future__ import annotations

import time

from django.conf import settings
from django.core.cache import cache
from django.http import HttpRequest


def windows() -> tuple[tuple[int, int], ...]:
    """(seconds, most new participants in that many seconds)."""
    return ((10, settings.PARTICIPANT_RATE_BURST), (60, settings.PARTICIPANT_RATE_PER_MINUTE))


def over_limit(request: HttpRequest, scope: str = "participants") -> bool:
    """Count one new participant from this request's address; True when it is one too many.
    ``scope`` keeps separate counts under the same limits (the open games of the home page count
    as ``tables``, apart from study links)."""
    address = request.META.get("REMOTE_ADDR") or "unknown"
    now = int(time.time())
    over = False
    for seconds, limit in windows():
        key = f"{scope}:new:{address}:{seconds}:{now // seconds}"
        cache.add(key, 0, timeout=seconds * 2)
        try:
            count = cache.incr(key)
        except ValueError:  # the key expired between add and incr
            cache.set(key, 1, timeout=seconds * 2)
            count = 1
        over = over or count > limit
    return over
