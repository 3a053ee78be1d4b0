"""Pilots rehearse the attention checks: bots answer them as the study expects (or, asked to,
wrongly), and the pilot's report names a bot screened out by a check it answered as designed, or
one that missed a check on purpose without the policy following."""

from __future__ import annotations

import pytest
from participant_helpers import get_ready, page, win_round

from studyapp.participants import pilots
from studyapp.participants.management.commands.pilot import attention_checks, pilot_report
from studyapp.participants.models import Participant
from studyapp.participants.pilot_bot import BotResult
from studyapp.participants.pilot_pages import questionnaire_answers

pytestmark = pytest.mark.django_db

ITEMS = [
    {"id": "hard", "question": "It was hard.", "kind": "likert"},
    {
        "id": "attention",
        "question": "Choose 'Often' here.",
        "kind": "choice",
        "options": ["Never", "Sometimes", "Often"],
        "expected": "Often",
    },
    {"id": "count", "question": "Type 7.", "kind": "number", "expected": 7},
]


def bot_through(client, study, index: int, fail: bool) -> tuple[Participant, BotResult]:
    """One participant taken to the questionnaire, which is answered by the pilot bot's own
    function from the page the participant gets; returns it with the bot's result."""
    participant = get_ready(client, study, f"?pilot={pilots.pilot_token(study.slug)}")
    assert participant.is_pilot
    win_round(client, participant)
    win_round(client, participant)
    client.post(page(participant, "policy"), {"policy": "Halve the candidates."})
    shown = client.get(page(participant, "questionnaire")).content.decode()
    answers = questionnaire_answers(shown, index, attention_checks(study), fail)
    posted = {k: v if isinstance(v, list) else [v] for k, v in answers.items()}
    done = client.post(page(participant, "questionnaire"), posted, follow=True)
    participant.refresh_from_db()
    code = done.content.decode().split('id="completion-code">')[-1].split("<")[0]
    result = BotResult(index=index, pid=f"PILOT{index}", public_id=participant.public_id)
    result.status, result.code = participant.status, code
    return participant, result


def test_bots_answer_attention_checks_as_designed_whatever_their_index(screening, client_factory):
    for index in range(1, 5):  # before, bots picked options by index: 3 of 4 were screened
        participant, _ = bot_through(client_factory(), screening, index, fail=False)
        assert participant.attention_failed == [] and participant.status == "finished"
        assert participant.questionnaire_answers["attention"] == "Often"


def test_a_bot_asked_to_fail_misses_every_check_and_is_screened(screening, alice):
    participant, result = bot_through(alice, screening, 1, fail=True)
    assert participant.attention_failed == ["attention", "count"]
    assert participant.status == "screened" and result.code == "SCR789"
    assert pilot_report(screening, [result], fail_attention=1)["problems"] == []


def test_the_report_names_a_bot_screened_by_a_check_it_answered_as_designed(screening, alice):
    participant, result = bot_through(alice, screening, 1, fail=True)
    report = pilot_report(screening, [result], fail_attention=0)
    assert not report["ok"]
    assert any(
        "screened out by an attention check it answered as designed" in p
        for p in report["problems"]
    )
    row = report["people"][0]
    assert row["attention_failed"] == ["attention", "count"]
    assert row["reason"].startswith("attention check failed: attention, count")


def test_the_report_names_a_bot_that_missed_a_check_without_being_screened(screening, alice):
    screening.attention_failure = "flag"
    screening.save()
    participant, result = bot_through(alice, screening, 1, fail=True)
    assert participant.status == "finished" and participant.attention_failed
    assert pilot_report(screening, [result], fail_attention=1)["problems"] == []
    screening.attention_failure = "screen"
    screening.save()
    report = pilot_report(screening, [result], fail_attention=1)
    assert any("was not screened out" in p for p in report["problems"])
