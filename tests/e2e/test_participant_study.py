"""A whole study in real Chromium: a participant arrives by a study link with Prolific parameters,
consents, passes the practice question, plays every round at the real table pages (questions go
over the WebSocket, the offline oracle answers; the last round in a second browser opened on the
same link, as after a device switch), writes a policy and gets the completion code; then staff see
them as owed in the admin and mark them paid.

Chromium comes from the ``browser`` fixture of ``tests/e2e/conftest.py``. The site is started here
rather than by its ``site_url`` fixture because this test must seed a study and a staff login into
the site's database first: daphne's runserver on a fresh SQLite file, which also serves htmx.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from games.cases import case_item
from tests.e2e.site import LiveSite

pytestmark = pytest.mark.e2e

STUDY_SEED = 100
ROUNDS = 2
SETUP = f"""
from django.contrib.auth.models import User
from studyapp.participants.models import Study
Study.objects.create(slug="e2e", title="E2E study", rounds={ROUNDS}, seed={STUDY_SEED},
    consent_text="Your games are recorded for research.", consent_version="3",
    policy_question="What strategy would you give a newcomer?",
    completion_url="https://app.prolific.com/submissions/complete", code_finished="E2EDONE")
User.objects.create_superuser("staff", "staff@example.org", "staff-pass-123")
"""
REPORT = """
import json
from studyapp.participants.models import Participant
print(json.dumps([{"pid": p.prolific_pid, "status": p.status, "paid": p.paid,
    "rounds": p.rounds_finished, "policy": p.policy, "version": p.consent_version}
    for p in Participant.objects.all()]))
"""


class Site(LiveSite):
    """The site process, seeded with a study and a staff login, and a way to ask its database."""

    def participants(self) -> list[dict]:
        return json.loads(self.manage("shell", "-v", "0", "-c", REPORT).strip().splitlines()[-1])


@pytest.fixture
def site(tmp_path: Path) -> Iterator[Site]:
    server = Site(tmp_path, AGENT_DELAY_SECONDS="0")
    server.start(SETUP)
    yield server
    server.stop()


def answer_word(round_number: int) -> str:
    """The word of round k: case k-1 of the study's case sequence, the same for every
    participant and for a model experiment with the same seed."""
    return case_item("twenty-questions", STUDY_SEED, round_number - 1)


class SocketFrames:
    """Counts frames the server pushes over the page's WebSockets. The table sends its board as
    soon as a socket opens, so a new frame means the socket is ready to carry a question."""

    def __init__(self, page) -> None:
        self.page = page
        self.count = 0
        page.on("websocket", lambda ws: ws.on("framereceived", self._received))

    def _received(self, _frame) -> None:
        self.count += 1

    def wait_for_more_than(self, seen: int, timeout_s: float = 15) -> None:
        deadline = time.monotonic() + timeout_s
        while self.count <= seen:
            assert time.monotonic() < deadline, "the table's socket never opened"
            self.page.wait_for_timeout(50)


def play_round(page, frames: SocketFrames, number: int, total: str) -> None:
    from playwright.sync_api import expect

    expect(page.locator("h1")).to_have_text(f"Game {number} of {ROUNDS}")
    seen = frames.count
    page.click("#play-round")
    frames.wait_for_more_than(seen)
    # One real question for the oracle agent, then the right guess.
    page.fill("#question-text", "Is it alive?")
    page.click("#ask")
    expect(page.locator("#history li .answer")).to_have_count(1, timeout=15_000)
    expect(page.locator("#questions-asked")).to_have_text("1")
    page.fill("#question-text", f"Is it a {answer_word(number)}?")
    page.click("#ask")
    expect(page.locator("#result")).to_contain_text("You found the word", timeout=15_000)
    # the study bar's running total counts the game as soon as it ends, before Continue
    expect(page.locator("#study-total")).to_have_text(total)
    page.click("#continue")


def test_a_participant_completes_a_study_and_staff_mark_them_paid(site: Site, browser) -> None:
    from playwright.sync_api import expect

    participant = browser.new_context().new_page()
    participant.set_default_timeout(15_000)
    frames = SocketFrames(participant)
    participant.goto(
        f"{site.url}/s/e2e/?PROLIFIC_PID=60a1b2c3d4e5f60718293a4b&STUDY_ID=st7&SESSION_ID=se7"
    )
    participant.click("#start")
    expect(participant.locator("h1")).to_have_text("Consent to take part")
    participant.check("#id_agree")
    participant.click("#consent")
    expect(participant.locator("h1")).to_have_text("How to play")
    expect(participant.locator("#study-name")).to_have_text("E2E study")
    participant.get_by_label("Yes, No or Invalid").check()
    participant.click("#practice")

    play_round(participant, frames, 1, total="0.63")
    expect(participant.locator("#total-reward")).to_have_text("0.63")  # 1/log2(3): found at 2

    # The same person reopens their submission in another browser (the recruiter passes the same
    # SESSION_ID): Start resumes at round 2, with no second consent, and the seat follows them.
    # The Prolific ID alone would not do: anyone may type it.
    participant = browser.new_context().new_page()
    participant.set_default_timeout(15_000)
    frames = SocketFrames(participant)
    participant.goto(
        f"{site.url}/s/e2e/?PROLIFIC_PID=60a1b2c3d4e5f60718293a4b&STUDY_ID=st7&SESSION_ID=se7"
    )
    participant.click("#start")
    play_round(participant, frames, 2, total="1.26")

    expect(participant.locator("h1")).to_have_text("One last question")
    answer = "Ask <b>broad</b> questions first, then guess."
    participant.get_by_label("What strategy would you give a newcomer?").fill(answer)
    expect(participant.locator("#policy-count")).to_have_text(f"{len(answer)} of 4000 characters")
    participant.click("#submit-policy")
    expect(participant.locator("#completion-code")).to_have_text("E2EDONE")
    link = participant.locator("#completion-link")
    expect(link).to_have_attribute(
        "href", "https://app.prolific.com/submissions/complete?cc=E2EDONE"
    )
    [record] = site.participants()
    assert record == {
        "pid": "60a1b2c3d4e5f60718293a4b",
        "status": "finished",
        "paid": False,
        "rounds": 2,
        "policy": "Ask <b>broad</b> questions first, then guess.",
        "version": "3",
    }

    staff = browser.new_context().new_page()
    staff.set_default_timeout(15_000)
    staff.goto(f"{site.url}/admin/login/?next=/admin/participants/participant/")
    staff.fill("#id_username", "staff")
    staff.fill("#id_password", "staff-pass-123")
    staff.click("input[type=submit]")
    row = staff.locator("#result_list tbody tr").first
    expect(row).to_contain_text("owed")
    expect(row).to_contain_text("1.26")  # total reward of two rounds found at question 2
    row.locator("input.action-select").check()
    staff.select_option("select[name=action]", "mark_paid")
    staff.click("button[name=index]")
    expect(staff.locator("ul.messagelist")).to_contain_text("Marked 1 participant(s) as paid")
    expect(staff.locator("#result_list tbody tr").first).to_contain_text("paid")
    assert site.participants()[0]["paid"] is True
