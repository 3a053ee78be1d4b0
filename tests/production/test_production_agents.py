"""Model agents on the production topology (supervisord: two daphne, a steps executor, a worker,
beat; PostgreSQL and a Redis of the module's own), against a loopback model server speaking
OpenAI's wire format: an executor killed in the middle of model calls at 16 tables, and Redis
restarted mid-game. Every table finishes, no turn is lost or made twice, and a turn once
committed never calls its model again (the calls the server answered are the committed turns'
calls plus at most the ones cut off)."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.game_responder import GameResponder
from tests.fakes.llm_server import FakeLLMServer
from tests.production.topology import Topology

pytestmark = pytest.mark.production

SPEC = "openai-compatible:fault-test"
TABLES = 16


@pytest.fixture(scope="module")
def model() -> Iterator[FakeLLMServer]:
    with FakeLLMServer(GameResponder(), latency=0.4) as server:
        yield server


@pytest.fixture(scope="module")
def site(
    tmp_path_factory: pytest.TempPathFactory, redis_server, model: FakeLLMServer
) -> Iterator[Topology]:
    if not os.environ.get("DATABASE_URL", "").startswith(("postgres://", "postgresql://")):
        pytest.skip("the production topology needs DATABASE_URL (PostgreSQL)")
    topology = Topology(
        Path(tmp_path_factory.mktemp("agents-site")),
        REDIS_URL=redis_server["url"],
        OPENAI_COMPATIBLE_BASE_URL=model.openai_base_url,
        OPENAI_COMPATIBLE_API_KEY="test",
        STEPS_STALE_SECONDS="3",
    )
    topology.start()
    yield topology
    topology.stop()


def finish(site: Topology, tables: list[int], since: float, limit: float = 150) -> dict:
    report = site.call("tables_report", tables)
    while report["open"] and time.monotonic() - since < limit:
        time.sleep(1)
        report = site.call("tables_report", tables)
    return report


def test_an_executor_killed_mid_model_calls_loses_no_table_and_no_turn(
    site: Topology, model: FakeLLMServer
) -> None:
    before = len(model.requests)
    tables = site.call("model_tables", TABLES, SPEC)
    time.sleep(3)  # the games are under way: each table has a model call in flight
    pid = site.pid("steps:steps-0")
    assert pid, site.supervisorctl("status")
    os.killpg(pid, signal.SIGKILL)
    killed_at = time.monotonic()
    at_kill = site.call("tables_report", tables)
    assert at_kill["open"] == TABLES, "a game finished before the kill: make them longer"
    report = finish(site, tables, killed_at)
    assert report["open"] == 0, report
    assert report["missing"] == 0 and report["unreplayable"] == 0, report
    calls = site.call("model_calls", tables)
    made = len(model.requests) - before
    # each table had at most one turn cut off, of at most two calls (a corrective follow-up)
    assert calls <= made <= calls + 2 * TABLES, (calls, made)
    assert site.pid("steps:steps-0") not in (0, pid)  # supervisord started it again


def test_redis_restarted_mid_game_loses_no_table_and_no_turn(
    site: Topology, redis_server, model: FakeLLMServer
) -> None:
    before = len(model.requests)
    tables = site.call("model_tables", TABLES, SPEC)
    time.sleep(3)
    server = redis_server["server"]
    server.terminate()  # the stream, its group, the leases and the cache are gone with it
    server.wait(timeout=10)
    time.sleep(3)
    redis_server["server"] = redis_server["start"]()
    restarted_at = time.monotonic()
    report = finish(site, tables, restarted_at)
    assert report["open"] == 0, report
    assert report["missing"] == 0 and report["unreplayable"] == 0, report
    calls = site.call("model_calls", tables)
    made = len(model.requests) - before
    assert calls <= made <= calls + 2 * TABLES, (calls, made)
