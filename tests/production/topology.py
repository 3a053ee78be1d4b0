"""The production topology of ``make production`` started for a test: supervisord runs
``deploy/supervisord.conf`` (two daphne processes, a Celery worker and Celery beat) with DEBUG off
against PostgreSQL and Redis, on a fresh database of its own (made and dropped by ``LiveSite``),
owned by a role of its own whose connections PostgreSQL limits (``connection_limit``)."""

from __future__ import annotations

import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from tests.e2e.site import ROOT, LiveSite, free_port

SUPERVISORD = Path(sys.executable).with_name("supervisord")
SUPERVISORCTL = Path(sys.executable).with_name("supervisorctl")
CELERY = Path(sys.executable).with_name("celery")
CONFIG = ROOT / "deploy" / "supervisord.conf"


def procfile_command(name: str) -> str:
    """One process type's command line, as the Procfile gives it."""
    for line in (ROOT / "Procfile").read_text().splitlines():
        if line.startswith(f"{name}:"):
            return line.split(":", 1)[1].strip()
    raise KeyError(name)


class Topology(LiveSite):
    def __init__(
        self,
        var_dir: Path,
        web: int = 2,
        workers: int = 1,
        steps: int = 1,
        connection_limit: int | None = None,
        **env: str,
    ) -> None:
        # A site's Redis (channel layer and Celery broker) is REDIS_URL unless ``env`` names its
        # own: two topologies alive at once (the session's and a module's) on one Redis database
        # would share one Celery queue, and one site's workers would take the other's agent turns.
        redis_url = env.pop("REDIS_URL", os.environ["REDIS_URL"])
        super().__init__(
            var_dir,
            DEBUG="false",
            SECRET_KEY="production-test-only",
            ALLOWED_HOSTS="127.0.0.1,localhost",
            CELERY_TASK_ALWAYS_EAGER="false",
            REDIS_URL=redis_url,
            CELERY_BROKER_URL=redis_url,
            WORKER_CONCURRENCY="2",
            **env,
        )
        self.web, self.workers = web, workers
        self.port = self._free_block(web)
        self.ports = [self.port + i for i in range(web)]
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = var_dir / "supervisord.out"
        self.extra: list[subprocess.Popen] = []
        self.role: str | None = None
        if connection_limit is not None:
            self._own_role(connection_limit)
        self.env.update(WEB=str(web), STEPS=str(steps), WORKERS=str(workers), PORT=str(self.port))

    def _own_role(self, limit: int) -> None:
        """The site connects as a role of its own, owner of its database, that PostgreSQL lets
        hold at most ``limit`` connections (as a hosted database's plan would)."""
        admin = os.environ["DATABASE_URL"]
        self.role, password = f"site_{self.database}", secrets.token_hex(16)
        self._admin(
            admin,
            f"CREATE ROLE \"{self.role}\" LOGIN PASSWORD '{password}' CONNECTION LIMIT {limit}",
        )
        self._admin(admin, f'ALTER DATABASE "{self.database}" OWNER TO "{self.role}"')
        parts = urlsplit(self.env["DATABASE_URL"])
        netloc = f"{self.role}:{password}@{parts.hostname}:{parts.port or 5432}"
        self.env["DATABASE_URL"] = urlunsplit(parts._replace(netloc=netloc))

    @staticmethod
    def _free_block(size: int) -> int:
        while True:
            port = free_port()
            if all(_is_free(port + i) for i in range(1, size)):
                return port

    def start(self) -> None:
        self.manage("migrate", "--noinput", "-v", "0")
        subprocess.run(
            [str(Path(sys.executable).with_name("celery")), "-A", "studyapp", "purge", "-f"],
            cwd=ROOT,
            env=self.env,
            capture_output=True,
            timeout=60,
        )
        with self.log_path.open("w") as log:
            self.process = subprocess.Popen(
                [str(SUPERVISORD), "-n", "-c", str(CONFIG)],
                cwd=ROOT,
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        for port in self.ports:
            self._wait_for(port)
        self._wait_for_workers()

    def _wait_for_workers(self) -> None:
        """Every worker answers a ping: a test's first agent turn is then not timed with a
        worker's start (the web ports open first, and a turn sent before the worker consumes
        waits for it)."""
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            result = subprocess.run(
                [str(CELERY), "-A", "studyapp", "inspect", "ping", "--timeout", "1"],
                cwd=ROOT,
                env={**self.env, "DJANGO_SETTINGS_MODULE": "studyapp.settings"},
                capture_output=True,
                text=True,
                timeout=60,
            )
            if result.stdout.count("pong") >= self.workers:
                return
            time.sleep(0.5)
        self.stop()
        raise RuntimeError(f"the workers did not answer; see {self.log_path}")

    def supervisorctl(self, *args: str) -> str:
        result = subprocess.run(
            [str(SUPERVISORCTL), "-c", str(CONFIG), *args],
            cwd=ROOT,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        return result.stdout

    def pid(self, name: str) -> int:
        """The process id supervisord gives for ``name`` (``web:web-<port>``, ``worker:worker-0``,
        ``beat``); 0 while it is not running."""
        found = self.supervisorctl("pid", name).strip()
        return int(found) if found.isdigit() else 0

    def connections(self) -> int:
        """The site's server sessions now (``pg_stat_activity`` for its database)."""
        import psycopg

        with psycopg.connect(os.environ["DATABASE_URL"], autocommit=True) as conn:
            row = conn.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = %s", [self.database]
            ).fetchone()
        return int(row[0])

    def _wait_for(self, port: int) -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                return
            except OSError:
                time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"port {port} did not open; see {self.log_path}")

    def start_worker(self, name: str) -> subprocess.Popen:
        """One more worker, with the Procfile's command line, in a process group of its own."""
        command = procfile_command("worker").replace("$PORT", name)
        log = (self.log_path.parent / f"{name}.log").open("w")
        worker = subprocess.Popen(
            command,
            shell=True,
            cwd=ROOT,
            env=self.env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.extra.append(worker)
        return worker

    def call(self, function: str, *args: object) -> object:
        """Run ``tests.production.site_jobs.<function>(*args)`` against the site's database."""
        code = (
            "import json, sys, django; django.setup(); "
            "from tests.production import site_jobs; "
            f"print(json.dumps(site_jobs.{function}(*json.loads(sys.argv[1]))))"
        )
        result = subprocess.run(
            [sys.executable, "-c", code, json.dumps(args)],
            cwd=ROOT,
            env={**self.env, "DJANGO_SETTINGS_MODULE": "studyapp.settings"},
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert result.returncode == 0, result.stderr[-3000:]
        return json.loads(result.stdout.strip().splitlines()[-1])

    def stop(self) -> None:
        for worker in self.extra:
            if worker.poll() is None:
                os.killpg(worker.pid, signal.SIGTERM)
                worker.wait(timeout=30)
        if self.process is not None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
            self.process = None
        super().stop()
        if self.role is not None:
            self._admin(os.environ["DATABASE_URL"], f'DROP ROLE IF EXISTS "{self.role}"')
            self.role = None


def _is_free(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def own_redis_url(offset: int) -> str:
    """REDIS_URL with another database number (``offset`` past the environment's, modulo 16),
    for a topology that runs beside the session's."""
    base = os.environ["REDIS_URL"]
    parts = urlsplit(base)
    db = int((parts.path or "/0").strip("/") or 0)
    return urlunsplit(parts._replace(path=f"/{(db + offset) % 16}"))
