"""Django's Redis cache, with one client object per connection pool.

Django's client builds a ``redis.Redis`` for every call, about a millisecond of Python each (it
copies the command table), and the table driver makes several cache calls per move (a job's lease:
add, take, renew, release). The client object holds no state of a call, so one per pool serves
every call; the pools, and their connections, are Django's as before.
"""

from __future__ import annotations

from typing import Any

from django.core.cache.backends.redis import RedisCache as DjangoRedisCache
from django.core.cache.backends.redis import RedisCacheClient


class ReusingClient(RedisCacheClient):
    def get_client(self, key: Any = None, *, write: bool = False) -> Any:
        index = self._get_connection_pool_index(write)
        clients = self.__dict__.setdefault("_clients", {})
        if index not in clients:
            clients[index] = self._client(connection_pool=self._get_connection_pool(write))
        return clients[index]


class RedisCache(DjangoRedisCache):
    def __init__(self, server: str, params: dict[str, Any]) -> None:
        super().__init__(server, params)
        self._class = ReusingClient
