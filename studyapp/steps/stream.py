"""The stream (production: a broker and a Redis cache): where the site's steps wait in Redis,
one ``XADD`` per step with the time it is due, read by the executors through one consumer
group (:mod:`.consumer`)."""

from __future__ import annotations

import json
from typing import Any

from django.conf import settings
from django.core.cache import caches

from studyapp.claims import redis_client
from studyapp.dispatch import celery_mode

GROUP = "executors"


def redis() -> Any:
    """The site's Redis client (the cache's), or None when the cache is not Redis."""
    return redis_client(caches["default"])


def stream_key() -> str:
    """The stream's key, under the cache's prefix (one site's steps apart from another's)."""
    return caches["default"].make_and_validate_key("steps:stream")


def stream_mode() -> bool:
    """Whether steps go through the Redis stream to executor processes (a broker and a Redis
    cache are configured: the production topology)."""
    return celery_mode() and redis() is not None


def add(name: str, args: tuple, kwargs: dict[str, Any], due: float) -> None:
    redis().xadd(
        stream_key(),
        {"name": name, "args": json.dumps(args), "kwargs": json.dumps(kwargs), "due": repr(due)},
        maxlen=settings.STEPS_STREAM_MAXLEN,
        approximate=True,
    )


def unread() -> int | None:
    """Steps in the stream no executor has read yet (None without a stream)."""
    client = redis() if stream_mode() else None
    if client is None:
        return None
    try:
        for group in client.xinfo_groups(stream_key()):
            if group.get("name") in (GROUP, GROUP.encode()):
                return int(group.get("lag") or 0)
    except Exception:  # no stream yet, or Redis away
        return None
    return None
