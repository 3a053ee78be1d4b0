"""A study's launch on a served site (daphne, its in-process steps executor) with model agents
answering from a loopback server in OpenAI's wire format: the spend plan made before a pilot
against the model calls the pilot then makes, and the model budget holding while the pilot's
people play (no table opens past it; the design's stand-in takes the model's seats)."""

from __future__ import annotations

import json

import pytest

from tests.e2e.site import LiveSite
from tests.fakes.game_responder import GameResponder
from tests.fakes.llm_server import FakeLLMServer

MODEL = "openai-compatible:loopback"
PEOPLE = 6

SETUP = f"""
from studyapp.participants.models import Study
agent = {{"kind": "agent", "spec": "{MODEL}"}}
for slug, fields in (
    ("uc-plan", {{}}),
    ("uc-capped", {{"model_budget": "0.50", "over_budget": "stand-in",
                   "model_prices": {{"{MODEL}": ["10.00", "10.00"]}}}}),
):
    Study.objects.create(
        slug=slug, title="Words among players", game="undercover", rounds=2,
        design={{"seats": [{{"kind": "person"}}, agent, agent, agent, agent], "wait_seconds": 0}},
        consent_text="Your games are recorded for research.", agents_disclosed=True,
        completion_url="https://app.prolific.com/submissions/complete",
        code_finished="FIN123", code_dropped="DROP456", payment_amount="4.50", **fields,
    )
"""


@pytest.fixture(scope="module")
def model():
    with FakeLLMServer(GameResponder()) as server:
        yield server


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory, model: FakeLLMServer):
    site = LiveSite(
        tmp_path_factory.mktemp("launch"),
        OPENAI_COMPATIBLE_BASE_URL=model.openai_base_url,
        OPENAI_COMPATIBLE_API_KEY="test",
        AGENT_DELAY_SECONDS="0",
        PROLIFIC_API_TOKEN="",
    )
    site.start(SETUP)
    yield site
    site.stop()


def pilot(site: LiveSite, slug: str) -> dict:
    out = site.manage("pilot", slug, "--participants", str(PEOPLE), "--base", site.url, "--quiet")
    return json.loads(out[out.index("{") :])


def test_the_plan_of_model_calls_is_near_what_a_pilot_then_makes(site, model):
    planned = json.loads(site.manage("study", "plan", "uc-plan", "--places", str(PEOPLE), "--json"))
    before = len(model.requests)
    report = pilot(site, "uc-plan")
    assert report["finished"] == PEOPLE, report["problems"]
    made = len(model.requests) - before
    ratio = planned["models"][MODEL]["calls"] / made
    print(f"planned {planned['models'][MODEL]['calls']} calls, the pilot made {made}: {ratio:.2f}")
    assert 0.6 <= ratio <= 1.6, (planned["models"][MODEL], made)
    spent = json.loads(site.manage("study", "spend", "uc-plan", "--json"))
    # what the turns recorded: near every call the loopback answered (a move computed and then
    # not committed, such as an agent's ballot whose turn a person's ballot took first, keeps
    # no usage)
    assert 0.9 * made <= spent["models"][MODEL]["calls"] <= made


def test_the_model_budget_holds_while_a_pilot_plays_and_no_game_is_cut(site, model):
    before = len(model.requests)
    report = pilot(site, "uc-capped")
    assert report["finished"] == PEOPLE, report["problems"]  # every game played to its end
    assert all(t["status"] == "finished" for t in report["tables"])
    spent = json.loads(site.manage("study", "spend", "uc-capped", "--json"))
    assert spent["reached_at"] is not None  # staff were told
    assert 0 < float(spent["cost"]) <= float(spent["model_budget"]), spent
    assert len(model.requests) > before  # the first table played with the model
    stood_in = site.manage(
        "shell",
        "-c",
        "from studyapp.tables.models import Table;"
        "print(sum(1 for t in Table.objects.filter(study_part__study='uc-capped')"
        " if t.options.get('budget_stand_in')))",
    )
    print(
        f"spent {spent['cost']} of {spent['model_budget']}; stand-in tables: {stood_in.split()[-1]}"
    )
    assert int(stood_in.split()[-1]) >= 1  # later tables seated the stand-in, and say so
