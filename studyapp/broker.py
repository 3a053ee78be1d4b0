"""Celery's Redis transport, with the one fix that keeps a worker alive when Redis goes away.

When the broker connection drops, Celery's consumer releases the kombu connection, which first
lets go of its transport's client and then closes its channels; closing a channel gives back the
messages it had not acknowledged, which needs a Redis client, built from the transport's client,
now None: ``AttributeError("'NoneType' object has no attribute 'hostname'")`` escaped Celery's
``ignore_errors`` (it ignores connection errors only) and the worker's main process exited
(found in the issue-35 fault pass: Redis stopped for 20 s under an 8-person pilot). Here that
case is a connection error, which Celery ignores; the consumer then reconnects as usual, and the
unacknowledged messages come back after the visibility timeout as for any lost connection.

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


class Transport(kombu_redis.Transport):
    Channel = Channel
