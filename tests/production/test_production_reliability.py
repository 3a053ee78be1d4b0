"""Issue 35 on the production topology (supervisord, two daphne, a worker, beat, PostgreSQL and
Redis): two `manage.py prolific pay` runs at once make one pay call; the supervised daphne takes
a trusted proxy's X-Forwarded-For as the client's address; with the site's Redis unreachable a
new participant at the study link gets no 500."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from decimal import Decimal
from pathlib import Path

import pytest
import redis

from tests.e2e.site import ROOT
from tests.fakes.prolific_server import FakeProlific
from tests.production.arrivals import arrive
from tests.production.topology import Topology

pytestmark = pytest.mark.production

PROLIFIC_STUDY = "60f6acb180a7b59ac0621f9e"


def test_two_pay_runs_at_once_make_one_pay_call(topology: Topology) -> None:
    pids = topology.call("payable_people", "paying-twice", PROLIFIC_STUDY, 6)
    with FakeProlific() as prolific:
        for pid in pids:
            prolific.add_submission(f"sub-{pid}", pid, PROLIFIC_STUDY)
        prolific.delay = 0.5  # a slow Prolific: both runs are under way at once
        env = {
            **topology.env,
            "DJANGO_SETTINGS_MODULE": "studyapp.settings",
            "PROLIFIC_API_TOKEN": prolific.token,
            "PROLIFIC_API_URL": prolific.url,
        }
        runs = [
            subprocess.Popen(
                [sys.executable, "manage.py", "prolific", "pay", "paying-twice"],
                cwd=ROOT,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for _ in range(2)
        ]
        outputs = [run.communicate(timeout=120) for run in runs]
    assert [run.returncode for run in runs] == [0, 0], outputs
    assert len(prolific.pay_calls) == 1, prolific.requests
    assert sorted(prolific.payments) == sorted((pid, Decimal("2.00")) for pid in pids)
    said = sorted(out for out, _ in outputs)
    assert "0 done, 0 failed" in said[0] and "6 done, 0 failed" in said[1], outputs
    booked = topology.call("bonuses_paid", "paying-twice")
    assert booked["paid"] == sorted(pids)
    assert booked["batches"] == [["paid", prolific.pay_calls[0]]]


def test_the_supervised_daphne_counts_the_forwarded_address(topology: Topology) -> None:
    """Each daphne under supervisord: a request from a trusted proxy (loopback, the default) is
    counted against the forwarded address, and what a client wrote left of the proxy's entry is
    not believed."""
    topology.manage("seed_demo")
    client = redis.Redis.from_url(topology.env["REDIS_URL"])
    for port in topology.ports:
        base = f"http://127.0.0.1:{port}"
        forwarded = f"203.0.113.{port % 200}"
        header = {"X-Forwarded-For": f"6.6.6.6, {forwarded}"}
        arrival = asyncio.run(arrive(base, "demo", headers=header))
        assert arrival.consented_page, arrival
        keys = [k.decode() for k in client.scan_iter(match=f"*participants:new:{forwarded}:*")]
        assert len(keys) >= 2, keys  # the 10-second and the minute window
        assert not list(client.scan_iter(match="*participants:new:6.6.6.6:*"))


def test_with_redis_unreachable_a_new_participant_gets_no_500(
    tmp_path_factory: pytest.TempPathFactory, redis_server
) -> None:
    if not os.environ.get("DATABASE_URL", "").startswith(("postgres://", "postgresql://")):
        pytest.skip("the production topology needs DATABASE_URL (PostgreSQL)")
    site = Topology(
        Path(tmp_path_factory.mktemp("redis-down-site")),
        REDIS_URL=redis_server["url"],
        PARTICIPANT_RATE_BURST="1000",
        PARTICIPANT_RATE_PER_MINUTE="1000",
    )
    site.start()
    try:
        site.manage("seed_demo")
        server = redis_server["server"]
        server.terminate()
        server.wait(timeout=10)
        bases = [f"http://127.0.0.1:{port}" for port in site.ports]
        down = [asyncio.run(arrive(bases[i % 2], "demo", timeout=60)) for i in range(4)]
        redis_server["server"] = redis_server["start"]()
        time.sleep(3)
        after = [asyncio.run(arrive(bases[i % 2], "demo", timeout=60)) for i in range(2)]
        worker = site.supervisorctl("status", "worker:*")
    finally:
        site.stop()
    assert all(a.consented_page for a in down), [(a.statuses, a.error) for a in down]
    assert all(500 not in a.statuses for a in down + after)
    assert all(a.consented_page for a in after)
    assert "RUNNING" in worker, worker
    log = site.log_path.read_text()
    assert "rate limit participants not counted (let through)" in log
