"""Slots for model calls shared by every process of a site: at most ``limit`` calls to one model
spec in flight at once across all executors and workers (a hosted tier's limit on concurrent
requests), so a launch of hundreds of people does not answer its own burst with 429s.

On Redis a slot is a member of a sorted set per spec, scored by when it was taken; one Lua script
drops the slots older than ``MODEL_SLOT_SECONDS`` (a holder that died), then takes a slot if fewer
than ``limit`` are held. A caller that finds none free waits on its event loop (a short backoff),
holding no thread. Without Redis (``make run``) the slots are an asyncio semaphore of this
process. A spec without a limit (``MODEL_CALL_LIMITS``, ``MODEL_CALL_LIMIT``) takes no slot.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
import weakref
from collections.abc import AsyncIterator

from django.conf import settings
from django.core.cache import caches

from studyapp.cache import UNREACHABLE
from studyapp.claims import redis_client

TAKE = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[2])
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[3]) then
  redis.call('ZADD', KEYS[1], ARGV[1], ARGV[4])
  redis.call('PEXPIRE', KEYS[1], ARGV[5])
  return 1
end
return 0
"""

_local: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, asyncio.Semaphore]] = (
    weakref.WeakKeyDictionary()
)
_scripts: dict[int, object] = {}


def limit_for(spec: str) -> int:
    """The most calls to ``spec`` in flight across the site (0: no limit)."""
    return int(settings.MODEL_CALL_LIMITS.get(spec, settings.MODEL_CALL_LIMIT))


def redis_for_slots() -> object | None:
    return redis_client(caches["default"])


@contextlib.asynccontextmanager
async def model_slot(spec: str) -> AsyncIterator[None]:
    """Hold one of ``spec``'s slots for the duration of a call (none when it has no limit)."""
    limit = limit_for(spec)
    if limit <= 0:
        yield
        return
    client = redis_for_slots()
    if client is None:
        semaphores = _local.setdefault(asyncio.get_running_loop(), {})
        async with semaphores.setdefault(spec, asyncio.Semaphore(limit)):
            yield
        return
    key = caches["default"].make_and_validate_key(f"slots:{spec}")
    token = uuid.uuid4().hex
    held = await take(client, key, token, limit)
    try:
        yield
    finally:
        if held:
            with contextlib.suppress(*UNREACHABLE):
                client.zrem(key, token)


async def take(client: object, key: str, token: str, limit: int) -> bool:
    """Wait for a free slot. Redis away: the call goes ahead without one (a model call must not
    fail for the site's own bookkeeping); returns whether a slot is held."""
    script = _scripts.get(id(client))
    if script is None:
        script = _scripts[id(client)] = client.register_script(TAKE)  # type: ignore[attr-defined]
    lifetime = float(settings.MODEL_SLOT_SECONDS)
    pause = 0.02
    while True:
        now = time.time()
        try:
            if script(  # type: ignore[operator]
                keys=[key], args=[now, now - lifetime, limit, token, int(lifetime * 2000)]
            ):
                return True
        except UNREACHABLE:
            return False
        await asyncio.sleep(pause)
        pause = min(pause * 1.5, 0.25)


def held(spec: str) -> int | None:
    """How many of ``spec``'s slots are held now across the site (None without Redis)."""
    client = redis_for_slots()
    if client is None:
        return None
    key = caches["default"].make_and_validate_key(f"slots:{spec}")
    now = time.time()
    return int(client.zcount(key, now - float(settings.MODEL_SLOT_SECONDS), "+inf"))  # type: ignore[attr-defined]
