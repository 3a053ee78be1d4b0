"""Every wait has an end, on the production topology (two daphne, a Celery worker, beat,
PostgreSQL, Redis) with the answering model a real loopback server (tests/fakes/llm_server.py):
a hung model at a table with a person (the person is told it is slow, and the table goes on
within the live budget), and a model that keeps failing (the table pauses, the sweep ends it
after its limit, and the person gets their completion code). The limits are shrunk through the
site's environment so the tests stay short."""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.llm_server import FakeLLMServer
from tests.production.conftest import NEEDS
from tests.production.test_production_broadcasts import Browser
from tests.production.topology import Topology, own_redis_url

pytestmark = pytest.mark.production

ORACLE = "openai-compatible:oracle"
LIVE_TURN = 4.0  # LIVE_AGENT_TURN_SECONDS
PAUSED_LIMIT = 3.0  # PAUSED_TABLE_LIMIT_SECONDS
SWEEP = 2.0  # TABLE_SWEEP_SECONDS


@pytest.fixture(scope="module")
def model() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as server:
        yield server


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory, model: FakeLLMServer) -> Iterator[Topology]:
    import os

    if not os.environ.get("DATABASE_URL", "").startswith("postgres") or not os.environ.get(
        "REDIS_URL", ""
    ).startswith("redis"):
        pytest.skip(NEEDS)
    topology = Topology(
        Path(tmp_path_factory.mktemp("production-waits")),
        AGENT_DELAY_SECONDS="0.1",
        REDIS_URL=own_redis_url(1),  # its own Celery queue beside the session's site
        OPENAI_BASE_URL=model.openai_base_url,
        OPENAI_API_KEY="site-key",
        LIVE_MODEL_TIMEOUT_SECONDS="60",  # the batch timeout: only the turn's budget cuts it
        LIVE_MODEL_RETRIES="0",
        LIVE_AGENT_TURN_SECONDS=str(LIVE_TURN),
        SLOW_AGENT_NOTICE_SECONDS="1",
        MAX_ORACLE_FAILURES="1",
        PAUSED_TABLE_LIMIT_SECONDS=str(PAUSED_LIMIT),
        TABLE_SWEEP_SECONDS=str(SWEEP),
    )
    topology.start()
    yield topology
    topology.stop()


async def first_board(browser: Browser, seq: int, limit: float, where: str = "") -> str:
    """The first board at ``seq`` (and containing ``where``), within ``limit`` seconds."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        for _, shown, frame in browser.boards:
            if shown == seq and where in frame:
                return frame
        await asyncio.sleep(0.05)
    raise AssertionError(f"no board at seq {seq} with {where!r}: {browser.boards[-1:]}")


def test_a_hung_model_shows_a_notice_and_the_table_goes_on_within_the_live_budget(
    site: Topology, model: FakeLLMServer
) -> None:
    model.server_error_share, model.latency = 0.0, 20.0  # far past the live budget
    tables = site.call("people_tables", 1, ORACLE, {"max_oracle_failures": 3})

    async def play() -> tuple[str, float, Browser, str]:
        browser = Browser(site.ports[0], tables["tables"][0], tables["sessions"][0])
        await browser.open()
        await first_board(browser, 0, 15)
        await browser.ask("Is it alive?")
        asked_at = time.monotonic()
        waiting = await first_board(browser, 1, 10)
        withdrawn = await first_board(browser, 2, LIVE_TURN + 10)
        took = time.monotonic() - asked_at
        await browser.close()
        return waiting, took, browser, withdrawn

    waiting, took, browser, withdrawn = asyncio.run(play())
    notice = re.search(r'id="slow-agent" data-show-after="(\d+)"[^>]*>(.*?)</p>', waiting)
    assert notice, waiting
    assert notice[1] == "1" and "taking longer than usual" in notice[2]
    assert "your question is withdrawn" in notice[2]
    assert 'id="question-voided"' in withdrawn and 'id="question-text"' in withdrawn
    print({"hung_model_seconds_from_question_to_withdrawn": round(took, 2)})
    assert took <= LIVE_TURN + 3, took  # the live budget (and a margin), not 60 s times 5
    assert browser.closed == ""
    log = site.call("table_logs", tables["tables"])[0]
    assert log["types"] == ["question", "void"] and log["status"] == "playing"


def test_a_table_paused_by_model_failures_ends_by_the_policy_and_the_person_gets_their_code(
    site: Topology, model: FakeLLMServer
) -> None:
    model.server_error_share, model.latency = 1.0, 0.0  # the oracle's model is down
    start = site.call("study_with_oracle", "paused-oracle", ORACLE)

    async def play() -> tuple[float, str, Browser]:
        browser = Browser(site.ports[1], start["table"], start["session"])
        await browser.open()
        await first_board(browser, 0, 15)
        await browser.ask("Is it alive?")
        await first_board(browser, 2, 15, 'data-status="paused"')
        paused_at = time.monotonic()
        # The sweep ends it once the limit has passed: within the limit and a sweep or two.
        ended = await first_board(browser, 3, PAUSED_LIMIT + 2 * SWEEP + 8, 'data-status="aborted"')
        waited = time.monotonic() - paused_at
        await browser.close()
        return waited, ended, browser

    waited, ended, browser = asyncio.run(play())
    print({"paused_table_ended_after_s": round(waited, 2)})
    assert 'id="ended-reason"' in ended and 'id="continue"' in ended
    assert browser.closed == ""
    state = site.call("participant_state", start["participant"])
    assert state["round_booked"] and state["rounds_finished"] == 1, state
    assert state["status"] == "finished" and state["next_step"] == "done", state
    assert state["code"] == "FIN123"
