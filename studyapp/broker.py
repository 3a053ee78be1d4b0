"""Celery's Redis transport, with the fix that keeps a worker alive when Redis goes away, and one
client per channel.

When the broker connection drops, Celery's consumer releases the kombu connection, which first
lets go of its transport's client and then closes its channels; closing a channel gives back the
messages it had not acknowledged, which needs a Redis client, built from the transport's client,
now None: ``AttributeError("'NoneType' object has no attribute 'hostname'")`` escaped Celery's
``ignore_errors`` (it ignores connection errors only) and the worker's main process exited
(found in the issue-35 fault pass: Redis stopped for 20 s under an 8-person pilot). Here that
case is a connection error, which Celery ignores; the consumer then reconnects as usual, and the
unacknowledged messages come back after the visibility timeout as for any lost connection.

kombu builds a new redis-py client object for every command it sends outside its event loop
(each task published, each message acknowledged); building one costs more CPU than the command
(redis-py fills a table of response callbacks per client), about 4% of a worker's CPU on
``benchmarks/ws_load.py --mode study``. Here a channel keeps one synchronous client per
connection pool, as :class:`studyapp.cache.ReusingClient` does for the cache (a redis-py client
with a pool is safe to share between threads).

``settings.CELERY_BROKER_TRANSPORT`` names :class:`Transport` for ``redis://`` brokers.
"""

from __future__ import annotations

from typing import Any

from kombu.transport import redis as kombu_redis
from redis.exceptions import ConnectionError as RedisConnectionError


class Channel(kombu_redis.Channel):
    def _connparams(self, asynchronous: bool = False) -> dict[str, Any]:
        if self.connection is None or self.connection.client is None:
            raise RedisConnectionError("the broker connection was released")
        return super()._connparams(asynchronous=asynchronous)

    def _create_client(self, asynchronous: bool = False) -> Any:
        if asynchronous:
            return super()._create_client(asynchronous=True)
        client = self.__dict__.get("_sync_client")
        if client is None or client.connection_pool is not self.pool:  # a new pool after a fork
            client = self.__dict__["_sync_client"] = super()._create_client()
        return client


class Transport(kombu_redis.Transport):
    Channel = Channel
