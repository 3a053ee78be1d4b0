"""Studies as designs in real Chromium and over the real link: two people at one Who is
Undercover study table with three agents, two people of a two-condition study who meet in its
group lobby and sit together in one condition (agents not disclosed), the failed-checks and study-full pages, and the demo
Undercover study piloted by twelve simulated participants (``manage.py pilot``) against the site.

The site is started here (not by the ``site_url`` fixture) because the tests seed studies into
its database first.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator

import pandas as pd
import pytest

from studyapp.participants.study_tables import HOLD_SECONDS
from tests.e2e.site import ROOT, UNDERCOVER_SETUP, LiveSite

pytestmark = pytest.mark.e2e

SETUP = (
    UNDERCOVER_SETUP
    + """
from studyapp.participants.models import Condition
Study.objects.create(slug="uc-e2e", title="Undercover together", game="undercover", rounds=1,
    seed=4, consent_text="Recorded for research.", completion_url="https://app.prolific.com/x",
    code_finished="UCDONE", checks=checks,
    design={"seats": [person, person, agent, agent, agent], "wait_seconds": 120})
groups = Study.objects.create(slug="uc-groups", title="Undercover in groups", game="undercover",
    rounds=1, seed=5, consent_text="Recorded for research.", completion_url="https://app.prolific.com/x",
    code_finished="UCGDONE", checks=checks, agents_disclosed=False, agent_think_seconds=[0, 1],
    design={"seats": [person, person, agent, agent, agent], "wait_seconds": 120})
other = {"kind": "agent", "spec": "offline:descriptor"}
Condition.objects.create(study=groups, name="kb", position=0)
Condition.objects.create(study=groups, name="descriptor", position=1,
    overrides={"design": {"seats": [person, person, other, other, other]}})
Study.objects.create(slug="strict", title="Strict checks", game="undercover", rounds=1,
    consent_text="Recorded.", completion_url="https://app.prolific.com/x", checks=checks,
    check_attempts=1)
full = Study.objects.create(slug="full", title="Full study", game="undercover", rounds=1,
    consent_text="Recorded.", completion_url="https://app.prolific.com/x")
Condition.objects.create(study=full, name="only", quota=1)
"""
)
FILL = """
from studyapp.participants.models import Participant, Study
study = Study.objects.get(slug="full")
Participant.objects.create(study=study, status="playing", condition="only",
    assignment={"arrival": 0})
"""
REPORT = """
import json
from studyapp.participants.models import Participant
print(json.dumps([{"slug": p.study.slug, "status": p.status, "condition": p.condition,
    "rounds": p.rounds_finished, "pilot": p.is_pilot} for p in Participant.objects.all()]))
"""


class Site(LiveSite):
    def participants(self) -> list[dict]:
        return json.loads(self.manage("shell", "-v", "0", "-c", REPORT).strip().splitlines()[-1])


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    server = Site(tmp_path_factory.mktemp("study-tables"), AGENT_DELAY_SECONDS="0")
    server.start(SETUP, FILL)
    yield server
    server.stop()


def enter(browser, site: Site, slug: str, pid: str):
    from playwright.sync_api import expect

    page = browser.new_context().new_page()
    page.set_default_timeout(20_000)
    page.goto(f"{site.url}/s/{slug}/?PROLIFIC_PID={pid}&STUDY_ID=st&SESSION_ID=se")
    page.click("#start")
    page.check("#id_agree")
    page.click("#consent")
    expect(page.locator("h1")).to_have_text("How to play")
    return page


def take_turn(page, said: list[int]) -> bool:
    """Make this seat's move if it has one; True when its game is over."""
    if page.locator("#result").count():
        return True
    if page.locator("#clue-text").count():
        said[0] += 1
        page.fill("#clue-text", f"Something people meet often, idea {said[0]}.")
        page.click("#give-clue")
        page.wait_for_timeout(150)
    elif page.locator("#cast-vote").count():
        page.locator("input[name=target]").first.check()
        page.click("#cast-vote")
        page.wait_for_timeout(150)
    return False


def test_two_people_play_one_undercover_study_table_with_three_agents(site: Site, browser):
    from playwright.sync_api import expect

    alice = enter(browser, site, "uc-e2e", "a11ce0000000000000000001")
    bob = enter(browser, site, "uc-e2e", "b0b000000000000000000001")
    for page in (alice, bob):
        expect(page.locator("#study-name")).to_have_text("Undercover together")
        page.get_by_label("The common word").check()
        page.click("#practice")
        expect(page.locator("h1")).to_have_text("Game 1 of 1")
    alice.click("#play-round")
    expect(alice.locator("#lobby")).to_be_visible()
    expect(alice.locator("#lobby-filled")).to_contain_text("1 of 2")
    expect(alice.locator(".countdown")).to_be_visible()
    expect(alice.locator("#study-round")).to_have_text("Game 1 of 1")
    bob.click("#play-round")
    assert alice.url == bob.url  # one table for both people
    for page in (alice, bob):
        expect(page.locator("#my-word")).to_be_visible()
        expect(page.locator("#withdraw")).to_be_visible()
        assert page.locator("a.home[href='/']").count() == 0
    said = [0]
    over = {"alice": False, "bob": False}
    for _ in range(400):
        over["alice"] = over["alice"] or take_turn(alice, said)
        over["bob"] = over["bob"] or take_turn(bob, said)
        if all(over.values()):
            break
        alice.wait_for_timeout(100)
    assert all(over.values()), "the game did not end"
    for page in (alice, bob):
        expect(page.locator("#words tbody tr")).to_have_count(5)
        page.click("#continue")
        expect(page.locator("#completion-code")).to_have_text("UCDONE")
    records = [r for r in site.participants() if r["slug"] == "uc-e2e"]
    assert [r["status"] for r in records] == ["finished", "finished"]
    assert all(r["rounds"] == 1 for r in records)


