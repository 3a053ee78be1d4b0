"""Django's Redis cache, with one client object per connection pool, and what a caller needs to
know of Redis being away (:data:`UNREACHABLE`, :func:`redis_resilience`).

Django's client builds a ``redis.Redis`` for every call, about a millisecond of Python each (it
copies the command table), and the table driver makes several cache calls per move (a job's lease:
queue, claim, renew, release; :mod:`studyapp.claims`, which uses this client's redis-py ``Lock``).
The client object holds no state of a call, so one per pool serves every call; the pools, and
their connections, are Django's as before.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
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
