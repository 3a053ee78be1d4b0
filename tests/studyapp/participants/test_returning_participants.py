"""A Prolific participant who opens the same study link in another browser (a device switch, lost
cookies) is the same person: Start rejoins their participant where they stopped, with no second
consent and no extra row. Those who finished see their code; those who stopped are told politely.
A personal invite keeps its stricter rule (see test_participant_access)."""

from __future__ import annotations

import pytest
from django.db import IntegrityError
from django.urls import reverse
from participant_helpers import arrive, consent, get_ready, page, win_round

from studyapp.participants.models import Participant
from studyapp.participants.rounds import current_round

pytestmark = pytest.mark.django_db

PID = "5f1a2b3c4d5e6f708192a3b4"
PROLIFIC = f"?PROLIFIC_PID={PID}&STUDY_ID=st42&SESSION_ID=se99"


def link(study) -> str:
    return reverse("participants:study_link", args=[study.slug]) + PROLIFIC


def test_a_returning_prolific_participant_resumes_in_a_new_browser(study, alice, bob):
    participant = get_ready(alice, study, PROLIFIC)
    win_round(alice, participant)
    alice.post(page(participant, "play"))
    table_id = current_round(participant).table_id

    assert bob.get(link(study)).status_code == 200  # the welcome page; a GET claims nothing
    response = bob.post(link(study))
    assert response["Location"] == page(participant, "play")
    assert b"Continue game 2" in bob.get(page(participant, "play")).content
    response = bob.post(page(participant, "play"))
    assert response["Location"] == reverse("tables:table", args=[table_id])
    assert bob.get(reverse("tables:table", args=[table_id])).status_code == 200
    assert Participant.objects.get() == participant


def test_a_returning_prolific_participant_is_not_asked_to_consent_again(study, alice, bob):
    participant = arrive(alice, study, PROLIFIC)
    consent(alice, participant)
    participant.refresh_from_db()
    consented_at = participant.consented_at

    response = bob.post(link(study))
    assert response["Location"] == page(participant, "instructions")
    assert bob.get(page(participant, "consent"))["Location"] == page(participant, "instructions")
    participant.refresh_from_db()
    assert participant.consented_at == consented_at
    assert Participant.objects.count() == 1


def test_the_browser_that_continues_a_round_holds_its_seat(study, alice, bob):
    participant = get_ready(alice, study, PROLIFIC)
    alice.post(page(participant, "play"))
    table_url = reverse("tables:table", args=[current_round(participant).table_id])
    bob.post(link(study))
    bob.post(page(participant, "play"))
    assert alice.get(table_url).status_code in (403, 404)
    alice.post(page(participant, "play"))  # back in the first browser: "Continue game 1"
    assert alice.get(table_url).status_code == 200


def test_a_returning_prolific_participant_who_finished_sees_their_code(study, alice, bob):
    participant = get_ready(alice, study, PROLIFIC)
    win_round(alice, participant)
    win_round(alice, participant)
    alice.post(page(participant, "policy"), {"policy": "Halve the candidates."})

    response = bob.post(link(study), follow=True)
    assert response.redirect_chain[-1][0] == page(participant, "done")
    assert b"Your completion code" in response.content
    assert b"FIN123" in response.content
    assert Participant.objects.count() == 1


@pytest.mark.parametrize("form", [{}, {"delete_data": "on"}], ids=["dropped", "withdrawn"])
def test_a_returning_prolific_participant_who_stopped_is_told_politely(study, alice, bob, form):
    participant = get_ready(alice, study, PROLIFIC)
    alice.post(page(participant, "withdraw"), form)

    response = bob.post(link(study))
    assert response.status_code == 200
    assert b"already stopped taking part" in response.content
    assert b"DROP456" in response.content
    assert Participant.objects.get() == participant
    assert str(study.pk) not in bob.session.get("participants", {})
    assert bob.get(page(participant, "done")).status_code == 404


def test_a_second_browser_that_started_before_the_first_consented_joins_it(study, alice, bob):
    first = arrive(alice, study, PROLIFIC)
    second = arrive(bob, study, PROLIFIC)
    consent(alice, first)

    response = bob.post(page(second, "consent"), {"version": "2", "agree": "on"})
    assert response["Location"] == page(first, "instructions")
    assert list(Participant.objects.all()) == [first]  # no empty row left behind
    assert bob.get(page(first, "instructions")).status_code == 200


def test_a_second_browser_of_someone_who_stopped_is_told_politely_at_consent(study, alice, bob):
    first = arrive(alice, study, PROLIFIC)
    second = arrive(bob, study, PROLIFIC)
    consent(alice, first)
    alice.post(page(first, "withdraw"), {})

    response = bob.post(page(second, "consent"), {"version": "2", "agree": "on"})
    assert b"already stopped taking part" in response.content
    assert list(Participant.objects.all()) == [first]


def test_another_prolific_id_gets_a_participant_of_its_own(study, alice, bob):
    first = get_ready(alice, study, PROLIFIC)
    second = get_ready(bob, study, "?PROLIFIC_PID=60a1b2c3d4e5f60718293a4b")
    assert first != second
    assert second.prolific_pid == "60a1b2c3d4e5f60718293a4b"
    assert second.status == Participant.Status.PLAYING


def test_a_link_without_a_prolific_id_never_rejoins_anyone(study, alice, bob):
    first = get_ready(alice, study, "?pid=cohort-7")
    second = arrive(bob, study, "?pid=cohort-7")
    assert first != second
    assert second.status == Participant.Status.VISITED


def test_the_database_holds_one_participant_per_prolific_id_and_study(study):
    Participant.objects.create(study=study)
    Participant.objects.create(study=study)  # no Prolific ID: any number
    Participant.objects.create(study=study, prolific_pid=PID)
    with pytest.raises(IntegrityError):
        Participant.objects.create(study=study, prolific_pid=PID)
