"""Issue 49, item 3: 150 people opening a study link within 3 s on the daphne where a pilot's
people are seated and playing (`manage.py pilot demo-undercover`, real requests and sockets) on
the production topology (2 daphne, a steps executor, a worker, beat; a Redis of its own). Prints
one JSON object: what the seated players met (moves the site said were not saved and they sent
again, reconnects, the longest wait between two turns of their tables, whether everyone
finished), what the arrivals met (reached the consent page, statuses, p50 and longest), and the
site log's lines of the burst (moves that found no connection, tracebacks, 503 pages, sends on
a closed socket).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/x REDIS_URL=redis://127.0.0.1:6379/14 \\
        .venv/bin/python benchmarks/arrival_burst.py [--arrivals 150 --spread 3 --players 8]
        [--env DB_POOL_SIZE=4 ...]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.fault_pass import OwnRedis, longest_waits, open_places  # noqa: E402
from tests.e2e.site import ROOT  # noqa: E402
from tests.production.arrivals import crowd, summary  # noqa: E402
from tests.production.topology import Topology  # noqa: E402

LOG_LINES = {
    "no_connection": "couldn't get a connection",
    "tracebacks": "Traceback (most recent call last)",
    "answered_503": "answered 503",
    "closed_protocol": "Attempt to send on a closed protocol",
}


class PatientTopology(Topology):
    """The topology, waiting up to 5 minutes for each daphne's port: on a shared machine its
    processes' start can take longer than the tests' minute."""

    def _wait_for(self, port: int) -> None:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                return
            except OSError:
                time.sleep(0.5)
        super()._wait_for(port)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--arrivals", type=int, default=150)
    parser.add_argument("--spread", type=float, default=3.0)
    parser.add_argument("--players", type=int, default=8)
    parser.add_argument(
        "--env", action="append", default=[], help="KEY=VALUE for the site (e.g. DB_POOL_SIZE=4)"
    )
    args = parser.parse_args()
    own = OwnRedis()
    own.start()
    site = PatientTopology(
        Path(tempfile.mkdtemp(prefix="arrival-burst-")),
        connection_limit=40,
        REDIS_URL=own.url,
        AGENT_DELAY_SECONDS="0.1",
        PARTICIPANT_RATE_BURST="1000",
        PARTICIPANT_RATE_PER_MINUTE="1000",
        **dict(pair.split("=", 1) for pair in args.env),
    )
    site.start()
    try:
        site.manage("seed_demo")
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
                str(args.players),
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
        time.sleep(4)  # the pilot's people are seated and playing
        arrivals = asyncio.run(crowd([site.url], "demo", args.arrivals, args.spread))
        try:
            out, _err = pilot.communicate(timeout=420)
        except subprocess.TimeoutExpired:
            pilot.kill()
            out, _err = pilot.communicate()
        report = json.loads(out[out.index("{") :]) if "{" in out else {}
        people = report.get("people", [])
        log = site.log_path.read_text(errors="replace")[log_from:]
        print(
            json.dumps(
                {
                    "arrivals": summary(arrivals),
                    "players": {
                        "people": len(people),
                        "pilot_ok": report.get("ok"),
                        "finished": report.get("finished"),
                        "resent_moves": report.get("resends"),
                        "reconnects": report.get("reconnects"),
                        "retries": report.get("retries"),
                        "longest_wait_s": longest_waits(site, started),
                        "problems": report.get("problems", [])[:5],
                    },
                    "log": {name: log.count(text) for name, text in LOG_LINES.items()},
                    "seconds": round(time.time() - started, 1),
                }
            ),
            flush=True,
        )
    finally:
        site.stop()
        own.stop()


if __name__ == "__main__":
    threading.excepthook = lambda *a: None
    main()
