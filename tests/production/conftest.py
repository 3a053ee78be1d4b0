"""Tests against the real production topology (``make production``): skipped, with the reason,
only when PostgreSQL and Redis are not configured (CI has both)."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from tests.production.topology import Topology

NEEDS = "the production topology needs DATABASE_URL (PostgreSQL) and REDIS_URL"


@pytest.fixture(scope="session")
def topology(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Topology]:
    database = os.environ.get("DATABASE_URL", "")
    if not database.startswith(("postgres://", "postgresql://")) or not os.environ.get(
        "REDIS_URL", ""
    ).startswith("redis"):
        pytest.skip(NEEDS)
    site = Topology(tmp_path_factory.mktemp("production-var"), AGENT_DELAY_SECONDS="0.1")
    site.start()
    yield site
    site.stop()
