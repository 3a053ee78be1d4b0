"""The Redis cache backend (studyapp.cache): Django's, with one client object per pool, and the
leases' compare-and-set calls."""

from __future__ import annotations

import os
import uuid

import pytest
from django.core.cache.backends.locmem import LocMemCache

from studyapp.cache import RedisCache, claim, delete_if

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


def test_claim_takes_a_free_or_queued_key_and_nothing_else(cache: RedisCache) -> None:
    assert claim(cache, "lease", "queued", "running:a", 5) is True  # missing: free
    assert cache.get("lease") == "running:a"
    assert claim(cache, "lease", "queued", "running:b", 5) is False  # another copy runs
    assert cache.get("lease") == "running:a"
    cache.set("lease", "queued", 5)
    assert claim(cache, "lease", "queued", "running:b", 5) is True
    assert 0 < cache._cache.get_client().ttl(cache.make_and_validate_key("lease")) <= 5


def test_delete_if_leaves_a_lease_someone_else_took(cache: RedisCache) -> None:
    cache.set("lease", "running:a", 5)
    assert delete_if(cache, "lease", "running:b") is False
    assert cache.get("lease") == "running:a"
    assert delete_if(cache, "lease", "running:a") is True
    assert cache.get("lease") is None


@pytest.mark.parametrize("backend", ["locmem", "redis"])
def test_both_backends_agree(backend: str, cache: RedisCache) -> None:
    """The embedded mode's cache gets the same answers from the plain read-and-write path."""
    store = cache if backend == "redis" else LocMemCache(f"lease-{uuid.uuid4().hex}", {})
    answers = [
        claim(store, "lease", "queued", "running:a", 5),
        claim(store, "lease", "queued", "running:b", 5),
        delete_if(store, "lease", "running:b"),
        delete_if(store, "lease", "running:a"),
        store.get("lease"),
    ]
    assert answers == [True, False, False, True, None]