def test_two_people_of_a_two_condition_study_meet_in_one_condition(site: Site, browser):
    """The group lobby: alice waits, bob arrives, the group is drawn one condition and alice's
    page follows to the table they share. The study does not disclose its agents: no board
    names a seat's kind."""
    from playwright.sync_api import expect

    alice = enter(browser, site, "uc-groups", "a11ce0000000000000000002")
    bob = enter(browser, site, "uc-groups", "b0b000000000000000000002")
    for page in (alice, bob):
        page.get_by_label("The common word").check()
        page.click("#practice")
        expect(page.locator("h1")).to_have_text("Game 1 of 1")
    alice.click("#play-round")
    expect(alice.locator("#lobby")).to_be_visible()
    lobby_url = alice.url
    assert "agent" not in alice.locator("#board").inner_text().lower()
    bob.click("#play-round")
    # Both at the group's table at once (alice's page follows from the closed lobby), before it
    # starts: a blinded table waiting out its hold is a table to sit at, not a Continue button.
    expect(bob.locator("#board")).to_be_visible()
    alice.wait_for_url(bob.url)
    # The group's table, blinded, holds its drawn while before it starts, as its lobbies do
    # (issue 48: round-1 group tables honour their start delay), so the words come within it.
    hold_ms = (HOLD_SECONDS[1] + 15) * 1000
    expect(bob.locator("#my-word")).to_be_visible(timeout=hold_ms)
    expect(alice.locator("#my-word")).to_be_visible(timeout=hold_ms)  # followed from the lobby
    assert alice.url == bob.url != lobby_url
    for page in (alice, bob):
        assert "agent" not in page.locator("#board").inner_text().lower()
    records = [r for r in site.participants() if r["slug"] == "uc-groups"]
    assert len(records) == 2 and records[0]["condition"] == records[1]["condition"] != ""


def test_failing_the_checks_asks_to_return_the_study(site: Site, browser):
    from playwright.sync_api import expect

    page = enter(browser, site, "strict", "ca7010000000000000000001")
    page.get_by_label("The different word").check()
    page.click("#practice")
    expect(page.locator("h1")).to_have_text("Thank you for your time")
    expect(page.locator("#return-instruction")).to_contain_text(
        "Please return the study on Prolific"
    )
    assert page.locator("#completion-code").count() == 0


def test_a_full_study_turns_newcomers_away_with_the_return_instruction(site: Site, browser):
    from playwright.sync_api import expect

    page = browser.new_context().new_page()
    page.goto(f"{site.url}/s/full/?PROLIFIC_PID=DA7E0000000000000000D001")
    expect(page.locator("h1")).to_have_text("This study is full")
    expect(page.locator("#return-instruction")).to_contain_text("return the study on Prolific")
    assert page.locator("#start").count() == 0


def test_twelve_pilots_fill_the_demo_undercover_study_in_balance(site: Site):
    """``manage.py pilot demo-undercover --participants 12`` against the served site: every table
    finishes by the rules, people and agents share tables, both conditions get six. (The same
    site as the other tests: two sites on one Redis database would share table groups.)"""
    site.manage("seed_demo")
    result = subprocess.run(
        [sys.executable, "manage.py", "pilot", "demo-undercover"]
        + ["--participants", "12", "--base", site.url],
        cwd=ROOT,
        env=site.env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert result.returncode == 0, result.stderr[-3000:] + result.stdout[-3000:]
    report = json.loads(result.stdout)
    assert report["ok"] and report["problems"] == []
    assert "36/36" in result.stderr  # the progress bar: 12 bots, 3 rounds each, on stderr
    assert report["conditions"] == {"two-people": 6, "one-person": 6}
    # A group design: groups, not arrivals, were randomised, each to one condition.
    assert {p["randomisation_unit"] for p in report["people"]} == {"group"}
    assert report["groups"] >= 6
    assert all(t["status"] == "finished" and t["end"] for t in report["tables"])
    assert report["mixed_tables"] == len(report["tables"])
    two = [t for t in report["tables"] if t["condition"] == "two-people"]
    assert any(sum(s["kind"] == "human" for s in t["seats"]) == 2 for t in two)
    for person in report["people"]:
        assert person["pilot"] and person["status"] == "finished"
        assert person["consented_at"] and person["rounds_finished"] == 3
        assert person["code_shown"] == "DEMOUCFIN" and person["payment_amount"] == "6.00"
    # Every pilot answered the exit questionnaire through the link; the export carries it.
    out = site.log_path.parent / "export-uc"
    site.manage(
        "export_study",
        "demo-undercover",
        "--format",
        "csv",
        "--out",
        str(out),
        "--include-pilots",
        "--check",
    )
    answers = pd.read_csv(out / "questionnaire.csv", keep_default_na=False)
    answered = answers[answers["item"] == "difficulty"]
    assert sorted(answered["player"]) == sorted(p["public_id"] for p in report["people"])
