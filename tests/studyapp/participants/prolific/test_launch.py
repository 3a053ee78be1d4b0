"""The Prolific study made from the site's (``manage.py prolific draft|check|publish SLUG``),
against a loopback server speaking Prolific's API for studies: the draft carries every code with
its action, the link with the three parameters, the reward and the places; the check finds no
difference right after, and each one after an edit on Prolific's side; publish waits for none."""

from __future__ import annotations

import io
import logging

import pytest
from django.core.management import CommandError, call_command
from launch_helpers import undercover_study

from studyapp.participants.prolific import launch
from tests.fakes.prolific_server import FakeProlific

pytestmark = pytest.mark.django_db

SITE = "https://games.example.org"


@pytest.fixture
def prolific(settings):
    with FakeProlific() as server:
        settings.PROLIFIC_API_TOKEN = server.token
        settings.PROLIFIC_API_URL = server.url
        settings.SITE_URL = SITE
        yield server


def run(*args: str) -> str:
    out = io.StringIO()
    call_command("prolific", *args, stdout=out)
    return out.getvalue()


def test_a_draft_carries_the_link_codes_reward_and_places_and_the_check_agrees(prolific):
    study = undercover_study(code_actions={"finished": "approve", "dropped": "return"})
    out = run("draft", study.slug, "--places", "30")
    study.refresh_from_db()
    assert study.prolific_study in out and study.places == 30
    sent = prolific.studies[study.prolific_study]
    assert sent["external_study_url"] == (
        f"{SITE}/s/{study.slug}/?PROLIFIC_PID={{{{%PROLIFIC_PID%}}}}"
        "&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}"
    )
    assert sent["reward"] == 450 and sent["total_available_places"] == 30
    assert sent["estimated_completion_time"] == 25
    codes = {c["code"]: c for c in sent["completion_codes"]}
    assert set(codes) == {"FIN123", "DROP456", "LOBBY789"}
    assert codes["FIN123"]["code_type"] == "COMPLETED"
    assert [a["action"] for a in codes["FIN123"]["actions"]] == ["MANUALLY_REVIEW"]
    assert [a["action"] for a in codes["DROP456"]["actions"]] == ["REQUEST_RETURN"]
    assert "matches the site" in run("check", study.slug)


def test_it_refuses_to_draft_a_study_twice_and_sends_nothing(prolific):
    study = undercover_study()
    run("draft", study.slug, "--places", "5")
    sent = len(prolific.requests)
    with pytest.raises(CommandError, match="drafted on Prolific already"):
        run("draft", study.slug, "--places", "5")
    assert len(prolific.requests) == sent and len(prolific.studies) == 1


def test_the_check_lists_each_difference_and_publish_refuses_until_there_is_none(prolific):
    study = undercover_study()
    run("draft", study.slug, "--places", "5")
    study.refresh_from_db()
    codes = [dict(c) for c in prolific.studies[study.prolific_study]["completion_codes"]]
    codes[0] = {**codes[0], "actions": [{"action": "AUTOMATICALLY_APPROVE"}]}
    prolific.edit_study(
        study.prolific_study,
        reward=400,
        total_available_places=50,
        completion_codes=codes[:2] + [{"code": "XTRA", "code_type": "OTHER", "actions": []}],
    )
    out = io.StringIO()
    with pytest.raises(CommandError, match="difference"):
        call_command("prolific", "check", study.slug, stdout=out)
    text = out.getvalue()
    assert "reward (minor units): Prolific has 400, the site 450" in text
    assert "places: Prolific has 50, the site 5" in text
    assert "code FIN123: Prolific's actions are AUTOMATICALLY_APPROVE" in text
    assert "code LOBBY789: missing on Prolific" in text
    assert "code XTRA: on Prolific but no ending" in text
    with pytest.raises(CommandError, match="not published"):
        run("publish", study.slug)
    assert prolific.published == []
    prolific.edit_study(
        study.prolific_study,
        **{k: v for k, v in _drafted(study).items() if k != "status"},
    )
    assert "published" in run("publish", study.slug)
    assert prolific.published == [study.prolific_study]


def _drafted(study) -> dict:
    return launch.draft_body(study, study.places, SITE)


def test_a_draft_without_a_site_address_or_places_says_so_and_sends_nothing(prolific, settings):
    settings.SITE_URL = ""
    study = undercover_study()
    with pytest.raises(CommandError, match="SITE_URL"):
        run("draft", study.slug, "--places", "5")
    with pytest.raises(CommandError, match="--places"):
        run("draft", study.slug, "--site", SITE)
    assert prolific.requests == []


def test_the_token_is_never_logged(prolific, caplog):
    caplog.set_level(logging.DEBUG)
    study = undercover_study()
    run("draft", study.slug, "--places", "5")
    run("check", study.slug)
    run("publish", study.slug)
    assert prolific.token not in caplog.text


def test_a_draft_sends_one_request_and_asks_no_cost_calculator(prolific):
    study = undercover_study()
    run("draft", study.slug, "--places", "5")
    assert [(method, path) for method, path, _ in prolific.requests] == [
        ("POST", "/api/v1/studies/")
    ]


def test_each_return_reason_says_what_the_ending_pays(prolific):
    study = undercover_study(code_screened="SCR321", dropped_pay="played")
    run("draft", study.slug, "--places", "5")
    study.refresh_from_db()
    codes = {c["code"]: c for c in prolific.studies[study.prolific_study]["completion_codes"]}
    screened = codes["SCR321"]["actions"][0]
    assert screened["action"] == "REQUEST_RETURN"
    assert "nothing" in screened["return_reason"] and "bonus" not in screened["return_reason"]
    dropped = codes["DROP456"]["actions"][0]["return_reason"]
    assert "games finished" in dropped and "as a bonus" in dropped
