"""PostgreSQL connections held by daphne while people open a study link at once, as JSON.

A fresh database (made and dropped here) gets the demo studies; ``--servers`` daphne processes
start with the production settings. For each crowd size in ``--people``, that many people open
the study link at the same moment (each: the welcome page, Start, the consent page; tests/
production/arrivals.py), shared out over the processes. ``pg_stat_activity`` for the site's
database is sampled during the crowd (``peak``), right after it (``after``) and after ``--idle``
seconds more (``after_idle``). ``--old`` runs the settings before the pool (a connection per
daphne thread, kept for 60 s: ``DB_POOL_SIZE=0 DB_CONN_MAX_AGE=60``) as the baseline.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres \\
        .venv/bin/python benchmarks/db_connections.py [--people 30,60] [--servers 1] [--old]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path
from tempfile import TemporaryDirectory
from urllib.parse import urlsplit, urlunsplit

import psycopg

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.e2e.site import free_port  # noqa: E402
from tests.production.arrivals import crowd, summary  # noqa: E402


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--people", default="30,60", help="crowd sizes, one after another")
    parser.add_argument("--servers", type=int, default=1, help="daphne processes")
    parser.add_argument("--idle", type=float, default=5.0, help="seconds before the last count")
    parser.add_argument("--old", action="store_true", help="the settings before the pool")
    parser.add_argument("--database-url", default=os.environ.get("DATABASE_URL", ""))
    args = parser.parse_args()
    if not args.database_url.startswith(("postgres://", "postgresql://")):
        parser.error("give a PostgreSQL server: --database-url or DATABASE_URL")
    return args


def wait_for(port: int) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"daphne on port {port} did not start")


def count(admin: str, database: str) -> int:
    with psycopg.connect(admin, autocommit=True) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = %s", [database]
        ).fetchone()
    return int(row[0])


class Sampler(threading.Thread):
    """The most connections seen while the crowd arrives, every 50 ms."""

    def __init__(self, admin: str, database: str) -> None:
        super().__init__(daemon=True)
        self.conn = psycopg.connect(admin, autocommit=True)
        self.database, self.peak, self.stopped = database, 0, threading.Event()

    def run(self) -> None:
        while not self.stopped.wait(0.05):
            row = self.conn.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = %s", [self.database]
            ).fetchone()
            self.peak = max(self.peak, int(row[0]))

    def stop(self) -> int:
        self.stopped.set()
        self.join()
        self.conn.close()
        return self.peak


def main() -> None:
    args = parse_args()
    database = f"bench_conn_{uuid.uuid4().hex[:8]}"
    admin = args.database_url
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{database}"')
    site_url = urlunsplit(urlsplit(admin)._replace(path=f"/{database}"))
    env = {k: v for k, v in os.environ.items() if k not in {"DJANGO_SETTINGS_MODULE", "REDIS_URL"}}
    env.update(
        DATABASE_URL=site_url,
        DEBUG="false",
        SECRET_KEY="benchmark-only",
        ALLOWED_HOSTS="127.0.0.1",
        PARTICIPANT_RATE_BURST="100000",
        PARTICIPANT_RATE_PER_MINUTE="100000",
    )
    if args.old:
        env.update(DB_POOL_SIZE="0", DB_CONN_MAX_AGE="60")
    processes: list[subprocess.Popen] = []
    rounds = []
    with TemporaryDirectory() as var:
        env["VAR_DIR"] = var
        try:
            for command in (["migrate", "--noinput", "-v", "0"], ["seed_demo"]):
                subprocess.run(
                    [sys.executable, "manage.py", *command],
                    cwd=ROOT,
                    env=env,
                    check=True,
                    capture_output=True,
                )
            ports = [free_port() for _ in range(args.servers)]
            daphne = str(Path(sys.executable).with_name("daphne"))
            for port in ports:
                processes.append(
                    subprocess.Popen(
                        [daphne, "-b", "127.0.0.1", "-p", str(port), "studyapp.asgi:application"],
                        cwd=ROOT,
                        env=env,
                        stdout=subprocess.DEVNULL,
                        stderr=open(Path(var) / f"daphne-{port}.log", "w"),  # noqa: SIM115
                    )
                )
            for port in ports:
                wait_for(port)
            bases = [f"http://127.0.0.1:{port}" for port in ports]
            asyncio.run(crowd(bases, "demo", args.servers, 0))  # each process is up and warm
            for people in [int(n) for n in args.people.split(",") if n]:
                sampler = Sampler(admin, database)
                sampler.start()
                started = time.monotonic()
                arrivals = asyncio.run(crowd(bases, "demo", people, 0))
                elapsed = time.monotonic() - started
                peak = sampler.stop()
                after = count(admin, database)
                time.sleep(args.idle)
                rounds.append(
                    {
                        **summary(arrivals),
                        "seconds": round(elapsed, 2),
                        "connections_peak": peak,
                        "connections_after": after,
                        f"connections_after_{args.idle:g}s_idle": count(admin, database),
                    }
                )
        finally:
            for process in processes:
                process.terminate()
                process.wait(timeout=30)
            with psycopg.connect(admin, autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
    settings = "DB_POOL_SIZE=0 DB_CONN_MAX_AGE=60 (before)" if args.old else "pool"
    pool_size = env.get("DB_POOL_SIZE", "8 (default)")
    print(
        json.dumps(
            {
                "settings": settings,
                "db_pool_size": pool_size,
                "servers": args.servers,
                "rounds": rounds,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
