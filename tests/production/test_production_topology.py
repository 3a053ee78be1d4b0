"""The production topology (``make production``: supervisord, two daphne, a Celery worker, beat,
DEBUG off, PostgreSQL and Redis) played over real WebSockets, and the steps executor killed mid-game."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import time
import urllib.request

import pytest
from websockets.asyncio.client import connect

from tests.production.topology import Topology

pytestmark = pytest.mark.production

SEQ = re.compile(r'data-seq="(\d+)"')
STATUS = re.compile(r'data-status="(\w+)"')
TARGET = re.compile(r'name="target" value="(\d+)"')
OVER = ("finished", "aborted")


async def play(site: Topology, port: int, table: int, session: str, move, limit: float) -> str:
    """One browser at a table: answer every frame that asks for a move with ``move(frame, n)``
    until the table is over. Returns the last status seen."""
    url = f"ws://127.0.0.1:{port}/ws/tables/{table}/"
    headers = {"Cookie": f"sessionid={session}", "Origin": f"http://127.0.0.1:{port}"}
    status, sent_at_seq, moves = "", -1, 0
    async with connect(url, additional_headers=headers, open_timeout=30) as ws:
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            frame = await asyncio.wait_for(ws.recv(), timeout=deadline - time.monotonic())
            status = STATUS.search(frame)[1] if STATUS.search(frame) else status
            if status in OVER:
                return status
            seq = int(SEQ.search(frame)[1])
            action = move(frame, moves)
            rejected = 'role="alert"' in frame  # the reason a move was refused: try again
            if action is not None and (seq > sent_at_seq or rejected):
                sent_at_seq = seq
                moves += 1
                await ws.send(json.dumps(action))
    return status


def questioner(answer: str):
    def move(frame: str, n: int) -> dict | None:
        if 'id="question-text"' not in frame:
            return None
        text = f"Is it a {answer}?" if n >= 2 else ["Is it alive?", "Is it bigger than a shoe?"][n]
        return {"type": "question", "text": text}

    return move


def undercover_player(frame: str, n: int) -> dict | None:
    if 'id="clue-text"' in frame:
        seq = SEQ.search(frame)[1]
        return {"type": "clue", "text": f"something found at home, turn {seq} try {n}"}
    targets = TARGET.findall(frame)
    if targets:
        return {"type": "vote", "target": int(targets[0])}
    return None


def test_healthz_names_the_database_redis_and_a_celery_worker(topology: Topology) -> None:
    for port in topology.ports:  # every daphne process, asked as a monitor would: no login
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=30) as response:
            assert response.status == 200
            body = json.loads(response.read())
        assert body["status"] == "ok", body
        assert body["checks"]["database"] == "ok"
        assert body["checks"]["redis"] == "ok"
        assert body["checks"]["celery"].startswith("ok ("), body


def test_a_study_participant_plays_their_own_round(topology: Topology) -> None:
    topology.manage("seed_demo")
    start = topology.call("study_round", "demo")
    status = asyncio.run(
        play(
            topology,
            topology.ports[1],
            start["table"],
            start["session"],
            questioner(start["answer"]),
            limit=60,
        )
    )
    assert status == "finished"
    result = topology.call("round_result", start["participant"])
    kinds = [(event.get("seat"), event["type"]) for event in result["events"]]
    assert not [kind for kind in kinds if kind[1] == "takeover"], kinds
    assert kinds[0] == (0, "question") and (1, "answer") in kinds
    assert [e["text"] for e in result["events"] if e["type"] == "question"][:2] == [
        "Is it alive?",
        "Is it bigger than a shoe?",
    ]
    assert result["reward"] == result["outcome"] > 0
    assert result["total_reward"] == result["reward"]


def test_two_people_and_three_agents_finish_an_undercover_table(topology: Topology) -> None:
    table = topology.call("mixed_undercover", 2, 3)

    async def both() -> list[str]:
        return await asyncio.gather(
            *(
                play(topology, port, table["table"], key, undercover_player, limit=90)
                for port, key in zip(topology.ports, table["sessions"], strict=True)
            )
        )

    assert asyncio.run(both()) == ["finished", "finished"]
    report = topology.call("tables_report", [table["table"]])
    assert report["finished"] == 1 and report["missing"] == 0 and report["unreplayable"] == 0


def test_a_killed_executor_loses_no_table_and_no_turn(topology: Topology) -> None:
    # Agents' turns are the steps executor's now (issue 41), not a Celery worker's: the process
    # killed mid-game is the executor supervisord runs. Enough games that they are still being
    # played when it dies (a broadcast is one PUBLISH: agent turns are cheap).
    tables = topology.call("agent_tables", 64)
    time.sleep(0.5)
    pid = topology.pid("steps:steps-0")
    assert pid, topology.supervisorctl("status")
    os.killpg(pid, signal.SIGKILL)  # the executor, mid-game
    killed_at = time.monotonic()
    at_kill = topology.call("tables_report", tables)
    assert at_kill["open"] > 0, "every table finished before the kill: nothing was tested"
    report = at_kill
    while report["open"] and time.monotonic() - killed_at < 90:
        time.sleep(1)
        report = topology.call("tables_report", tables)
    assert report["open"] == 0, report
    assert report["missing"] == 0 and report["unreplayable"] == 0, report
    assert report["gap_s"] <= 30, report  # no table waited longer than the bound
