"""Who may open what: each browser reaches only its own participant, tables and pages; staff pages
need staff; a claimed personal link belongs to the browser that claimed it; consent comes first."""

from __future__ import annotations

import pytest
from django.urls import reverse
from participant_helpers import arrive, get_ready, page

from studyapp.participants.models import Invite, Participant, Round
from studyapp.participants.rounds import current_round

pytestmark = pytest.mark.django_db


def test_a_participant_cannot_open_another_participants_pages(study, alice, bob):
    a = get_ready(alice, study)
    arrive(bob, study)
    for step in ("resume", "consent", "instructions", "play", "policy", "done", "withdraw"):
        response = bob.get(page(a, step))
        assert response.status_code == 404, step
        assert b"does not belong to this browser" in response.content


def test_a_participant_cannot_start_or_withdraw_another_participants_rounds(study, alice, bob):
    a = get_ready(alice, study)
    arrive(bob, study)
    assert bob.post(page(a, "play")).status_code == 404
    assert bob.post(page(a, "withdraw"), {"delete_data": "on"}).status_code == 404
    assert not Round.objects.exists()
    assert Participant.objects.filter(pk=a.pk).exists()


def test_a_participant_cannot_open_another_participants_table(study, alice, bob):
    a = get_ready(alice, study)
    alice.post(page(a, "play"))
    table_url = reverse("tables:table", args=[current_round(a).table_id])
    assert alice.get(table_url).status_code == 200
    get_ready(bob, study)
    assert bob.get(table_url).status_code in (403, 404)


def test_a_non_staff_user_cannot_open_the_admin(study, mallory):
    for url in (
        reverse("admin:participants_participant_changelist"),
        reverse("admin:participants_study_change", args=[study.pk]),
        reverse("admin:participants_study_invites", args=[study.pk]),
    ):
        response = mallory.get(url)
        assert response.status_code == 302, url
        assert response["Location"].startswith(reverse("admin:login"))


def test_a_participant_cannot_open_the_admin(study, alice):
    get_ready(alice, study)
    response = alice.get(reverse("admin:participants_participant_changelist"))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("admin:login"))


def test_a_non_staff_user_cannot_open_the_dashboard(mallory):
    response = mallory.get(reverse("dashboard:home"))
    assert response.status_code in (302, 403)
    assert b"Dashboard" not in response.content


def test_a_participant_cannot_open_the_dashboard(study, alice):
    get_ready(alice, study)
    assert alice.get(reverse("dashboard:home")).status_code in (302, 403)


def test_an_invite_link_cannot_be_used_by_someone_else_once_claimed(study, alice, bob):
    invite = Invite.objects.create(study=study)
    url = reverse("participants:invite_link", args=[invite.token])
    alice.post(url)
    invite.refresh_from_db()
    assert invite.claimed
    for method in (bob.get, bob.post):
        response = method(url)
        assert response.status_code == 403
        assert b"already been used in another browser" in response.content
    assert Participant.objects.count() == 1


def test_opening_a_claimed_invite_again_in_the_same_browser_resumes(study, alice):
    invite = Invite.objects.create(study=study)
    url = reverse("participants:invite_link", args=[invite.token])
    alice.post(url)
    participant = Participant.objects.get(invite=invite)
    response = alice.get(url)
    assert response.status_code == 302
    assert response["Location"] == page(participant, "consent")
    alice.post(url)
    assert Participant.objects.count() == 1


def test_an_invite_stays_used_after_staff_delete_its_participant(study, alice, bob):
    from studyapp.participants.rounds import delete_participant

    invite = Invite.objects.create(study=study)
    url = reverse("participants:invite_link", args=[invite.token])
    alice.post(url)
    delete_participant(Participant.objects.get(invite=invite))
    assert not Participant.objects.exists()
    assert bob.post(url).status_code == 403


def test_opening_a_link_claims_nothing(study, alice):
    invite = Invite.objects.create(study=study)
    alice.get(reverse("participants:invite_link", args=[invite.token]))
    alice.get(reverse("participants:study_link", args=[study.slug]) + "?PROLIFIC_PID=abc")
    invite.refresh_from_db()
    assert not invite.claimed
    assert not Participant.objects.exists()


def test_a_crafted_request_without_consent_is_refused(study, alice):
    participant = arrive(alice, study)
    for step, data in (
        ("instructions", {"check_0": "Yes, No or Invalid"}),
        ("play", {}),
        ("policy", {"policy": "ask about size"}),
    ):
        response = alice.post(page(participant, step), data)
        assert response.status_code == 403, step
        assert b"consent form first" in response.content
    participant.refresh_from_db()
    assert participant.status == Participant.Status.VISITED
    assert not participant.practice_passed
    assert not Round.objects.exists()


def test_consent_to_an_older_version_is_refused(study, alice):
    participant = arrive(alice, study)
    response = alice.post(page(participant, "consent"), {"version": "1", "agree": "on"})
    assert b"has changed" in response.content
    participant.refresh_from_db()
    assert participant.consented_at is None


@pytest.mark.parametrize("version", ["2\x00", "2" * 40, ""])
def test_consent_with_a_version_no_page_sent_asks_to_read_again_and_echoes_nothing(
    study, alice, version
):
    """The version is a hidden field: a value our page never sent gets the same visible message
    as an older version, and the form carries the version shown now, not what was posted."""
    participant = arrive(alice, study)
    response = alice.post(page(participant, "consent"), {"version": version, "agree": "on"})
    assert response.status_code == 200
    assert b"has changed" in response.content
    assert b"\x00" not in response.content and b"2" * 40 not in response.content
    assert b'name="version" value="2"' in response.content
    participant.refresh_from_db()
    assert participant.consented_at is None


def test_consent_without_ticking_the_box_is_refused(study, alice):
    participant = arrive(alice, study)
    alice.post(page(participant, "consent"), {"version": "2"})
    participant.refresh_from_db()
    assert participant.consented_at is None
