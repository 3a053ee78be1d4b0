"""Supervision as `make production` runs it (deploy/supervisord.conf through deploy/supervised):
a daphne whose port another process holds is marked FATAL with the reason in the log, not
restarted forever; a supervisord killed with SIGKILL takes daphne, the worker and beat with it."""

from __future__ import annotations

import os
import signal
import socket
import time
from pathlib import Path

import pytest

from tests.production.topology import Topology

pytestmark = pytest.mark.production


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie (exited, not yet reaped by its new parent) is gone too
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


def test_a_blocked_port_is_fatal_and_a_killed_supervisor_takes_its_children(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    if not os.environ.get("DATABASE_URL", "").startswith(("postgres://", "postgresql://")):
        pytest.skip("the production topology needs DATABASE_URL (PostgreSQL) and REDIS_URL")
    site = Topology(Path(tmp_path_factory.mktemp("supervision")), web=2)
    squatter = socket.socket()
    squatter.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    squatter.bind(("127.0.0.1", site.ports[1]))
    squatter.listen()
    try:
        site.start()
        blocked = f"web:web-{site.ports[1]}"
        deadline = time.monotonic() + 150
        status = ""
        while time.monotonic() < deadline:
            status = site.supervisorctl("status", blocked)
            if "FATAL" in status:
                break
            time.sleep(2)
        assert "FATAL" in status, status
        assert f"cannot listen on 127.0.0.1:{site.ports[1]}" in site.log_path.read_text()
        assert "RUNNING" in site.supervisorctl("status", f"web:web-{site.ports[0]}")

        children = {
            name: site.pid(name) for name in (f"web:web-{site.ports[0]}", "worker:worker-0", "beat")
        }
        assert all(children.values()), children
        assert site.process is not None
        os.kill(site.process.pid, signal.SIGKILL)
        site.process.wait(timeout=10)
        deadline = time.monotonic() + 45
        while time.monotonic() < deadline and any(_alive(p) for p in children.values()):
            time.sleep(0.5)
        left = {name: pid for name, pid in children.items() if _alive(pid)}
        assert left == {}, f"still running without their supervisor: {left}"
        site.process = None  # nothing left to stop
    finally:
        squatter.close()
        site.stop()
