"""The table page's heartbeat in real Chromium: one frame per period, never two at once (issue
31: an hx-trigger "every" on the ws-send form sent each heartbeat twice)."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from tests.e2e.site import LiveSite

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveSite]:
    server = LiveSite(tmp_path_factory.mktemp("heartbeat"), HEARTBEAT_SECONDS="2")
    server.start()
    yield server
    server.stop()


def test_the_page_sends_one_heartbeat_a_period(site: LiveSite, browser):
    page = browser.new_context(base_url=site.url).new_page()
    sent: list[tuple[float, str]] = []
    page.on(
        "websocket",
        lambda socket: socket.on(
            "framesent", lambda payload: sent.append((time.monotonic(), str(payload)))
        ),
    )
    page.goto("/")
    page.locator("form[action*='twenty'] button").first.click()
    page.wait_for_url("**/tables/*/")
    page.wait_for_timeout(7000)
    beats = [at for at, payload in sent if '"heartbeat"' in payload]
    assert 3 <= len(beats) <= 4, beats
    gaps = [b - a for a, b in zip(beats, beats[1:], strict=False)]
    assert all(gap > 1.5 for gap in gaps), gaps  # never two at once
    page.context.close()
