"""Tests against the real production topology (``make production``): skipped, with the reason,
only when PostgreSQL and Redis are not configured (CI has both)."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Iterator

import pytest
import redis

from tests.e2e.site import free_port
from tests.production.topology import Topology, own_redis_url

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
        # Its own Redis database: it lives until the session ends, and its steps executor would
        # otherwise read the stream the test process's own executors are tested on (the stream's
        # key does not name the database), taking their steps and making the stream again when a
        # test deletes it (tests/studyapp/test_steps.py, tests/studyapp/steps).
        REDIS_URL=own_redis_url(3),
        connection_limit=30,
        AGENT_DELAY_SECONDS="0.1",
        # a crowd from one address (the tests' own) at a study link
        PARTICIPANT_RATE_BURST="1000",
        PARTICIPANT_RATE_PER_MINUTE="1000",
    )
    site.start()
    yield site
    site.stop()


@pytest.fixture(scope="module")
def redis_server(tmp_path_factory: pytest.TempPathFactory):
    """A Redis server of the module's own, which the test stops and starts again."""
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip("redis-server is not installed")
    port = free_port()
    folder = tmp_path_factory.mktemp("own-redis")

    def start() -> subprocess.Popen:
        server = subprocess.Popen(
            [binary, "--port", str(port), "--save", "", "--appendonly", "no", "--dir", str(folder)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                redis.Redis(port=port).ping()
                return server
            except redis.ConnectionError:
                time.sleep(0.1)
        raise RuntimeError("redis-server did not start")

    holder = {"server": start()}
    holder["start"] = start  # type: ignore[assignment]
    holder["url"] = f"redis://127.0.0.1:{port}/0"  # type: ignore[assignment]
    yield holder
    holder["server"].terminate()
    holder["server"].wait(timeout=10)
