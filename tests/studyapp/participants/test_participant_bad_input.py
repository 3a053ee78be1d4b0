"""Bad input gets a clear message and is refused or stored escaped, never executed: over-long text,
HTML and script in policies and answers, malformed recruiter IDs, unknown studies and links."""

from __future__ import annotations

import pytest
from django.urls import reverse
from participant_helpers import arrive, get_ready, page, win_round

from studyapp.participants.models import POLICY_MAX_LENGTH, Participant
from studyapp.participants.rounds import current_round
from studyapp.tables.models import Turn

pytestmark = pytest.mark.django_db

SCRIPT = '<script>alert("x")</script><img src=x onerror=alert(1)>'


def finish_rounds(client, study):
    participant = get_ready(client, study)
    win_round(client, participant)
    win_round(client, participant)
    return participant


def test_an_unknown_study_gets_a_clear_404(db, alice):
    response = alice.get(reverse("participants:study_link", args=["no-such-study"]))
    assert response.status_code == 404
    assert b"no open study at this address" in response.content


def test_an_inactive_study_accepts_nobody_new(study, alice):
    study.active = False
    study.save()
    response = alice.post(reverse("participants:study_link", args=[study.slug]))
    assert response.status_code == 404
    assert not Participant.objects.exists()


def test_an_unknown_invite_token_gets_a_clear_404(db, alice):
    response = alice.post(reverse("participants:invite_link", args=["made-up-token"]))
    assert response.status_code == 404
    assert b"invitation link is not valid" in response.content


def test_a_malformed_recruiter_id_is_refused_with_a_message(study, alice):
    url = reverse("participants:study_link", args=[study.slug])
    query = "?PROLIFIC_PID=%3Cscript%3Ealert(1)%3C/script%3E"
    response = alice.get(url + query)
    assert response.status_code == 400
    assert b"PROLIFIC_PID is not a valid identifier" in response.content
    assert b"<script>alert(1)" not in response.content
    assert alice.post(url + query).status_code == 400
    assert not Participant.objects.exists()


def test_an_over_long_recruiter_id_is_refused(study, alice):
    url = reverse("participants:study_link", args=[study.slug]) + "?pid=" + "a" * 65
    assert alice.post(url).status_code == 400
    assert not Participant.objects.exists()


def test_an_over_long_policy_is_refused_with_a_message(study, alice):
    participant = finish_rounds(alice, study)
    response = alice.post(page(participant, "policy"), {"policy": "x" * (POLICY_MAX_LENGTH + 1)})
    assert response.status_code == 200
    assert b"Ensure this value has at most" in response.content
    participant.refresh_from_db()
    assert participant.policy == ""
    assert participant.status != Participant.Status.FINISHED


def test_a_policy_that_would_show_other_readers_something_else_is_refused(study, alice):
    """The advice is shown to staff and to later participants: a right-to-left override would
    show it reversed. Long advice in other scripts is taken as typed."""
    participant = finish_rounds(alice, study)
    response = alice.post(page(participant, "policy"), {"policy": "Ask \u202eevila\u202c first"})
    assert b"formatting character (U+202E)" in response.content
    participant.refresh_from_db()
    assert participant.policy == ""
    advice = "Demandez d’abord si c’est vivant, puis sa taille. " * 40  # over 1,000 characters
    alice.post(page(participant, "policy"), {"policy": advice})
    participant.refresh_from_db()
    assert participant.policy == advice.strip()


def test_html_in_a_policy_is_stored_as_typed_and_shown_escaped_in_the_admin(study, alice, staff):
    participant = finish_rounds(alice, study)
    alice.post(page(participant, "policy"), {"policy": SCRIPT})
    participant.refresh_from_db()
    assert participant.policy == SCRIPT
    response = staff.get(reverse("admin:participants_participant_change", args=[participant.pk]))
    assert response.status_code == 200
    assert b"<script>alert" not in response.content
    assert b"&lt;script&gt;alert" in response.content


def test_html_in_a_question_is_stored_as_text_and_rendered_escaped(study, alice):
    participant = get_ready(alice, study)
    alice.post(page(participant, "play"))
    table_id = current_round(participant).table_id
    from studyapp.tables import services

    services.submit(table_id, 0, {"type": "question", "text": SCRIPT})
    assert Turn.objects.filter(table_id=table_id, event__text=SCRIPT).exists()
    response = alice.get(reverse("tables:table", args=[table_id]))
    assert SCRIPT.encode() not in response.content
    assert b"&lt;script&gt;" in response.content


def test_html_in_consent_text_written_by_staff_is_escaped_for_participants(study, alice):
    study.consent_text = SCRIPT
    study.save()
    participant = arrive(alice, study)
    response = alice.get(page(participant, "consent"))
    assert response.status_code == 200
    assert b"<script>alert" not in response.content
    assert b"&lt;script&gt;alert" in response.content


def test_head_on_a_link_answers_like_get_and_creates_nothing(study, alice):
    """Link checkers and recruiters' previews send HEAD: they get GET's status, and, like a GET,
    start nobody; a method no page takes gets 405."""
    link = reverse("participants:study_link", args=[study.slug])
    back = reverse("participants:recruiter_return", args=[study.slug])
    for url in (link, link + "?PROLIFIC_PID=" + "a" * 24, back + "?cc=X"):
        assert alice.head(url).status_code == alice.get(url).status_code == 200
    assert alice.head(link + "?PROLIFIC_PID=%3C").status_code == 400
    assert alice.put(link).status_code == 405
    assert not Participant.objects.exists()
