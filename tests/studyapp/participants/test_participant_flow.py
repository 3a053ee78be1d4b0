"""The participant's path, driven with Django's test client: landing, consent, practice, cumulative
rounds with the running reward, the policy question and the completion code; leaving and coming
back; declining; withdrawing."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.urls import reverse
from participant_helpers import arrive, consent, get_ready, page, win_round

from studyapp.participants.models import Participant, Round
from studyapp.participants.rounds import current_round
from studyapp.tables.models import Table, Turn

pytestmark = pytest.mark.django_db

PROLIFIC = "?PROLIFIC_PID=5f1a2b3c4d5e6f708192a3b4&STUDY_ID=st42&SESSION_ID=se99"


def test_it_stores_nothing_but_the_visit_before_consent(study, alice):
    participant = arrive(alice, study, PROLIFIC)
    assert participant.status == Participant.Status.VISITED
    assert participant.prolific_pid == ""
    assert participant.prolific_session_id == ""
    assert participant.consented_at is None


def test_it_stores_the_recruiter_ids_and_consent_version_on_consent(study, alice):
    participant = arrive(alice, study, PROLIFIC)
    consent(alice, participant)
    participant.refresh_from_db()
    assert participant.prolific_pid == "5f1a2b3c4d5e6f708192a3b4"
    assert participant.prolific_study_id == "st42"
    assert participant.prolific_session_id == "se99"
    assert participant.consent_version == "2"
    assert participant.consented_at is not None
    assert participant.status == Participant.Status.CONSENTED


def test_it_reads_a_generic_pid(study, alice):
    participant = arrive(alice, study, "?pid=cohort-7")
    consent(alice, participant)
    participant.refresh_from_db()
    assert participant.recruiter_pid == "cohort-7"


def test_the_practice_question_must_be_answered_right_before_the_rounds(study, alice):
    participant = arrive(alice, study)
    consent(alice, participant)
    response = alice.post(page(participant, "instructions"), {"check_0": "Any sentence it likes"})
    assert b"Not quite" in response.content
    assert alice.get(page(participant, "play"))["Location"] == page(participant, "instructions")
    response = alice.post(page(participant, "instructions"), {"check_0": "Yes, No or Invalid"})
    assert response["Location"] == page(participant, "play")


def test_a_participant_plays_every_round_writes_a_policy_and_gets_the_code(study, alice):
    participant = get_ready(alice, study, PROLIFIC)
    win_round(alice, participant)
    assert participant.rounds_finished == 1
    response = alice.get(page(participant, "play"))
    assert b"Game 2 of 2" in response.content
    assert b'id="total-reward">1.00<' in response.content
    win_round(alice, participant)
    assert participant.rounds_finished == 2
    assert participant.total_reward == pytest.approx(2.0)
    assert alice.get(page(participant, "play"))["Location"] == page(participant, "policy")

    response = alice.post(
        page(participant, "policy"), {"policy": "Halve the candidates each time."}
    )
    assert response["Location"] == page(participant, "done")
    participant.refresh_from_db()
    assert participant.status == Participant.Status.FINISHED
    assert participant.policy == "Halve the candidates each time."
    assert participant.payment_amount == Decimal("10.00")
    assert participant.bonus == Decimal("2.00")
    assert participant.payment_status == "owed"
    done = alice.get(page(participant, "done"))
    assert b"FIN123" in done.content
    assert b"https://app.prolific.com/submissions/complete?cc=FIN123" in done.content


def test_every_round_is_a_twenty_questions_table_against_the_oracle_spec(study, alice):
    participant = get_ready(alice, study)
    response = alice.post(page(participant, "play"))
    round_ = current_round(participant)
    assert response["Location"] == reverse("tables:table", args=[round_.table_id])
    table = round_.table
    seats = list(table.seats.order_by("index"))
    assert table.game == "twenty-questions"
    assert seats[0].kind == "human" and seats[0].session_key == alice.session.session_key
    assert seats[1].kind == "agent" and seats[1].agent_spec == "offline:kb"


def test_starting_a_round_twice_makes_one_table(study, alice):
    participant = get_ready(alice, study)
    alice.post(page(participant, "play"))
    alice.post(page(participant, "play"))
    assert Table.objects.count() == 1
    assert Round.objects.count() == 1


def test_every_participant_meets_the_same_word_in_the_same_round(study, alice, bob):
    a, b = get_ready(alice, study), get_ready(bob, study)
    alice.post(page(a, "play"))
    bob.post(page(b, "play"))
    assert current_round(a).table.config == current_round(b).table.config


def test_coming_back_resumes_at_the_same_round(study, alice):
    participant = get_ready(alice, study)
    win_round(alice, participant)
    alice.post(page(participant, "play"))
    table_id = current_round(participant).table_id
    # Leave, then open the study link again in the same browser.
    response = alice.get(reverse("participants:study_link", args=[study.slug]))
    assert response["Location"] == page(participant, "play")
    response = alice.get(page(participant, "play"))
    assert b"Continue game 2" in response.content
    response = alice.post(page(participant, "play"))
    assert response["Location"] == reverse("tables:table", args=[table_id])


def test_declining_consent_ends_politely_asking_to_return_the_study(study, alice):
    participant = arrive(alice, study, PROLIFIC)
    response = alice.post(page(participant, "consent"), {"decline": "1"}, follow=True)
    assert b"You chose not to take part" in response.content
    assert b"Please return the study on Prolific" in response.content
    assert b"SCR789" not in response.content  # no code: Prolific's convention is to return
    participant.refresh_from_db()
    assert participant.status == Participant.Status.DECLINED
    assert participant.prolific_pid == ""
    assert alice.post(page(participant, "play")).status_code == 403


def test_stopping_early_keeps_the_games_and_pays_for_the_rounds_played(study, alice):
    participant = get_ready(alice, study)
    win_round(alice, participant)
    response = alice.post(page(participant, "withdraw"), {})
    assert b"DROP456" in response.content
    participant.refresh_from_db()
    assert participant.status == Participant.Status.DROPPED
    assert participant.payment_amount == Decimal("5.00")
    assert participant.payment_status == "owed"
    assert Round.objects.filter(participant=participant).count() == 1


def test_withdrawing_with_deletion_deletes_their_games_tables_and_turns(study, alice, bob):
    keep = get_ready(bob, study)
    win_round(bob, keep)
    participant = get_ready(alice, study, PROLIFIC)
    win_round(alice, participant)
    alice.post(page(participant, "play"))
    response = alice.post(page(participant, "withdraw"), {"delete_data": "on"})
    assert b"have been deleted" in response.content
    assert b"DROP456" in response.content
    assert Table.objects.count() == 1
    assert Turn.objects.exclude(table__in=Table.objects.all()).count() == 0
    assert Round.objects.get().participant == keep
    participant.refresh_from_db()
    assert participant.status == Participant.Status.WITHDRAWN
    assert participant.total_reward == 0
    # What paying them needs stays: they played one of two rounds.
    assert participant.prolific_pid == "5f1a2b3c4d5e6f708192a3b4"
    assert participant.payment_amount == Decimal("5.00")
    assert participant.payment_status == "owed"


def test_a_participant_who_stopped_cannot_play_on(study, alice):
    participant = get_ready(alice, study)
    alice.post(page(participant, "withdraw"), {})
    assert alice.post(page(participant, "play")).status_code == 403
    assert alice.get(page(participant, "play"))["Location"] == page(participant, "done")
    assert not Round.objects.exists()


def test_a_study_without_a_policy_question_finishes_after_the_last_round(study, alice):
    study.policy_question = ""
    study.save()
    participant = get_ready(alice, study)
    win_round(alice, participant)
    win_round(alice, participant)
    assert participant.status == Participant.Status.FINISHED
    assert alice.get(page(participant, "play"))["Location"] == page(participant, "done")
