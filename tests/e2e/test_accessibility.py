"""Accessibility of the participant pages in real Chromium, checked with axe-core (the
axe-playwright-python package ships it): a participant goes through a study that has every stage
(welcome, consent, instructions with checks, a round at the table, the policy question, a
questionnaire with every kind of item, shown once with errors, the debrief, the code), and on
each page axe finds no serious or critical violation. At the table, the live region says the
newest move only, never the whole board."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from games.cases import case_item
from tests.e2e.site import LiveSite

pytestmark = pytest.mark.e2e

SEED = 5
SETUP = f"""
from studyapp.participants.models import Study
Study.objects.create(slug="a11y", title="Accessible study", rounds=1, seed={SEED},
    consent_text="Your games are recorded for research.", consent_version="1",
    policy_question="What strategy would you give a newcomer?",
    completion_url="https://app.prolific.com/submissions/complete", code_finished="A11YDONE",
    checks=[{{"question": "What may the answering side say?",
             "options": ["Yes, No or Invalid", "Anything"], "answer": "Yes, No or Invalid"}}],
    questionnaire=[
        {{"id": "age", "question": "How old are you?", "kind": "number", "min": 18}},
        {{"id": "tactics", "question": "What did you do?", "kind": "multi",
          "options": ["Asked about categories", "Guessed early"]}},
        {{"id": "hard", "question": "The game was hard.", "kind": "likert"}},
        {{"id": "colour", "question": "Choose 'Blue'.", "kind": "choice",
          "options": ["Red", "Blue"], "expected": "Blue"}},
        {{"id": "notes", "question": "Anything else?", "kind": "text", "required": False}},
    ],
    debrief_text="This study compares people and language models.")
"""
SERIOUS = {"serious", "critical"}


@pytest.fixture
def site(tmp_path: Path) -> Iterator[LiveSite]:
    server = LiveSite(tmp_path, AGENT_DELAY_SECONDS="0")
    server.start(SETUP)
    yield server
    server.stop()


def violations(page) -> list[str]:
    from axe_playwright_python.sync_playwright import Axe

    found = Axe().run(page).response["violations"]
    return [
        f"{v['id']} ({v['impact']}): {v['help']} at {[n['target'] for n in v['nodes']][:3]}"
        for v in found
        if v.get("impact") in SERIOUS
    ]


def checked(page, where: str) -> None:
    problems = violations(page)
    assert not problems, f"{where}: " + "; ".join(problems)


def test_every_participant_page_passes_axe_and_the_table_announces_moves_only(site, browser):
    from playwright.sync_api import expect

    page = browser.new_context().new_page()
    page.set_default_timeout(20_000)
    page.goto(f"{site.url}/s/a11y/?PROLIFIC_PID=aaaabbbbccccdddd00001111&STUDY_ID=s&SESSION_ID=t")
    checked(page, "welcome")
    page.click("#start")
    expect(page.locator("h1")).to_have_text("Consent to take part")
    checked(page, "consent")
    page.check("#id_agree")
    page.click("#consent")
    expect(page.locator("h1")).to_have_text("How to play")
    checked(page, "instructions")
    page.get_by_label("Anything").check()
    page.click("#practice")
    expect(page.locator("#checks-wrong")).to_be_visible()
    checked(page, "instructions with a wrong answer")
    page.get_by_label("Yes, No or Invalid").check()
    page.click("#practice")
    expect(page.locator("h1")).to_have_text("Game 1 of 1")
    checked(page, "round page")

    page.click("#play-round")
    expect(page.locator("#question-text")).to_be_visible()
    page.wait_for_timeout(500)  # the socket opens and sends the board
    checked(page, "table")
    announcer = page.locator("#announcer")
    assert page.locator("#board[aria-live]").count() == 0  # the board is not read out whole
    page.fill("#question-text", "Is it alive?")
    page.click("#ask")
    expect(page.locator("#history li .answer")).to_have_count(1)
    expect(announcer).to_contain_text("Is it alive?")
    spoken = announcer.text_content() or ""
    assert "Candidate words" not in spoken and len(spoken) < 200, spoken
    page.fill("#question-text", f"Is it a {case_item('twenty-questions', SEED, 0)}?")
    page.click("#ask")
    expect(page.locator("#result")).to_be_visible()
    expect(announcer).to_contain_text("found the word")
    checked(page, "table after the game")
    page.click("#continue")

    expect(page.locator("h1")).to_have_text("One last question")
    checked(page, "policy question")
    page.get_by_label("What strategy would you give a newcomer?").fill("Ask broad questions.")
    page.click("#submit-policy")
    expect(page.locator("h1")).to_have_text("A few questions about the study")
    checked(page, "questionnaire")
    page.click("#submit-questionnaire")
    expect(page.locator("#error-age")).to_be_visible()
    checked(page, "questionnaire with errors")
    page.fill("#q_age", "30")
    page.get_by_label("Guessed early").check()
    page.get_by_label("Agree", exact=True).check()
    page.get_by_label("Blue").check()
    page.click("#submit-questionnaire")
    expect(page.locator("h1")).to_have_text("About this study")
    checked(page, "debrief")
    page.click("#submit-debrief")
    expect(page.locator("#completion-code")).to_have_text("A11YDONE")
    checked(page, "done")
