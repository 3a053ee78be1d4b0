"""The channels-redis layers (settings.CHANNEL_LAYER), with the site's Redis connection options:
a publish or subscription that meets a connection Redis has cut is sent again on a new one, and
an idle connection is checked before use (:func:`studyapp.cache.redis_resilience`). Without
them, each pooled connection of each process failed once, on its next use, and the broadcast
it carried was lost. The options are added here rather than in settings, which hold plain values.
"""

from __future__ import annotations

from typing import Any

from channels_redis.core import RedisChannelLayer as CoreLayer
from channels_redis.pubsub import RedisPubSubChannelLayer as PubSubLayer
from channels_redis.utils import decode_hosts

from studyapp.cache import redis_resilience


def resilient_hosts(hosts: Any) -> list[dict[str, Any]]:
    """Each host's connection options with the retry and health check added (its own win)."""
    return [{**redis_resilience(asynchronous=True), **host} for host in decode_hosts(hosts)]


class RedisPubSubChannelLayer(PubSubLayer):
    def __init__(self, *args: Any, hosts: Any = None, **kwargs: Any) -> None:
        super().__init__(*args, hosts=resilient_hosts(hosts), **kwargs)


class RedisChannelLayer(CoreLayer):
    def __init__(self, *args: Any, hosts: Any = None, **kwargs: Any) -> None:
        super().__init__(*args, hosts=resilient_hosts(hosts), **kwargs)
