"""The database, channel-layer and cache settings Django reads (``DATABASES``, ``CHANNEL_LAYERS``,
``CACHES``), made from the URLs and sizes studyapp.settings read from the environment. Nothing
here reads the environment; settings.py explains each value where it reads it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from studyapp.env import redis_db

CHANNEL_BACKENDS = {
    "pubsub": "studyapp.layers.RedisPubSubChannelLayer",
    "core": "studyapp.layers.RedisChannelLayer",
}


def database(
    url: str,
    var_dir: Path,
    *,
    pool_size: int,
    pool_min: int,
    pool_timeout: float,
    pool_max_idle: float,
    conn_max_age: int,
) -> dict[str, Any]:
    """The default database: ``url`` (PostgreSQL through a pool of ``pool_size`` unless it is 0),
    or with no URL the embedded SQLite file under ``var_dir``."""
    if url:
        db = dj_database_url.parse(url, conn_health_checks=True)
        if db["ENGINE"] == "django.db.backends.postgresql" and pool_size:
            db["ENGINE"] = "studyapp.postgres"  # Django's, with pool_wait
            db["CONN_MAX_AGE"] = 0  # Django's pool requires it
            # the backend checks an idle connection by a poll of its socket, not a round trip
            db["CONN_HEALTH_CHECKS"] = False
            db.setdefault("OPTIONS", {})["pool"] = {
                "min_size": min(pool_min, pool_size),
                "max_size": pool_size,
                "timeout": pool_timeout,
                "max_idle": pool_max_idle,
            }
        else:
            db["CONN_MAX_AGE"] = conn_max_age
        return db
    var_dir.mkdir(parents=True, exist_ok=True)
    return {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": var_dir / "studyapp.sqlite3",
        # WAL lets readers go on while one writer commits; IMMEDIATE takes the write lock at the
        # start of a transaction and the timeout waits for it, so a classroom of joiners queues
        # for the lock instead of failing with "database is locked".
        "OPTIONS": {
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
            "transaction_mode": "IMMEDIATE",
            "timeout": 20,
        },
        # Tests use a file as well, not SQLite's in-memory database: its shared cache refuses a
        # second thread's read or write at once ("table is locked") where a file waits, and the
        # embedded server's background work runs in threads of its own.
        "TEST": {"NAME": var_dir / "test-studyapp.sqlite3"},
    }


def default_channel_prefix(redis_url: str, database_name: object) -> str:
    """A prefix naming this site by its Redis database and its database's name: the same on every
    machine of one deployment, different for two sites sharing one Redis server."""
    return f"studyapp.{redis_db(redis_url)}.{database_name}".replace(" ", "_")


def channel_layers(redis_url: str, layer: str, prefix: str) -> dict[str, Any]:
    """The channel layer: Redis (``layer`` pubsub or core) with a URL, else in this process."""
    if not redis_url:
        return {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    if layer not in CHANNEL_BACKENDS:
        raise ImproperlyConfigured(f"CHANNEL_LAYER must be pubsub or core, not {layer!r}")
    return {
        "default": {
            "BACKEND": CHANNEL_BACKENDS[layer],
            # redis-py 8 defaults: a 5 s socket timeout, which cuts channels-redis' own 5 s
            # blocking receive, and a pool of 100 that raises when hundreds of sockets join
            # groups at once. Give both room.
            "CONFIG": {
                "hosts": [{"address": redis_url, "socket_timeout": 30, "max_connections": 2000}],
                "prefix": prefix,
            },
        }
    }


def caches(redis_url: str) -> dict[str, Any]:
    """Redis when configured, shared by every process; else this process's memory."""
    if not redis_url:
        return {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
    return {
        "default": {
            "BACKEND": "studyapp.cache.RedisCache",
            "LOCATION": redis_url,
            "KEY_PREFIX": "studyapp",
        }
    }
