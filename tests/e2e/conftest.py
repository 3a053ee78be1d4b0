"""Browser tests: a real daphne on loopback (see ``site.py``: PostgreSQL and Redis when configured,
else the embedded defaults) and Debian's Chromium driven by Playwright. Skipped, with the reason,
only when no Chromium binary exists."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.site import LiveSite

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


@pytest.fixture(scope="session")
def site_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The site on a free port; agents pause briefly so a human can be seen."""
    site = LiveSite(tmp_path_factory.mktemp("e2e-var"), AGENT_DELAY_SECONDS="0.2")
    site.start()
    yield site.url
    site.stop()


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
