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
    # The site's role may hold 30 connections, as on a small hosted database: the pools of two
    # daphne processes, a worker and beat fit with room for the tests' own commands.
    site = Topology(
        tmp_path_factory.mktemp("production-var"),
        connection_limit=30,
        AGENT_DELAY_SECONDS="0.1",
        # a crowd from one address (the tests' own) at a study link
        PARTICIPANT_RATE_BURST="1000",
        PARTICIPANT_RATE_PER_MINUTE="1000",
    )
    site.start()
    yield site
    site.stop()
