"""A blinded pilot in real Chromium (issue 31's must-reach): two people and three offline agents
at one Who is Undercover study table that does not disclose its agents (``agents_disclosed =
false``), over the real link and socket.

Every page and socket frame each person gets is kept and searched for a tell (the word agent, a
model spec, a seat's kind); every frame that asks a person for a move carries the turn deadline's
countdown (the same rule for every seat, whoever sits at the others); the seat order is drawn.
The people here wait before each move a time drawn from their own distribution (uniform, 1 to
5 s, plus the time a browser takes to notice its turn: not the agents'), and the export's
``turns.csv`` then gives the move times of both: agents must take a person's time (their medians within a factor of two; agents never answer at once).
The figures (frames compared, move-time quantiles per kind, the two-sample Kolmogorov-Smirnov
statistic) are printed and written to ``blinded_pilot.json`` in the site's folder.
"""

from __future__ import annotations

import json
import random
import re
import time
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

from tests.e2e.site import UNDERCOVER_SETUP, LiveSite

pytestmark = pytest.mark.e2e

SETUP = (
    UNDERCOVER_SETUP
    + """
Study.objects.create(slug="blind", title="Words with others", game="undercover", rounds=1,
    seed=11, consent_text="Recorded for research.", completion_url="https://app.prolific.com/x",
    code_finished="BLINDOK", checks=checks, agents_disclosed=False,
    agent_think_seconds={"clue": [1.5, 6], "vote": [1.5, 6], "timed_out": 0},
    turn_deadline_seconds=120, debrief_text="Thank you. Some players were computer programs.",
    design={"seats": [person, person, agent, agent, agent], "wait_seconds": 120})
"""
)
SPECS = ("offline:", "openai", "anthropic", "descriptor")
PERSON_WAIT = (1.0, 5.0)  # the scripted people's think time, seconds (uniform)
# The scripted people never let a deadline pass, so neither do the agents (timed_out = 0): the
# default share would have an agent wait out the whole 120 s deadline now and then.


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveSite]:
    server = LiveSite(tmp_path_factory.mktemp("blinded-pilot"), AGENT_DELAY_SECONDS="0")
    server.start(SETUP)
    yield server
    server.stop()


class Person:
    """A browser that keeps every page and socket frame it receives and moves after a wait of
    its own when the board asks it to."""

    def __init__(self, browser, site: LiveSite, pid: str, rng: random.Random) -> None:
        self.page = browser.new_context().new_page()
        self.page.set_default_timeout(20_000)
        self.frames: list[str] = []
        self.pages: list[str] = []  # the table's pages as loaded (a reload shows the same)
        self.rng = rng
        self.due: float | None = None
        self.clues = 0
        self.page.on("websocket", self.listen)
        self.page.on("load", self.loaded)
        self.page.goto(f"{site.url}/s/blind/?PROLIFIC_PID={pid}&STUDY_ID=st&SESSION_ID=se")

    def loaded(self, page) -> None:
        if "/tables/" in page.url:  # the pages before play are the same for everyone
            self.pages.append(page.content())

    def listen(self, socket) -> None:
        socket.on("framereceived", lambda payload: self.frames.append(str(payload)))

    def step(self) -> bool:
        """Move if asked (after this person's wait); True once the game is over."""
        page = self.page
        if page.locator("#result").count():
            return True
        form = page.locator("#clue-text").count() or page.locator("#cast-vote").count()
        if not form:
            self.due = None
            return False
        if self.due is None:
            self.due = time.monotonic() + self.rng.uniform(*PERSON_WAIT)
            return False
        if time.monotonic() < self.due:
            return False
        self.due = None
        if page.locator("#clue-text").count():
            self.clues += 1
            page.fill("#clue-text", f"I see it around quite a lot, thought {self.clues}.")
            page.click("#give-clue")
        else:
            page.locator("input[name=target]").first.check()
            page.click("#cast-vote")
        page.wait_for_timeout(100)
        return False


def tell(html: str) -> str:
    """What in a page or frame would tell an agent's seat from a person's ('' if nothing)."""
    lowered = html.lower()
    if re.search(r"\bagents?\b", lowered):
        return "agent"
    if "data-kind" in lowered or "seat-kind" in lowered:
        return "a seat's kind"
    return next((spec for spec in SPECS if spec in lowered), "")


