"""The site as a browser meets it: daphne in its own process on a free loopback port.

With ``DATABASE_URL`` pointing at PostgreSQL (as in CI) the site gets a fresh database of its own,
dropped afterwards, and keeps ``REDIS_URL`` for its channel layer; otherwise it runs on the
embedded defaults (a SQLite file in its own folder). Tasks always run in-process: no Celery worker
runs during the tests.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg

ROOT = Path(__file__).resolve().parents[2]

# The start of a Who is Undercover study's setup code (LiveSite.start): a person's seat, an
# offline agent's, and the comprehension check the e2e studies ask.
UNDERCOVER_SETUP = """
from studyapp.participants.models import Study
person = {"kind": "person"}
agent = {"kind": "agent", "spec": "offline:kb"}
checks = [{"question": "Who wins when the different word is voted out?",
           "options": ["The different word", "The common word"], "answer": "The common word"}]
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LiveSite:
    def __init__(self, var_dir: Path, **env: str) -> None:
        # Not this process's Django settings, nor what an in-process Celery worker of an earlier
        # test left in the environment (it sets CELERY_LOG_LEVEL and friends to its own values).
        self.env = {
            k: v
            for k, v in os.environ.items()
            if k != "DJANGO_SETTINGS_MODULE" and not k.startswith("CELERY_LOG")
        }
        self.env.update(
            VAR_DIR=str(var_dir),
            DEBUG="true",
            CELERY_TASK_ALWAYS_EAGER="true",
            CELERY_BROKER_URL="",
            # A test types faster than any person; the socket's limit has tests of its own.
            SOCKET_MOVE_BURST="50",
            SOCKET_MOVES_PER_SECOND="50",
            # Every test browser arrives from 127.0.0.1, and the sites of one run share Redis's
            # counters: the per-address limit on new participants (tested on its own) would
            # turn away a later test's person.
            PARTICIPANT_RATE_BURST="1000",
            PARTICIPANT_RATE_PER_MINUTE="1000",
        )
        self.env.update(env)
        self.database: str | None = None
        base = self.env.get("DATABASE_URL", "")
        if base.startswith(("postgres://", "postgresql://")):
            self.database = f"e2e_{uuid.uuid4().hex[:10]}"
            self._admin(base, f'CREATE DATABASE "{self.database}"')
            self.env["DATABASE_URL"] = urlunsplit(urlsplit(base)._replace(path=f"/{self.database}"))
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = var_dir / "daphne.log"
        self.process: subprocess.Popen | None = None

    @staticmethod
    def _admin(url: str, sql: str) -> None:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(sql)

    def manage(self, *args: str) -> str:
        result = subprocess.run(
            [sys.executable, "manage.py", *args],
            cwd=ROOT,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=180,
        )
        assert result.returncode == 0, result.stderr
        return result.stdout

    def start(self, *setup: str) -> None:
        """Migrate, run each of ``setup`` (Python, as ``manage.py shell -c``: the test's studies
        and people), then start daphne and wait until it listens."""
        self.manage("migrate", "--noinput", "-v", "0")
        for code in setup:
            self.manage("shell", "-c", code)
        daphne = Path(sys.executable).with_name("daphne")
        with self.log_path.open("w") as log:
            self.process = subprocess.Popen(
                [str(daphne), "-b", "127.0.0.1", "-p", str(self.port), "studyapp.asgi:application"],
                cwd=ROOT,
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                return
            except OSError:
                time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"daphne did not start; see {self.log_path}")

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(timeout=10)
            self.process = None
        if self.database is not None:
            base = os.environ["DATABASE_URL"]
            self._admin(base, f'DROP DATABASE IF EXISTS "{self.database}" WITH (FORCE)')
            self.database = None
