"""In real Chromium: when the answering model fails, the participant is told their question was
not counted, and after the configured failures in a row that the game is paused."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from tests.e2e.site import LiveSite

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def failing_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A site whose default oracle is an OpenAI model with no key configured."""
    site = LiveSite(
        tmp_path_factory.mktemp("e2e-failing"),
        AGENT_DELAY_SECONDS="0",
        DEFAULT_AGENT_SPEC="openai:gpt-4o",
        OPENAI_API_KEY="",
        MAX_ORACLE_FAILURES="2",
    )
    site.start()
    yield site.url
    site.stop()


def test_a_failed_answer_is_not_counted_and_the_table_pauses(browser, failing_site) -> None:
    context = browser.new_context(base_url=failing_site)
    page = context.new_page()
    page.set_default_timeout(15_000)
    page.goto("/")
    page.get_by_role("button", name="Start a game").click()
    page.wait_for_url(re.compile(r"/tables/\d+/$"))
    field = page.get_by_label("Your question")
    field.fill("Is it alive?")
    field.press("Enter")
    notice = page.locator("#question-voided")
    notice.wait_for()
    assert "your question was not counted" in notice.inner_text()
    assert page.locator("#questions-asked").inner_text() == "0"
    field = page.get_by_label("Your question")
    field.fill("Is it made of metal?")
    field.press("Enter")
    paused = page.locator("#paused")
    paused.wait_for()
    assert "paused" in paused.inner_text() and "please wait" in paused.inner_text()
    assert page.get_by_label("Your question").count() == 0
    context.close()