def test_a_blinded_pilot_with_two_people_and_three_agents(site: LiveSite, browser, tmp_path: Path):
    from playwright.sync_api import expect

    people = [
        Person(browser, site, "a11ce0000000000000000031", random.Random(1)),
        Person(browser, site, "b0b000000000000000000031", random.Random(2)),
    ]
    for person in people:
        page = person.page
        page.click("#start")
        page.check("#id_agree")
        page.click("#consent")
        page.get_by_label("The common word").check()
        page.click("#practice")
        expect(page.locator("h1")).to_have_text("Game 1 of 1")
    people[0].page.click("#play-round")
    expect(people[0].page.locator("#lobby")).to_be_visible()
    people[1].page.click("#play-round")
    for person in people:  # a blinded lobby holds 5 to 45 s even when full
        expect(person.page.locator("#my-word")).to_be_visible(timeout=60_000)
    over = [False, False]
    deadline = time.monotonic() + 300
    while not all(over) and time.monotonic() < deadline:
        for i, person in enumerate(people):
            over[i] = over[i] or person.step()
        people[0].page.wait_for_timeout(100)
    assert all(over), "the game did not end"
    debriefs = []
    for person in people:
        person.pages.append(person.page.content())  # the table at the end, as it stands
        person.page.click("#continue")
        expect(person.page.locator("#submit-debrief")).to_be_visible()
        debriefs.append(person.page.content())

    # Nothing during play tells an agent's seat from a person's.
    boards = [(i, f) for i, p in enumerate(people) for f in p.frames if 'id="board"' in f]
    played = [(i, p) for i, person in enumerate(people) for p in person.pages]
    found = [(i, tell(html)) for i, html in boards + played if tell(html)]
    assert not found, found
    asked = [f for _, f in boards if 'id="clue-text"' in f or 'id="cast-vote"' in f]
    assert asked and all('id="turn-deadline"' in f for f in asked)
    # The debrief (after play) says that some players were agents.
    assert all("we did not say which players were agents" in page for page in debriefs)

    out = tmp_path / "export"
    site.manage("export_study", "blind", "--out", str(out), "--format", "csv", "--quiet")
    turns = pd.read_csv(out / "turns.csv")
    games = pd.read_csv(out / "games.csv")
    slots = games.set_index("seat")["seat_slot"].to_dict()
    assert sorted(slots.values()) == [0, 1, 2, 3, 4]
    person_seats = sorted(games[games["player_kind"] == "human"]["seat"])
    assert sorted(slots[s] for s in person_seats) == [0, 1]
    moves = turns[turns["type"].isin(["clue", "vote"])]
    times = {
        kind: moves[moves["actor_kind"] == kind]["duration_s"] for kind in ("human", "offline")
    }
    agents, humans = times["offline"].to_numpy(), times["human"].to_numpy()
    assert len(agents) >= 6 and len(humans) >= 4
    # Issue 42: the agents' clues are worded as people's (no fixed lead-in), never said twice.
    said = moves[moves["type"] == "clue"]["text"].dropna().str.lower().str.strip(" .")
    assert said.is_unique, said[said.duplicated()].tolist()
    clues = moves[moves["type"] == "clue"]
    passed = clues[clues["text"].isna() & (clues["actor_kind"] == "offline")]
    assert passed.empty, passed[["seq", "seat", "event"]].to_dict("records")  # agents never pass
    figures = {
        "frames_compared": len(boards),
        "pages_compared": len(played),
        "frames_asking_a_move_with_countdown": len(asked),
        "person_seats": person_seats,
        "seat_slots": {int(k): int(v) for k, v in slots.items()},
        "move_seconds": {
            kind: {
                "n": int(len(values)),
                **{
                    f"q{q}": round(float(pd.Series(values).quantile(q / 100)), 2)
                    for q in (10, 50, 90)
                },
            }
            for kind, values in (("agents", agents), ("people", humans))
        },
        "ks_statistic": round(ks_statistic(agents, humans), 3),
        "median_seconds_by_move": {
            f"{kind} {move}": round(float(group["duration_s"].median()), 2)
            for (kind, move), group in moves.groupby(["actor_kind", "type"])
        },
    }
    (Path(site.log_path).parent / "blinded_pilot.json").write_text(json.dumps(figures, indent=2))
    print("\nblinded pilot:", json.dumps(figures))
    median_agents, median_people = pd.Series(agents).median(), pd.Series(humans).median()
    # An agent never gives a clue at once (a ballot may follow another at once: people and
    # agents vote together, each from the moment the vote opened).
    agent_clues = moves[(moves["actor_kind"] == "offline") & (moves["type"] == "clue")]
    assert agent_clues["duration_s"].min() >= 1.0, figures
    assert 0.5 <= median_agents / median_people <= 2.0, figures


def ks_statistic(a, b) -> float:
    """The two-sample Kolmogorov-Smirnov statistic: the largest gap between the two empirical
    distribution functions (0: the same; 1: apart)."""
    a, b = sorted(a), sorted(b)
    points = sorted(set(a) | set(b))
    gap = 0.0
    for x in points:
        fa = sum(v <= x for v in a) / len(a)
        fb = sum(v <= x for v in b) / len(b)
        gap = max(gap, abs(fa - fb))
    return gap
