"""The Redis cache backend (studyapp.cache): Django's, with one client object per pool. The
leases kept in it are tested in tests/studyapp/test_claims.py."""

from __future__ import annotations

import os
import uuid

import pytest

from studyapp.cache import RedisCache

REDIS_URL = os.environ.get("REDIS_URL", "")
pytestmark = pytest.mark.skipif(not REDIS_URL, reason="needs Redis (REDIS_URL)")


@pytest.fixture
def cache() -> RedisCache:
    backend = RedisCache(REDIS_URL, {"KEY_PREFIX": f"test-{uuid.uuid4().hex}"})
    yield backend
    backend.delete_many(["lease", "a"])  # not clear(): that empties the whole Redis database


def test_it_keeps_djangos_cache_semantics(cache: RedisCache) -> None:
    assert cache.add("lease", "queued", 5) is True
    assert cache.add("lease", "other", 5) is False  # what the table driver's leases rely on
    assert cache.get("lease") == "queued"
    cache.set("lease", {"running": 1}, 5)
    assert cache.get("lease") == {"running": 1}
    cache.delete("lease")
    assert cache.get("lease") is None


def test_one_client_serves_every_call(cache: RedisCache) -> None:
    client = cache._cache.get_client(write=True)
    cache.set("a", 1, 5)
    assert cache._cache.get_client(write=True) is client
    assert cache._cache.get_client(write=False) is cache._cache.get_client(write=False)
