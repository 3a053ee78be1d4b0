"""Browser tests: a real daphne on loopback (embedded defaults, its own SQLite file) and Debian's
Chromium driven by Playwright. Skipped, with the reason, only when no Chromium binary exists."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = os.environ.get("CHROMIUM_PATH") or "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def site_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """daphne serving the project on a free port; agents pause briefly so a human can be seen."""
    var = tmp_path_factory.mktemp("e2e-var")
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("DATABASE_URL", "REDIS_URL", "CELERY_BROKER_URL", "DJANGO_SETTINGS_MODULE")
    }
    env.update(
        VAR_DIR=str(var), DEBUG="true", AGENT_DELAY_SECONDS="0.2", CELERY_TASK_ALWAYS_EAGER="true"
    )
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput", "-v0"], cwd=ROOT, env=env, check=True
    )
    port = free_port()
    daphne = Path(sys.executable).with_name("daphne")
    log = open(var / "daphne.log", "w")  # noqa: SIM115
    server = subprocess.Popen(
        [str(daphne), "-b", "127.0.0.1", "-p", str(port), "studyapp.asgi:application"],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            break
        except OSError:
            time.sleep(0.2)
    else:
        server.kill()
        pytest.fail(f"daphne did not start; see {var / 'daphne.log'}")
    yield f"http://127.0.0.1:{port}"
    server.terminate()
    server.wait(timeout=10)
    log.close()


@pytest.fixture(scope="session")
def browser() -> Iterator[object]:
    if not Path(CHROMIUM).exists():
        pytest.skip(f"no Chromium at {CHROMIUM} (set CHROMIUM_PATH or apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser, site_url: str) -> Iterator[object]:
    context = browser.new_context(base_url=site_url)
    page = context.new_page()
    page.set_default_timeout(15_000)
    yield page
    context.close()
