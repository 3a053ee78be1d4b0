"""A Prolific ID is no password: another browser that knows someone's PROLIFIC_PID gets neither
their participant, nor their seat, nor their code, unless it also shows the recruiter's
SESSION_ID of their submission or the resume link they were shown. The same browser always
resumes. New participants from one address are limited; the local completion page never says
whether a guess is a code; the admin never shows a seat's session key."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse
from participant_helpers import arrive, consent, get_ready, page, win_round

from studyapp.participants import pilots
from studyapp.participants.models import Participant
from studyapp.participants.rounds import current_round
from studyapp.tables.models import Seat

pytestmark = pytest.mark.django_db

PID = "5f1a2b3c4d5e6f708192a3b4"
OWN = f"?PROLIFIC_PID={PID}&STUDY_ID=st42&SESSION_ID=se99"
PID_ONLY = f"?PROLIFIC_PID={PID}&STUDY_ID=st42"
WRONG_SESSION = f"?PROLIFIC_PID={PID}&STUDY_ID=st42&SESSION_ID=guessed"


def link(study, query: str = "") -> str:
    return reverse("participants:study_link", args=[study.slug]) + query


def refused_elsewhere(response) -> None:
    assert response.status_code == 409
    assert b"already taking part in another browser" in response.content


@pytest.mark.parametrize("query", [PID_ONLY, WRONG_SESSION])
def test_a_stranger_with_someones_prolific_id_gets_nothing_of_theirs(study, alice, bob, query):
    participant = get_ready(alice, study, OWN)
    win_round(alice, participant)
    alice.post(page(participant, "play"))
    seat = Seat.objects.get(table_id=current_round(participant).table_id, index=0)

    refused_elsewhere(bob.post(link(study, query)))
    assert "participants" not in bob.session or not bob.session["participants"]
    for step in ("play", "done", "resume", "withdraw"):
        assert bob.get(page(participant, step)).status_code == 404
    assert bob.get(reverse("tables:table", args=[seat.table_id])).status_code == 404
    assert Seat.objects.get(pk=seat.pk).session_key == seat.session_key
    assert Participant.objects.count() == 1


def test_a_variant_of_someones_prolific_id_is_the_same_id_or_refused(study, alice, bob):
    """Prolific's IDs are 24 hex digits: the upper case of someone's ID is their ID (refused
    elsewhere, resumed with their SESSION_ID); an ID with a character more or less, or any other
    shape, is refused with a reason. Nobody takes part twice under a variant of one ID."""
    participant = get_ready(alice, study, OWN)
    refused_elsewhere(bob.post(link(study, f"?PROLIFIC_PID={PID.upper()}&STUDY_ID=st42")))
    for variant in (PID + "_", PID[:-1], PID[:-1] + "g", "a" * 25, "PILOT-0001"):
        response = bob.post(link(study, f"?PROLIFIC_PID={variant}&STUDY_ID=st42"))
        assert response.status_code == 400, variant
        assert b"is not a Prolific ID" in response.content
    assert Participant.objects.count() == 1
    resumed = bob.post(link(study, f"?PROLIFIC_PID={PID.upper()}&STUDY_ID=st42&SESSION_ID=se99"))
    assert resumed["Location"] == page(participant, "play")
    participant.refresh_from_db()
    assert participant.prolific_pid == PID


def test_a_pilot_may_use_an_id_of_its_own(study, bob):
    token = pilots.pilot_token(study.slug)
    response = bob.post(link(study, f"?PROLIFIC_PID=PILOT-0001&pilot={token}"))
    assert response.status_code == 302
    assert Participant.objects.count() == 1


def test_a_stranger_does_not_read_a_finished_participants_code(study, alice, bob):
    participant = get_ready(alice, study, OWN)
    for _ in range(study.rounds):
        win_round(alice, participant)
    alice.post(page(participant, "policy"), {"policy": "Split living and not first."})
    participant.refresh_from_db()
    assert participant.status == "finished"
    response = bob.post(link(study, PID_ONLY), follow=True)
    refused_elsewhere(response)
    assert b"FIN123" not in response.content


@pytest.mark.parametrize("delete_data", [False, True])
def test_a_stranger_does_not_read_the_code_of_someone_who_stopped(study, alice, bob, delete_data):
    participant = get_ready(alice, study, OWN)
    form = {"delete_data": "on"} if delete_data else {}
    alice.post(page(participant, "withdraw"), {**form, "confirm": "on"})
    response = bob.post(link(study, PID_ONLY), follow=True)
    refused_elsewhere(response)
    assert b"DROP456" not in response.content


def test_the_recruiters_session_id_lets_the_person_continue_elsewhere(study, alice, bob):
    participant = get_ready(alice, study, OWN)
    response = bob.post(link(study, OWN))
    assert response["Location"] == page(participant, "play")


def test_the_same_browser_always_resumes_whatever_the_link_says(study, alice):
    participant = get_ready(alice, study, OWN)
    for query in ("", PID_ONLY, WRONG_SESSION, "?PROLIFIC_PID=someoneelse0000000000000"):
        response = alice.post(link(study, query))
        assert response["Location"] == page(participant, "play")


def test_the_resume_link_shown_to_the_participant_opens_their_place_elsewhere(study, alice, bob):
    participant = get_ready(alice, study, PID_ONLY)
    text = alice.get(page(participant, "play")).content.decode()
    resume = re.search(r'id="resume-link">([^<]+)<', text).group(1).replace("&amp;", "&")
    path = resume.removeprefix("http://testserver")
    assert bob.get(path).status_code == 200  # the welcome page; a GET claims nothing
    assert bob.post(path)["Location"] == page(participant, "play")
    assert bob.get(page(participant, "play")).status_code == 200


@pytest.mark.parametrize("token", ["", "x", "p0000000000000000.0123456789abcdef"])
def test_a_wrong_resume_token_is_no_way_in(study, alice, bob, token):
    participant = get_ready(alice, study, OWN)
    refused_elsewhere(bob.post(link(study, f"{PID_ONLY}&resume={token}")))
    forged = f"{participant.public_id}.0123456789abcdef"
    refused_elsewhere(bob.post(link(study, f"{PID_ONLY}&resume={forged}")))
    response = bob.post(link(study, f"?resume={forged}"))
    assert response["Location"] != page(participant, "play")  # a new visitor, not alice


def test_a_second_browser_that_consents_with_the_same_id_but_no_session_is_refused(
    study, alice, bob
):
    first = arrive(alice, study, OWN)
    second = arrive(bob, study, PID_ONLY)
    consent(alice, first)
    response = bob.post(page(second, "consent"), {"version": study.consent_version, "agree": "on"})
    refused_elsewhere(response)
    assert list(Participant.objects.all()) == [first]
    assert bob.get(page(first, "play")).status_code == 404


def test_thirty_new_participants_in_a_second_from_one_address_are_refused_after_a_few(
    study, settings
):
    settings.PARTICIPANT_RATE_BURST = 5
    codes = [Client().post(link(study)).status_code for _ in range(30)]
    assert codes[:5] == [302] * 5
    assert set(codes[5:]) == {429}
    assert Participant.objects.count() == 5
    page_429 = Client().post(link(study))
    assert b"Please wait a minute" in page_429.content
    other = Client(REMOTE_ADDR="10.0.0.7").post(link(study))
    assert other.status_code == 302  # another address is counted apart


def test_pilot_bots_with_a_staff_token_are_not_limited(study, settings):
    settings.PARTICIPANT_RATE_BURST = 2
    query = f"?pilot={pilots.pilot_token(study.slug)}"
    codes = [Client().post(link(study, query)).status_code for _ in range(6)]
    assert codes == [302] * 6
    assert Participant.objects.filter(is_pilot=True).count() == 6


def test_a_returning_participant_is_not_counted_as_new(study, alice, settings):
    settings.PARTICIPANT_RATE_BURST = 1
    participant = get_ready(alice, study, OWN)
    for _ in range(3):
        assert Client().post(link(study, OWN))["Location"] == page(participant, "play")


def test_the_admin_never_shows_a_seats_session_key(study, alice, staff):
    participant = get_ready(alice, study, OWN)
    alice.post(page(participant, "play"))
    table_id = current_round(participant).table_id
    key = Seat.objects.get(table_id=table_id, index=0).session_key
    assert key
    pages = [
        reverse("admin:tables_table_change", args=[table_id]),
        reverse("admin:tables_table_changelist"),
        reverse("admin:tables_table_delete", args=[table_id]),
        reverse("admin:tables_turn_changelist"),
    ]
    for url in pages:
        response = staff.get(url)
        assert response.status_code == 200, url
        text = response.content.decode()
        assert key not in text and key[:6] not in text, url
    assert "a participant&#x27;s browser" in staff.get(pages[0]).content.decode()


def test_saving_a_table_in_the_admin_keeps_the_seat_held(study, alice, staff):
    participant = get_ready(alice, study, OWN)
    alice.post(page(participant, "play"))
    table_id = current_round(participant).table_id
    key = Seat.objects.get(table_id=table_id, index=0).session_key
    form = staff.get(reverse("admin:tables_table_change", args=[table_id])).content.decode()
    assert 'name="seats-0-session_key"' not in form
    assert Seat.objects.get(table_id=table_id, index=0).session_key == key


def test_a_user_who_is_not_staff_cannot_open_the_admin(db):
    client = Client()
    client.force_login(User.objects.create_user("mallory", password="pw"))
    assert client.get(reverse("admin:tables_table_changelist")).status_code == 302
