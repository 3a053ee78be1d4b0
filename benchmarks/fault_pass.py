"""The issue-35 fault pass on the production topology: an 8-person Who is Undercover pilot
(`manage.py pilot demo-undercover`, real browsers' requests and sockets) runs through each fault,
then the pilot's own report says every participant's status, code and pay, and whether every
table finished; the longest wait between two turns of those tables is added.

Faults: none (the baseline), Redis stopped for 20 s, every database backend of the site
terminated every 2.5 s for 30 s, a daphne killed with SIGKILL, the worker killed with SIGKILL,
Redis's database flushed (``FLUSHDB``) while the pilot plays.
Prints one JSON object per fault.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/x REDIS_URL=redis://127.0.0.1:6379/14 \\
        .venv/bin/python benchmarks/fault_pass.py [--faults none,redis,db,daphne,worker,flush]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psycopg
import redis

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.e2e.site import ROOT, free_port  # noqa: E402
from tests.production.topology import Topology  # noqa: E402


class OwnRedis:
    """A redis-server of the fault pass's own (the ``redis`` fault stops and starts it)."""

    START_SECONDS = 10.0

    def __init__(self) -> None:
        self.port = free_port()
        self.folder = tempfile.mkdtemp(prefix="fault-redis-")
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.process = subprocess.Popen(
            [
                shutil.which("redis-server") or "redis-server",
                "--port",
                str(self.port),
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                self.folder,
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + self.START_SECONDS
        while time.monotonic() < deadline:
            try:
                redis.Redis(port=self.port).ping()
                return
            except redis.ConnectionError:
                if self.process.poll() is not None:
                    break
                time.sleep(0.1)
        exited = self.process.poll()
        self.stop()
        if exited is not None:
            raise RuntimeError(f"redis-server on port {self.port} exited with {exited} at start")
        raise RuntimeError(
            f"redis-server on port {self.port} did not answer within {self.START_SECONDS:g} s"
        )

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(timeout=10)
            self.process = None


def terminate_backends(database: str, seconds: float, every: float) -> int:
    killed = 0
    until = time.monotonic() + seconds
    with psycopg.connect(os.environ["DATABASE_URL"], autocommit=True) as conn:
        while time.monotonic() < until:
            rows = conn.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE datname = %s AND pid <> pg_backend_pid()",
                [database],
            ).fetchall()
            killed += len(rows)
            time.sleep(every)
    return killed


def longest_waits(site: Topology, since: float) -> float:
    code = (
        "import json, django; django.setup(); from datetime import datetime, timezone; "
        "from studyapp.tables.models import Table; "
        f"since = datetime.fromtimestamp({since}, timezone.utc); "
        "worst = 0.0\n"
        "for t in Table.objects.filter(created_at__gte=since):\n"
        "    times = [x.created_at for x in t.turns.order_by('seq')]\n"
        "    gaps = [(b - a).total_seconds() for a, b in zip(times, times[1:])]\n"
        "    worst = max([worst, *gaps])\n"
        "print(json.dumps(round(worst, 1)))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={**site.env, "DJANGO_SETTINGS_MODULE": "studyapp.settings"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    return json.loads(out.stdout.strip().splitlines()[-1]) if out.returncode == 0 else -1.0


def open_places(site: Topology) -> None:
    """Room for another 8 people in the demo study (each pilot fills its conditions' quotas)."""
    code = (
        "import django; django.setup(); from studyapp.participants.models import Condition; "
        "Condition.objects.filter(study__slug='demo-undercover').update(quota=10000)"
    )
    subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={**site.env, "DJANGO_SETTINGS_MODULE": "studyapp.settings"},
        check=True,
        timeout=60,
    )


def run_fault(site: Topology, own: OwnRedis, fault: str) -> dict:
    open_places(site)
    log_from = site.log_path.stat().st_size
    started = time.time()
    pilot = subprocess.Popen(
        [
            sys.executable,
            "manage.py",
            "pilot",
            "demo-undercover",
            "--participants",
            "8",
            "--base",
            site.url,
            "--quiet",
        ],
        cwd=ROOT,
        env={**site.env, "DJANGO_SETTINGS_MODULE": "studyapp.settings"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    # the pilot takes about 12 s unhindered: the outages start 3 s in (the first tables open), a
    # process is killed 6 s in, while the bots are playing over their sockets
    time.sleep(6 if fault in ("daphne", "worker") else 3)
    detail: dict = {}
    if fault == "redis":
        own.stop()
        time.sleep(20)
        own.start()
    elif fault == "flush":  # everything in Redis gone at once: stream, queues, cache, groups
        redis.Redis(port=own.port).flushdb()
    elif fault == "db":
        detail["backends_terminated"] = terminate_backends(site.database, 30, 2.5)
    elif fault == "daphne":
        pid = site.pid(f"web:web-{site.ports[0]}")
        os.kill(pid, signal.SIGKILL)
        detail["killed"] = pid
    elif fault == "worker":
        pid = site.pid("worker:worker-0")
        os.kill(pid, signal.SIGKILL)
        detail["killed"] = pid
    try:
        out, err = pilot.communicate(timeout=420)
    except subprocess.TimeoutExpired:
        pilot.kill()
        out, err = pilot.communicate()
        detail["pilot"] = "timed out after 420 s"
    try:
        report = json.loads(out[out.index("{") :]) if "{" in out else {}
    except ValueError:
        report = {}
    people = report.get("people", [])
    log = site.log_path.read_text(errors="replace")[log_from:]
    return {
        "fault": fault,
        **detail,
        "pilot_ok": report.get("ok"),
        "problems": report.get("problems", [err.strip().splitlines()[-1:] if err.strip() else []])[
            :8
        ],
        "statuses": sorted({str(p.get("status")) for p in people}) if people else None,
        "people": len(people),
        "finished": report.get("finished"),
        "tables": [t.get("status") for t in report.get("tables", [])],
        "owed": sorted({str(p.get("payment_amount")) for p in people}),
        "codes": sorted({str(p.get("code_shown")) for p in people}),
        # what the bots' pages met and did about it, as a person's page would
        "reconnects": report.get("reconnects"),
        "resends": report.get("resends"),
        "retries": report.get("retries"),
        "interrupted": sum(1 for p in people if p.get("interruptions")),
        "met": sorted(
            {i.split(" ", 1)[-1][:90] for p in people for i in p.get("interruptions", [])}
        )[:6],
        "longest_wait_s": longest_waits(site, started),
        # what the processes wrote meanwhile (supervisord's own lines included)
        "log_lines": len(log.splitlines()),
        "log_warnings": sum(1 for line in log.splitlines() if " WARNING " in line),
        "log_errors": sum(1 for line in log.splitlines() if " ERROR " in line),
        "tracebacks": log.count("Traceback (most recent call last)"),
        "seconds": round(time.time() - started, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--faults", default="none,redis,db,daphne,worker")
    args = parser.parse_args()
    own = OwnRedis()
    own.start()
    site = Topology(
        Path(tempfile.mkdtemp(prefix="fault-pass-")),
        connection_limit=30,
        REDIS_URL=own.url,
        AGENT_DELAY_SECONDS="0.1",
        PARTICIPANT_RATE_BURST="1000",
        PARTICIPANT_RATE_PER_MINUTE="1000",
    )
    site.start()
    try:
        site.manage("seed_demo")
        for fault in args.faults.split(","):
            print(json.dumps(run_fault(site, own, fault)), flush=True)
    finally:
        site.stop()
        own.stop()


if __name__ == "__main__":
    threading.excepthook = lambda *a: None
    main()
