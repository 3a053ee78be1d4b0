"""People who stop taking part inside a round: their table is not left waiting and their seat is
no longer theirs; several "next round" clicks at once make one table."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from django.db import connection
from django.test import Client
from django.utils import timezone

from games.base import IllegalMove
from studyapp.participants.models import Participant, Round, Study
from studyapp.participants.rounds import current_round, drop_idle_between_rounds, withdraw
from studyapp.tables import agent_turns, driver, services
from studyapp.tables.models import Seat, Table, Turn
from tests.studyapp.participants.participant_helpers import get_ready, page

pytestmark = pytest.mark.django_db(transaction=True)


def start_round(client: Client, participant: Participant) -> Round:
    client.post(page(participant, "play"))
    return current_round(participant)


def test_five_next_round_posts_at_once_make_one_table(alice: Client, study: Study) -> None:
    if connection.vendor == "sqlite":
        pytest.skip("SQLite's in-memory test database locks whole tables between threads")
    participant = get_ready(alice, study)
    cookie = alice.cookies["sessionid"].value
    barrier = threading.Barrier(5)
    codes: list[int] = []

    def post() -> None:
        browser = Client()
        browser.cookies["sessionid"] = cookie
        barrier.wait()
        try:
            codes.append(browser.post(page(participant, "play")).status_code)
        except Exception as err:
            codes.append(repr(err))

    threads = [threading.Thread(target=post) for _ in range(5)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(codes) == [302] * 5
    assert Round.objects.filter(participant=participant).count() == 1


def test_who_withdraws_keeping_their_data_can_no_longer_move(alice: Client, study: Study) -> None:
    participant = get_ready(alice, study)
    round_ = start_round(alice, participant)
    withdraw(participant, delete_data=False)
    # The agent that took the seat may already have played the round out (no server: inline).
    with pytest.raises(IllegalMove, match="no longer yours|The game is over"):
        services.submit(round_.table_id, round_.seat, {"type": "question", "text": "Is it red?"})
    first = Turn.objects.filter(table_id=round_.table_id).order_by("seq").first()
    assert first.event["type"] == "takeover"  # the study's policy: replace
    assert Table.objects.get(pk=round_.table_id).status != Table.Status.PLAYING


@pytest.mark.parametrize("policy", ["replace", "skip", "end"])
def test_a_person_idle_past_the_study_limit_is_dropped_and_the_table_ends(
    alice: Client, study: Study, settings, policy: str
) -> None:
    settings.TABLE_SWEEP_SECONDS = 0
    Study.objects.filter(pk=study.pk).update(
        turn_deadline_seconds=0, idle_limit_seconds=60, dropout=policy
    )
    participant = get_ready(alice, Study.objects.get(pk=study.pk))
    round_ = start_round(alice, participant)
    table = Table.objects.get(pk=round_.table_id)
    assert table.options["idle_limit_seconds"] == 60
    driver.sweep()
    assert Participant.objects.get(pk=participant.pk).status == Participant.Status.PLAYING
    Table.objects.filter(pk=table.pk).update(started_at=timezone.now() - timedelta(seconds=61))
    driver.sweep()
    assert Participant.objects.get(pk=participant.pk).status == Participant.Status.DROPPED
    table.refresh_from_db()
    assert table.status in (Table.Status.FINISHED, Table.Status.ABORTED)
    seat = Seat.objects.get(table=table, index=round_.seat)
    if policy == "skip":
        assert seat.agent_spec == agent_turns.SKIP_SPEC
        events = [t.event for t in Turn.objects.filter(table=table).order_by("seq")]
        assert events[0]["type"] == "takeover" and table.status == Table.Status.FINISHED
    if policy == "end":
        assert table.status == Table.Status.ABORTED


def idle_for(participant: Participant, seconds: float) -> None:
    Participant.objects.filter(pk=participant.pk).update(
        last_seen_at=timezone.now() - timedelta(seconds=seconds)
    )


def test_a_person_who_stops_coming_back_between_rounds_is_dropped(
    alice: Client, study: Study
) -> None:
    Study.objects.filter(pk=study.pk).update(idle_limit_seconds=60)
    participant = get_ready(alice, Study.objects.get(pk=study.pk))  # on the rounds page
    idle_for(participant, 30)
    driver.sweep()
    assert Participant.objects.get(pk=participant.pk).status == Participant.Status.PLAYING
    idle_for(participant, 61)
    assert driver.sweep()["idle person dropped between rounds"] == 1
    participant.refresh_from_db()
    assert participant.status == Participant.Status.DROPPED
    assert participant.completion_code == study.code_dropped


def test_a_person_at_a_table_or_just_back_from_a_long_game_is_not_dropped(
    alice: Client, study: Study
) -> None:
    Study.objects.filter(pk=study.pk).update(idle_limit_seconds=60, turn_deadline_seconds=0)
    participant = get_ready(alice, Study.objects.get(pk=study.pk))
    round_ = start_round(alice, participant)
    idle_for(participant, 600)  # a socket at a table does not touch the participant
    assert drop_idle_between_rounds() == 0  # at a table: the table's own limit applies
    # The game ends (here: the person found the word) after a long round.
    services.submit(round_.table_id, round_.seat, {"type": "question", "guess": study_word(round_)})
    assert Table.objects.get(pk=round_.table_id).status == Table.Status.FINISHED
    assert drop_idle_between_rounds() == 0  # idle counts from the end of their game
    Table.objects.filter(pk=round_.table_id).update(
        finished_at=timezone.now() - timedelta(seconds=61)
    )
    assert drop_idle_between_rounds() == 1  # round 2 of 2 never started
    participant.refresh_from_db()
    round_.refresh_from_db()
    assert round_.finished_at is not None and round_.reward > 0  # their game was booked first
    assert participant.rounds_finished == 1
    assert participant.status == Participant.Status.DROPPED


def study_word(round_: Round) -> str:
    return Table.objects.get(pk=round_.table_id).config["answer"]
