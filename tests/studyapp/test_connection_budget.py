"""deploy/connections.py: `make production` starts daphne with a pool the PostgreSQL server can
serve beside every other process it starts, lowers it when it was not set and the server is
short, and refuses with the sum and what to change when nothing fits (issue 49: an arrival burst
never costs a seated player a move, pool sizes that follow the processes it starts)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import uuid

import psycopg
import pytest

from tests.e2e.site import ROOT

SCRIPT = ROOT / "deploy/connections.py"
ADMIN_URL = "postgresql://postgres@127.0.0.1:5432/postgres"


def run(env: dict[str, str]) -> subprocess.CompletedProcess:
    kept = {k: v for k, v in os.environ.items() if k not in {"DB_POOL_SIZE", "WEB", "WORKERS"}}
    return subprocess.run(
        [sys.executable, str(SCRIPT)],
        env={**kept, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.fixture
def limited_role():
    """A role of its own whose CONNECTION LIMIT is 20, and its URL (dropped after the test)."""
    try:
        admin = psycopg.connect(ADMIN_URL, autocommit=True, connect_timeout=3)
    except psycopg.OperationalError:
        pytest.skip("no PostgreSQL at 127.0.0.1:5432 to size pools against")
    name = f"budget_{uuid.uuid4().hex[:8]}"
    with admin:
        admin.execute(f"CREATE ROLE {name} LOGIN CONNECTION LIMIT 20")
        try:
            yield f"postgresql://{name}@127.0.0.1:5432/postgres"
        finally:
            admin.execute(f"DROP ROLE {name}")


def test_the_defaults_are_the_settings_and_the_process_managers_defaults() -> None:
    """The script reads the same sizes the processes themselves start with."""
    sys.path.insert(0, str(ROOT / "deploy"))
    try:
        import connections
    finally:
        sys.path.pop(0)
    from django.conf import settings

    makefile = (ROOT / "Makefile").read_text()
    supervisord = (ROOT / "deploy/supervisord.conf").read_text()
    for name in ("WEB", "STEPS", "WORKERS"):
        made = re.search(rf"^{name} \?= (\d+)$", makefile, re.M)
        assert made and int(made.group(1)) == connections.DEFAULTS[name], name
    concurrency = re.search(r"\$\{WORKER_CONCURRENCY:-(\d+)\}", supervisord)
    assert concurrency and int(concurrency.group(1)) == connections.DEFAULTS["WORKER_CONCURRENCY"]
    if "DB_POOL_SIZE" not in os.environ:
        assert connections.DEFAULTS["DB_POOL_SIZE"] == settings.DB_POOL_SIZE
    if "STEPS_DB_THREADS" not in os.environ:
        assert connections.DEFAULTS["STEPS_DB_THREADS"] == settings.STEPS_DB_THREADS
    if "WORKER_DB_POOL_SIZE" not in os.environ:
        assert connections.DEFAULTS["WORKER_DB_POOL_SIZE"] == settings.WORKER_DB_POOL_SIZE


def test_a_site_that_fits_keeps_its_pool(limited_role: str) -> None:
    # 2 daphnes x 4 + executor 5 + beat 1 + 3 for commands = 17 of the role's 20
    done = run({"DATABASE_URL": limited_role, "WORKERS": "0", "DB_POOL_SIZE": "4"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "4" and done.stderr == ""


def test_an_unset_pool_is_lowered_to_what_the_server_can_serve(limited_role: str) -> None:
    # 2 daphnes x 8 + 9 = 25 > 20: each daphne gets (20 - 9) // 2 = 5, and says why
    done = run({"DATABASE_URL": limited_role, "WORKERS": "0"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "5"
    assert "25 needed" in done.stderr and "pool of 5" in done.stderr


def test_a_pool_the_lab_set_is_never_lowered_behind_its_back(limited_role: str) -> None:
    done = run({"DATABASE_URL": limited_role, "WORKERS": "0", "DB_POOL_SIZE": "8"})
    assert done.returncode == 2 and done.stdout == ""
    assert "needs 25 PostgreSQL connections" in done.stderr
    assert "lower WEB, WORKERS, DB_POOL_SIZE" in done.stderr


def test_processes_no_pool_can_serve_are_refused(limited_role: str) -> None:
    # a worker of 4 alone needs 9: 2 x 4 (the smallest pool) + 5 + 9 + 1 + 3 = 26 > 20
    done = run({"DATABASE_URL": limited_role})
    assert done.returncode == 2 and "server has" in done.stderr


def test_a_database_away_starts_the_site_with_its_pool_and_lets_health_say_why() -> None:
    done = run({"DATABASE_URL": "postgresql://nobody@127.0.0.1:1/none", "DB_POOL_SIZE": "6"})
    assert done.returncode == 0 and done.stdout.strip() == "6"


def test_a_bad_size_is_refused_with_its_name() -> None:
    done = run({"DATABASE_URL": ADMIN_URL, "WEB": "two"})
    assert done.returncode != 0 and "WEB must be a whole number" in done.stderr
