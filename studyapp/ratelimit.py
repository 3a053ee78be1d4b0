"""A modest limit on new participants per client address at the study link, so one address cannot
fill a study (or its quotas) with records. Counters live in the cache (Redis when configured, so
every daphne process counts together): fixed windows of 10 seconds and of a minute, counted with
the cache's atomic increment.

A limit that cannot be counted (Redis out of reach) lets the request through, logged once a
minute per process: turning every new person away while Redis restarts would cost the study
far more than a few uncounted arrivals."""

from __future__ import annotations

import logging
import time

from django.conf import settings
from django.core.cache import cache
from django.http import HttpRequest

from studyapp.cache import UNREACHABLE

log = logging.getLogger(__name__)
_last_warned = 0.0


def windows() -> tuple[tuple[int, int], ...]:
    """(seconds, most new participants in that many seconds)."""
    return ((10, settings.PARTICIPANT_RATE_BURST), (60, settings.PARTICIPANT_RATE_PER_MINUTE))


def over_limit(request: HttpRequest, scope: str = "participants") -> bool:
    """Count one new participant from this request's address; True when it is one too many.
    ``scope`` keeps separate counts under the same limits (the open games of the home page count
    as ``tables``, apart from study links)."""
    try:
        return _count(request, scope)
    except UNREACHABLE as err:
        _warn(scope, err)
        return False


def _warn(scope: str, err: Exception) -> None:
    global _last_warned
    if time.monotonic() - _last_warned >= 60:
        _last_warned = time.monotonic()
        log.warning(
            "rate limit %s not counted (let through): the cache is unreachable: %s", scope, err
        )


def _count(request: HttpRequest, scope: str) -> bool:
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


def over_rate(key: str, seconds: int, limit: int) -> bool:
    """Count one event under ``key`` in a fixed window of ``seconds``; True once the window holds
    more than ``limit``. Fails open, as :func:`over_limit` does."""
    window = int(time.time()) // seconds
    name = f"rate:{key}:{seconds}:{window}"
    try:
        cache.add(name, 0, timeout=seconds * 2)
        try:
            count = cache.incr(name)
        except ValueError:
            cache.set(name, 1, timeout=seconds * 2)
            count = 1
    except UNREACHABLE as err:
        _warn(key.split(":", 1)[0], err)
        return False
    return count > limit
