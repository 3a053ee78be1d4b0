"""A participant's page for staff: every round's game in order with timings and rewards, the
policy and questionnaire answers, a replay; read-only, and only for staff."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse
from participant_helpers import get_ready, page, win_round

from studyapp.participants.rounds import current_round
from studyapp.tables import services

pytestmark = pytest.mark.django_db


def transcript_url(participant) -> str:
    return reverse("admin:participants_participant_transcript", args=[participant.pk])


def test_staff_read_every_round_in_order_with_rewards_and_answers(study, alice, staff):
    study.questionnaire = [{"id": "hard", "question": "Was it hard?", "kind": "likert"}]
    study.save()
    participant = get_ready(alice, study)
    # Round 1: two questions, then the right guess.
    alice.post(page(participant, "play"))
    round_ = current_round(participant)
    services.submit(round_.table_id, 0, {"type": "question", "text": "Is it <b>alive</b>?"})
    win_round(alice, participant)
    win_round(alice, participant)
    alice.post(page(participant, "policy"), {"policy": "Ask about size first."})
    alice.post(page(participant, "questionnaire"), {"q_hard": ["Agree"]})

    response = staff.get(transcript_url(participant))
    assert response.status_code == 200
    text = response.content.decode()
    first, second = text.index('id="round-1"'), text.index('id="round-2"')
    assert first < second
    assert "asks: Is it &lt;b&gt;alive&lt;/b&gt;?" in text and "<b>alive</b>" not in text
    assert f"asks: Is it a {round_.table.config['answer']}?" in text
    assert "(this participant)" in text and "reward 1.00" in text
    assert "Ask about size first." in text and "Was it hard?" in text and "Agree" in text
    assert 'type="range"' in text  # the replay


def test_the_participant_page_is_read_only_and_never_links_to_the_table_form(study, alice, staff):
    participant = get_ready(alice, study)
    win_round(alice, participant)
    change = reverse("admin:participants_participant_change", args=[participant.pk])
    response = staff.get(change)
    text = response.content.decode()
    assert response.status_code == 200
    assert 'name="_save"' not in text and "<textarea" not in text
    assert "/admin/tables/table/" + str(participant.round_set.get().table_id) not in text
    assert transcript_url(participant) in text
    before = participant.status
    staff.post(change, {"status": "finished", "total_reward": "99"})
    participant.refresh_from_db()
    assert participant.status == before and participant.total_reward == 1.0


def test_only_staff_see_a_transcript(study, alice):
    participant = get_ready(alice, study)
    win_round(alice, participant)
    response = alice.get(transcript_url(participant))
    assert response.status_code == 302 and "/admin/login/" in response["Location"]
    user = Client()
    user.force_login(User.objects.create_user("mallory", password="pw"))
    response = user.get(transcript_url(participant))
    assert response.status_code == 302 and "/admin/login/" in response["Location"]
