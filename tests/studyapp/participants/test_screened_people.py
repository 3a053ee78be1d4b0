"""Screened people (``attention_failure = "screen"``) are told the truth (an attention check was
missed, what the study pays them, what is kept) and are in every file of the export with the
check they failed; a dropout who finished no game is not promised pay."""

from __future__ import annotations

import html

import pandas as pd
import pytest
from participant_helpers import get_ready, page, win_round

from studyapp.participants.models import Participant
from tests.exports import export_checked

pytestmark = pytest.mark.django_db

ITEMS = [
    {"id": "hard", "question": "The game was hard.", "kind": "likert"},
    {
        "id": "attention",
        "question": "To show you read this, choose 'Blue'.",
        "kind": "choice",
        "options": ["Red", "Blue", "Green"],
        "expected": "Blue",
    },
]


def screened(client, study) -> tuple[Participant, str]:
    participant = get_ready(client, study)
    win_round(client, participant)
    win_round(client, participant)
    client.post(page(participant, "policy"), {"policy": "Ask about animals first."})
    response = client.post(
        page(participant, "questionnaire"),
        {"q_hard": ["Agree"], "q_attention": ["Red"]},
        follow=True,
    )
    participant.refresh_from_db()
    return participant, html.unescape(response.content.decode())


def test_a_screened_person_is_told_the_check_was_missed_and_that_nothing_is_paid(screening, alice):
    participant, text = screened(alice, screening)
    assert participant.status == "screened"
    assert "You chose not to take part" not in text and "Nothing about you" not in text
    assert "An attention check in the questionnaire was not answered as it asked" in text
    assert "To show you read this, choose 'Blue'." in text  # the check they missed
    assert "does not pay people in this case" in text and "is kept for the research" in text
    assert 'id="completion-code">SCR789<' in text
    assert participant.payment_amount == 0 and participant.payment_status == "not due"
    assert participant.end_reason == "attention check failed: attention"


@pytest.mark.parametrize(
    ("policy", "amount", "said"),
    [("played", "10.00", "for the games they played"), ("full", "10.00", "in full")],
)
def test_a_screened_person_is_paid_what_the_studys_policy_says(
    screening, alice, policy, amount, said
):
    screening.screened_pay = policy
    screening.save()
    participant, text = screened(alice, screening)
    assert said in text and f'id="payment-amount">{amount} USD<' in text
    assert participant.payment_status == "owed"
    # Both games were played, so the share is the whole; a bonus follows the study's rule.
    assert str(participant.payment_amount) == amount and participant.bonus_due > 0


def test_a_screened_person_is_in_every_file_with_the_check_they_failed(
    screening, alice, bob, tmp_path
):
    person, _ = screened(alice, screening)
    finisher = get_ready(bob, screening)
    win_round(bob, finisher)
    win_round(bob, finisher)
    bob.post(page(finisher, "policy"), {"policy": "Halve the candidates."})
    bob.post(page(finisher, "questionnaire"), {"q_hard": ["Agree"], "q_attention": ["Blue"]})
    printed = export_checked(screening.slug, str(tmp_path), "--format", "csv")
    assert "check: the files agree" in printed
    people = pd.read_csv(tmp_path / "participants.csv", keep_default_na=False).set_index("player")
    row = people.loc[person.public_id]
    assert row["status"] == "screened" and row["attention_failed"] == "attention"
    assert row["reason"].startswith("attention check failed: attention")
    assert people.loc[finisher.public_id, "status"] == "finished"
    games = pd.read_csv(tmp_path / "games.csv", keep_default_na=False)
    assert set(games.loc[games["player_kind"] == "human", "player"]) <= set(people.index)
    # People's games carry no model setting: no strategy text was shown to them.
    assert set(games.loc[games["player_kind"] == "human", "setting"]) == {"none"}
    answers = pd.read_csv(tmp_path / "questionnaire.csv", keep_default_na=False)
    mine = answers[answers["player"] == person.public_id].set_index("item")
    assert mine.loc["attention", "answer"] == "Red"
    assert str(mine.loc["attention", "passed"]) == "False"
    versions = pd.read_csv(tmp_path / "consent_versions.csv", keep_default_na=False)
    assert versions.set_index("version").loc[2, "participants"] == 2
    readme = (tmp_path / "README.md").read_text()
    assert "- screened: 1" in readme and "- finished: 1" in readme
    # the analysis counts the finisher alone: the screened person is left out (issue 48)
    assert "`analysis/participants.csv` summarises the 1 person counted" in readme
    assert "the other 1 (" in readme and person.public_id in readme.split("the other 1 (")[1]


def test_the_check_names_a_person_missing_from_participants(screening, alice, tmp_path):
    """The check fails, naming the file and the person, when a file names someone the
    participants file does not have."""
    from analysis.export_check import check_export

    person, _ = screened(alice, screening)
    export_checked(screening.slug, str(tmp_path), "--format", "csv")
    people = pd.read_csv(tmp_path / "participants.csv", dtype=object, keep_default_na=False)
    people[people["player"] != person.public_id].to_csv(tmp_path / "participants.csv", index=False)
    problems = check_export(tmp_path)
    assert any(p.startswith("games:") and person.public_id in p for p in problems)
    assert any(p.startswith("consent_versions:") for p in problems)


def test_a_dropout_who_finished_no_game_is_not_promised_pay(study, alice):
    participant = get_ready(alice, study)
    response = alice.post(page(participant, "withdraw"), {}, follow=True)
    participant.refresh_from_db()
    assert participant.status == "dropped" and participant.payment_amount == 0
    response = alice.get(page(participant, "done"))
    text = html.unescape(response.content.decode())
    assert "you will be paid for it" not in text and "You are paid 0.00" not in text
    assert "nothing is owed" in text


def test_a_dropouts_time_runs_to_their_last_move_not_their_last_page(study, alice):
    """Play at a table does not move ``last_seen_at``: someone dropped for idling at a table is
    timed to their last move there (before, 0.55 s were recorded for minutes of play)."""
    from datetime import timedelta

    from django.utils import timezone

    from studyapp.participants import rounds
    from studyapp.tables import services

    participant = get_ready(alice, study)
    alice.post(page(participant, "play"))
    participant.refresh_from_db()
    earlier = timezone.now() - timedelta(minutes=6)
    type(participant).objects.filter(pk=participant.pk).update(
        started_at=earlier, last_seen_at=earlier + timedelta(seconds=1)
    )
    round_ = rounds.current_round(participant)
    services.submit(round_.table_id, 0, {"type": "question", "text": "Is it alive?"})
    participant.refresh_from_db()
    rounds.mark_dropped(participant, "idle at a table past the study's idle limit")
    participant.refresh_from_db()
    assert participant.time_spent.total_seconds() > 5 * 60
    assert participant.end_reason == "idle at a table past the study's idle limit"
