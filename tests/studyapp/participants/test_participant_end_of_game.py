"""The pages say what the data says at the end of a game: the running total includes the game as
soon as it ends (not only after Continue), the done page states the bonus earned, and rounds of
the study are called games ("Game 1 of 2") everywhere a participant reads them."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse
from participant_helpers import get_ready, page, win_round

from studyapp.participants.models import Participant
from studyapp.participants.rounds import current_round
from studyapp.tables import services
from studyapp.tables.rendering import render_board

pytestmark = pytest.mark.django_db


def test_the_running_total_includes_a_game_as_soon_as_it_ends(study, alice):
    participant = get_ready(alice, study)
    alice.post(page(participant, "play"))
    round_ = current_round(participant)
    table_page = reverse("tables:table", args=[round_.table_id])
    assert '<span id="study-total">0.00</span>' in alice.get(table_page).content.decode()

    answer = round_.table.config["answer"]
    services.submit(
        round_.table_id, round_.seat, {"type": "question", "text": f"Is it a {answer}?"}
    )
    participant.refresh_from_db()  # booked when the game ended, before any Continue
    assert participant.rounds_finished == 1 and participant.total_reward == pytest.approx(1.0)

    text = alice.get(table_page).content.decode()
    assert '<span id="study-total">1.00</span>' in text
    assert 'id="study-round">Game 1 of 2<' in text
    # the board the socket pushes at the end carries the new total for the study bar
    pushed = render_board(services.table_state(round_.table_id), round_.seat)
    assert pushed.rstrip().endswith('<span id="study-total">1.00</span>')
    assert pushed.count('id="study-total"') == 1
    # Continue books nothing twice
    alice.get(page(participant, "play"))
    participant.refresh_from_db()
    assert participant.rounds_finished == 1 and participant.total_reward == pytest.approx(1.0)


def test_a_board_before_the_end_or_outside_a_study_carries_no_total(study, alice):
    participant = get_ready(alice, study)
    alice.post(page(participant, "play"))
    round_ = current_round(participant)
    services.submit(round_.table_id, round_.seat, {"type": "question", "text": "Is it red?"})
    assert "study-total" not in render_board(services.table_state(round_.table_id), round_.seat)


def test_the_done_page_states_the_payment_and_the_bonus_earned(study, alice):
    participant = get_ready(alice, study)
    win_round(alice, participant)
    win_round(alice, participant)
    alice.post(page(participant, "policy"), {"policy": "Halve the candidates each time."})
    participant.refresh_from_db()
    assert participant.status == Participant.Status.FINISHED
    text = alice.get(page(participant, "done")).content.decode()
    assert re.search(r'id="payment-amount">10\.00 USD<', text)
    assert re.search(r'id="bonus">2\.00 USD<', text)
    assert "for each point of your total reward of 2.00" in text
    assert "over 2 games" in text


def test_the_done_page_of_a_study_without_a_bonus_names_none(study, alice):
    study.bonus_per_reward = 0
    study.save()
    participant = get_ready(alice, study)
    win_round(alice, participant)
    win_round(alice, participant)
    alice.post(page(participant, "policy"), {"policy": "Halve the candidates each time."})
    text = alice.get(page(participant, "done")).content.decode()
    assert 'id="payment-amount">10.00 USD<' in text and "bonus" not in text


def test_a_participant_reads_games_for_the_rounds_of_the_study(study, alice):
    participant = get_ready(alice, study)
    text = alice.get(page(participant, "play")).content.decode()
    assert "<h1>Game 1 of 2</h1>" in text and "Start game 1" in text
    visible = re.sub(r"<style.*?</style>|<script.*?</script>|<[^>]+>", " ", text, flags=re.S)
    assert not re.search(r"\brounds?\b", visible, re.I), visible
