"""Django's Redis cache, with one client object per connection pool, and two compare-and-set
calls for the table driver's job leases (``claim``, ``delete_if``), each one round trip.

Django's client builds a ``redis.Redis`` for every call, about a millisecond of Python each (it
copies the command table), and the table driver makes several cache calls per move (a job's lease:
add, take, renew, release). The client object holds no state of a call, so one per pool serves
every call; the pools, and their connections, are Django's as before.

On a 2-core machine a round trip to Redis costs about as much CPU as the Python around it (the
loopback's work is charged to both ends), and a lease was read before it was written: two round
trips, twice per agent turn. ``claim`` and ``delete_if`` are one each, atomic on Redis (a Lua
script), and do the same with a read and a write on any other cache (the embedded mode's
in-process cache, whose jobs run on one event loop).
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.cache import BaseCache
from django.core.cache.backends.redis import RedisCache as DjangoRedisCache
from django.core.cache.backends.redis import RedisCacheClient
from kombu.exceptions import OperationalError as BrokerUnreachable
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

# Redis out of reach even after the pools' retries (``redis_resilience``): from the cache (a
# job's lease) or from the broker (sending a task). Work that can be done again later (scheduling
# a table's next step, which the next heartbeat or sweep does again) catches these.
UNREACHABLE: tuple[type[Exception], ...] = (
    RedisConnectionError,
    RedisTimeoutError,
    BrokerUnreachable,
)

# KEYS[1] is free (missing, or ARGV[1]): set it to ARGV[2] for ARGV[3] seconds.
CLAIM = """
local held = redis.call('GET', KEYS[1])
if held and held ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'EX', ARGV[3])
return 1
"""
DELETE_IF = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


def redis_resilience(*, asynchronous: bool) -> dict[str, Any]:
    """Connection options for redis-py pools (the channel layer's asyncio pools, this cache's
    sync pool): a command that meets a broken connection (a connection or timeout error) is sent
    again on a new one, ``REDIS_RETRIES`` times with a short backoff, and a connection idle longer
    than ``REDIS_HEALTH_CHECK_SECONDS`` is pinged (and replaced if dead) before use."""
    from redis.backoff import ExponentialBackoff
    from redis.exceptions import ConnectionError, TimeoutError

    if asynchronous:
        from redis.asyncio.retry import Retry
    else:
        from redis.retry import Retry
    return {
        "retry": Retry(ExponentialBackoff(cap=1.0, base=0.05), settings.REDIS_RETRIES),
        "retry_on_error": [ConnectionError, TimeoutError],
        "health_check_interval": settings.REDIS_HEALTH_CHECK_SECONDS,
    }


class ReusingClient(RedisCacheClient):
    def get_client(self, key: Any = None, *, write: bool = False) -> Any:
        index = self._get_connection_pool_index(write)
        clients = self.__dict__.setdefault("_clients", {})
        if index not in clients:
            clients[index] = self._client(connection_pool=self._get_connection_pool(write))
        return clients[index]


class RedisCache(DjangoRedisCache):
    def __init__(self, server: str, params: dict[str, Any]) -> None:
        options = {**redis_resilience(asynchronous=False), **params.get("OPTIONS", {})}
        super().__init__(server, {**params, "OPTIONS": options})
        self._class = ReusingClient

    def _script(self, source: str) -> Any:
        scripts = self.__dict__.setdefault("_scripts", {})
        if source not in scripts:
            scripts[source] = self._cache.get_client(write=True).register_script(source)
        return scripts[source]

    def claim(self, key: str, free: Any, value: Any, timeout: int) -> bool:
        dumps = self._cache._serializer.dumps
        args = [dumps(free), dumps(value), int(timeout)]
        return bool(self._script(CLAIM)(keys=[self.make_and_validate_key(key)], args=args))

    def delete_if(self, key: str, value: Any) -> bool:
        args = [self._cache._serializer.dumps(value)]
        return bool(self._script(DELETE_IF)(keys=[self.make_and_validate_key(key)], args=args))


def claim(cache: BaseCache, key: str, free: Any, value: Any, timeout: int) -> bool:
    """Set ``key`` to ``value`` for ``timeout`` seconds if it is missing or holds ``free``;
    False, and nothing changed, if it holds anything else."""
    if hasattr(cache, "claim"):
        return cache.claim(key, free, value, timeout)
    held = cache.get(key)
    if held is not None and held != free:
        return False
    cache.set(key, value, timeout)
    return True


def delete_if(cache: BaseCache, key: str, value: Any) -> bool:
    """Delete ``key`` if it still holds ``value`` (a lease nobody else has taken since)."""
    if hasattr(cache, "delete_if"):
        return cache.delete_if(key, value)
    if cache.get(key) != value:
        return False
    return cache.delete(key)
