"""In real Chromium: a person waiting on a slow model is told, a few seconds after asking, that
the other player is taking longer than usual and what happens when its time runs out; when it
does (the live budget), the question is withdrawn and they can ask again."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator

import pytest

from tests.e2e.site import LiveSite
from tests.fakes.llm_server import FakeLLMServer

pytestmark = pytest.mark.e2e

NOTICE_AFTER = 2  # SLOW_AGENT_NOTICE_SECONDS
LIVE_TURN = 6  # LIVE_AGENT_TURN_SECONDS


@pytest.fixture(scope="module")
def slow_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A site whose oracle is a model server that takes 20 s to answer."""
    with FakeLLMServer(latency=20) as model:
        site = LiveSite(
            tmp_path_factory.mktemp("e2e-slow"),
            AGENT_DELAY_SECONDS="0",
            DEFAULT_AGENT_SPEC="openai-compatible:oracle",
            OPENAI_BASE_URL=model.openai_base_url,
            OPENAI_API_KEY="site-key",
            SLOW_AGENT_NOTICE_SECONDS=str(NOTICE_AFTER),
            LIVE_AGENT_TURN_SECONDS=str(LIVE_TURN),
        )
        site.start()
        yield site.url
        site.stop()


def test_a_slow_model_is_announced_after_a_few_seconds_and_cut_at_the_budget(
    browser, slow_site
) -> None:
    context = browser.new_context(base_url=slow_site)
    page = context.new_page()
    page.set_default_timeout(20_000)
    page.goto("/")
    page.get_by_role("button", name="Start a game").click()
    page.wait_for_url(re.compile(r"/tables/\d+/$"))
    field = page.get_by_label("Your question")
    field.fill("Is it alive?")
    field.press("Enter")
    page.locator("#pending-question").wait_for()
    asked = time.monotonic()
    notice = page.locator("#slow-agent")
    assert notice.count() == 1 and not notice.is_visible()  # not at once: most answers are quick
    notice.wait_for(state="visible")
    shown = time.monotonic() - asked
    assert NOTICE_AFTER - 1 <= shown <= NOTICE_AFTER + 2, shown
    text = notice.inner_text()
    assert "The other player is taking longer than usual" in text
    assert re.search(r"within \d+ s, your question is withdrawn", text), text
    page.locator("#question-voided").wait_for()
    assert time.monotonic() - asked <= LIVE_TURN + 3
    assert page.locator("#slow-agent").count() == 0
    assert page.get_by_label("Your question").count() == 1  # ask again
    context.close()
