"""The production topology as it fails: a crowd at the study link on a database role limited to
30 connections, a daphne process and a worker killed under the shipped supervisor, and sockets
that ask for what is not there or send more than a frame may hold."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import aiohttp
import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from tests.e2e.site import ROOT
from tests.production.arrivals import crowd, summary
from tests.production.test_production_topology import play, questioner
from tests.production.topology import Topology

pytestmark = pytest.mark.production


def test_a_hundred_people_reach_consent_within_the_roles_connection_limit(
    topology: Topology,
) -> None:
    """100 people open the study link within 3 s, shared over both daphne processes, while the
    site's role may hold 30 connections: nobody meets an error page, everyone reaches consent."""
    topology.manage("seed_demo")
    bases = [f"http://127.0.0.1:{port}" for port in topology.ports]
    arrivals = asyncio.run(crowd(bases, "demo", 100, spread=3.0))
    found = summary(arrivals)
    assert found["reached_consent"] == 100, found
    assert set(found["statuses"]) == {200}, found
    assert topology.connections() <= 30


async def _serving(port: int, until: float) -> list[int]:
    """GET the home page of ``port`` every 0.2 s until ``until``: the statuses (0: no answer)."""
    statuses = []
    timeout = aiohttp.ClientTimeout(total=5)
    async with aiohttp.ClientSession(timeout=timeout) as http:
        while time.monotonic() < until:
            try:
                async with http.get(f"http://127.0.0.1:{port}/") as response:
                    statuses.append(response.status)
            except (aiohttp.ClientError, TimeoutError):
                statuses.append(0)
            await asyncio.sleep(0.2)
    return statuses


def _back(topology: Topology, name: str, old: int, limit: float = 60) -> int:
    """Wait until supervisord runs ``name`` again under a new process id."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        pid = topology.pid(name)
        if pid and pid != old:
            return pid
        time.sleep(0.5)
    raise AssertionError(f"{name} did not come back: {topology.supervisorctl('status')}")


def _ready(topology: Topology, node: str, limit: float = 90) -> None:
    """Wait until the worker named ``node`` answers a ping."""
    celery = str(Path(sys.executable).with_name("celery"))
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        ping = subprocess.run(
            [celery, "-A", "studyapp", "inspect", "ping", "-d", node, "--timeout", "3"],
            cwd=ROOT,
            env=topology.env,
            capture_output=True,
            timeout=60,
        )
        if ping.returncode == 0:
            return
    raise AssertionError(f"worker {node} did not start")


def test_a_killed_daphne_and_worker_come_back_and_play_goes_on(topology: Topology) -> None:
    """Two daphne and two workers, as the issue's pilot ran: one of each killed with SIGKILL
    while a person plays. supervisord starts both again; the other daphne answers every request
    meanwhile, the other worker takes the agents' turns, and the person's table goes on."""
    web, worker = f"web:web-{topology.ports[0]}", "worker:worker-0"
    web_pid, worker_pid = topology.pid(web), topology.pid(worker)
    assert web_pid and worker_pid, topology.supervisorctl("status")
    second = topology.start_worker("second")  # the topology's other worker
    _ready(topology, f"tables-second@{socket.gethostname()}")
    topology.manage("seed_demo")
    person = topology.call("study_round", "demo")  # answered by an agent on a worker
    tables = topology.call("agent_tables", 4)  # a few, so that a wait is the kill's, not a queue

    async def scenario() -> tuple[str, list[int]]:
        playing = asyncio.create_task(
            play(
                topology,
                topology.ports[1],
                person["table"],
                person["session"],
                questioner(person["answer"]),
                limit=120,
            )
        )
        await asyncio.sleep(0.5)
        os.kill(web_pid, signal.SIGKILL)
        os.killpg(worker_pid, signal.SIGKILL)  # the worker and its pool processes
        # the other daphne keeps serving while the killed one comes back
        served = await _serving(topology.ports[1], time.monotonic() + 8)
        return await playing, served

    killed_at, killed_unix = time.monotonic(), time.time()
    status, served = asyncio.run(scenario())
    assert served and set(served) == {200}, served
    assert _back(topology, web, web_pid) and _back(topology, worker, worker_pid)
    topology._wait_for(topology.ports[0])
    assert set(asyncio.run(_serving(topology.ports[0], time.monotonic() + 1))) == {200}
    assert status == "finished"
    report = topology.call("tables_report", tables + [person["table"]])
    while report["open"] and time.monotonic() - killed_at < 90:
        time.sleep(1)
        report = topology.call("tables_report", tables + [person["table"]])
    assert report["open"] == 0, report
    assert report["missing"] == 0 and report["unreplayable"] == 0, report
    waits = topology.call("longest_waits", tables + [person["table"]])
    for wait in waits:
        wait["ended_after_kill_s"] = round(wait.pop("ended_at") - killed_unix, 1)
    assert report["gap_s"] <= 30, waits  # no table waited longer than 30 s
    os.killpg(second.pid, signal.SIGTERM)
    second.wait(timeout=60)


async def _until_closed(url: str, headers: dict, send: str | None = None) -> tuple[int, list]:
    """Open a socket, send ``send`` once the first frame came (if any), and read until the
    server closes it: the close code and the frames received."""
    frames: list = []
    async with connect(url, additional_headers=headers, open_timeout=30) as ws:
        try:
            if send is not None:
                frames.append(await asyncio.wait_for(ws.recv(), 30))
                await ws.send(send)
            while True:
                frames.append(await asyncio.wait_for(ws.recv(), 30))
        except ConnectionClosed as closed:
            return (closed.rcvd.code if closed.rcvd else 0), frames
    return 0, frames


async def _first_frame(url: str, headers: dict) -> str:
    async with connect(url, additional_headers=headers, open_timeout=30) as ws:
        return await asyncio.wait_for(ws.recv(), 30)


def test_unknown_socket_paths_and_oversized_frames_are_refused_with_a_reason(
    topology: Topology,
) -> None:
    port = topology.ports[0]
    origin = {"Origin": f"http://127.0.0.1:{port}"}
    log_before = topology.log_path.read_text()
    for path in ("/ws/nope/", "/ws/tables/abc/", "/ws/tables/"):
        code, frames = asyncio.run(_until_closed(f"ws://127.0.0.1:{port}{path}", origin))
        assert (code, frames) == (4404, []), path

    table = topology.call("mixed_undercover", 1, 3)
    headers = {**origin, "Cookie": f"sessionid={table['sessions'][0]}"}
    huge = json.dumps({"type": "clue", "text": "x" * (1024 * 1024)})
    url = f"ws://127.0.0.1:{port}/ws/tables/{table['table']}/"
    code, frames = asyncio.run(_until_closed(url, headers, send=huge))
    assert code == 4413
    assert "too large for the table" in frames[-1]
    assert asyncio.run(_first_frame(url, headers)).count("data-seq") == 1  # the seat opens again

    time.sleep(1)  # the log lines are written
    log = topology.log_path.read_text()[len(log_before) :]
    assert "Traceback" not in log and "No route found" not in log, log[-3000:]
    assert log.count("-byte frame (at most 65536): closed") == 1, log[-3000:]
