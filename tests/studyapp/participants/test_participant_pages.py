"""What the participant pages say and how their forms behave: the welcome page's time and pay,
the consent form's errors, the policy question's label, limit and way out, and the name of the code
someone is given at the end."""

from __future__ import annotations

import re
from decimal import Decimal

import pytest
from django.urls import reverse
from participant_helpers import arrive, get_ready, page, win_round

from studyapp.participants.models import POLICY_MAX_LENGTH, Invite, duration_text

pytestmark = pytest.mark.django_db


def welcome(client, study) -> str:
    return client.get(reverse("participants:study_link", args=[study.slug])).content.decode()


@pytest.mark.parametrize(
    ("minutes", "text"),
    [
        (1, "about 1 minute"),
        (11, "about 11 minutes"),
        (60, "about 1 hour"),
        (65, "about 1 hour 5 minutes"),
        (150, "about 2 hours 30 minutes"),
    ],
)
def test_a_duration_reads_in_words(minutes, text):
    assert duration_text(minutes) == text


def test_the_welcome_page_estimates_the_time_from_the_rounds(study, alice):
    page = " ".join(welcome(alice, study).split())
    assert 'It takes <span id="duration">about 11 minutes</span>' in page
    study.rounds = 20
    study.save()
    assert "about 1 hour 5 minutes" in welcome(alice, study)
    assert "one to two hours" not in welcome(alice, study)


def test_the_welcome_page_shows_the_time_staff_set(study, alice):
    study.estimated_minutes = 40
    study.save()
    assert "about 40 minutes" in welcome(alice, study)


def test_the_welcome_page_shows_the_payment_and_the_bonus(study, alice):
    text = welcome(alice, study)
    assert "You are paid 10.00 USD for taking part" in text
    assert "bonus of 1.00 USD for each point of reward" in text
    study.bonus_per_reward = Decimal("0")
    study.payment_amount = Decimal("7.50")
    study.currency = "GBP"
    study.save()
    text = welcome(alice, study)
    assert "You are paid 7.50 GBP for taking part" in text
    assert "bonus" not in text


def test_the_consent_checkbox_sits_beside_its_label_and_declining_is_secondary(study, alice):
    participant = arrive(alice, study)
    text = alice.get(page(participant, "consent")).content.decode()
    assert re.search(
        r'<p class="check"><input type="checkbox"[^>]*id="id_agree"[^>]*> <label', text
    )
    assert re.search(r'<button[^>]*id="decline"[^>]*class="secondary"', text)


def test_consent_without_the_box_shows_a_red_alert(study, alice):
    participant = arrive(alice, study)
    text = alice.post(page(participant, "consent"), {"version": "2"}).content.decode()
    assert '<p class="error" role="alert">Please tick the box to agree' in text


def policy_page(client, study):
    participant = get_ready(client, study)
    win_round(client, participant)
    win_round(client, participant)
    return participant, client.get(page(participant, "policy")).content.decode()


def test_the_policy_question_labels_its_textarea_and_shows_the_limit(study, alice):
    participant, text = policy_page(alice, study)
    assert '<label for="id_policy">What strategy would you give a newcomer?</label>' in text
    assert f"Up to {POLICY_MAX_LENGTH} characters" in text
    assert 'id="policy-count">0 of 4000 characters' in text
    assert 'aria-describedby="policy-limit policy-count"' in text
    assert "maxlength" not in text  # the browser must not cut a long answer silently
    assert f'href="{page(participant, "withdraw")}"' in text


def test_an_over_long_policy_is_refused_with_a_red_alert_and_kept_for_editing(study, alice):
    participant, _ = policy_page(alice, study)
    answer = "x" * (POLICY_MAX_LENGTH + 1)
    text = alice.post(page(participant, "policy"), {"policy": answer}).content.decode()
    assert '<p class="error" role="alert">Ensure this value has at most 4000 characters' in text
    assert answer in text


def test_the_code_after_stopping_is_not_called_a_completion_code(study, alice):
    invite = Invite.objects.create(study=study)
    url = reverse("participants:invite_link", args=[invite.token])
    alice.post(url)
    participant = invite.participant
    alice.post(page(participant, "consent"), {"version": "2", "agree": "on"})
    alice.post(page(participant, "withdraw"), {})
    text = alice.get(url, follow=True).content.decode()
    assert "Your code for the time you gave: <code" in text
    assert "DROP456" in text
    assert "completion code" not in text


def test_declining_hands_out_no_code_and_asks_to_return_the_study(study, alice):
    participant = arrive(alice, study)
    response = alice.post(page(participant, "consent"), {"decline": "1"}, follow=True)
    assert b"SCR789" not in response.content
    assert b'id="completion-code"' not in response.content
    assert b"return the study" in response.content
