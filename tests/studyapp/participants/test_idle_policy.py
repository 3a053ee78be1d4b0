"""A study's idle policy: one missed turn deadline is a missed turn (the person keeps their seat
and their place in the study); only ``missed_turns_limit`` missed in a row, or
``idle_limit_seconds`` without a sign of life, end their part, with the ending recorded as
what it was."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError
from django.test import Client
from django.utils import timezone

from studyapp.participants import studyfile
from studyapp.participants.models import Participant, Study
from studyapp.participants.rounds import current_round
from studyapp.tables import driver, services
from studyapp.tables.models import Seat, Table, Turn
from studyapp.tables.rendering import render_board
from tests.studyapp.participants.participant_helpers import get_ready, page

pytestmark = pytest.mark.django_db(transaction=True)


def seated(client: Client, study: Study) -> tuple[Participant, Table]:
    participant = get_ready(client, study)
    client.post(page(participant, "play"))
    table = Table.objects.get(pk=current_round(participant).table_id)
    # alone with agents a study table has no deadline; here one applies (as between people)
    table.options = {**table.options, "turn_deadline_seconds": 30}
    table.save(update_fields=["options"])
    return participant, table


def let_the_deadline_pass(table: Table) -> str:
    at = timezone.now() - timedelta(seconds=31)
    last = Turn.objects.filter(table=table).order_by("-seq").first()
    if last is None:
        Table.objects.filter(pk=table.pk).update(started_at=at)
    else:
        Turn.objects.filter(pk=last.pk).update(created_at=at)
    return driver.check_deadline(table.pk, services.table_state(table.pk).next_seq)


def test_one_missed_deadline_keeps_the_person_in_the_study(alice: Client, study: Study) -> None:
    assert study.missed_turns_limit == 3  # the default
    participant, table = seated(alice, study)
    assert table.options["missed_turns_limit"] == 3
    assert let_the_deadline_pass(table) == "missed"
    participant.refresh_from_db()
    assert participant.status == Participant.Status.PLAYING
    assert Seat.objects.get(table=table, index=0).kind == Seat.Kind.HUMAN
    board = render_board(services.table_state(table.pk), 0)
    assert "You keep your seat" in board and "an agent takes over your seat" in board
    # they come back and play on: their move is theirs
    services.submit(table.pk, 0, {"type": "question", "text": "Is it alive?"})
    assert Turn.objects.filter(table=table, actor="person").count() == 1


def test_the_limit_of_missed_turns_drops_the_person_with_that_reason(
    alice: Client, study: Study
) -> None:
    participant, table = seated(alice, study)
    assert [let_the_deadline_pass(table) for _ in range(3)] == ["missed", "missed", "dropped"]
    participant.refresh_from_db()
    assert participant.status == Participant.Status.DROPPED
    assert participant.end_reason == "missed 3 turn deadlines in a row"
    assert Seat.objects.get(table=table, index=0).kind == Seat.Kind.AGENT


def test_the_idle_policy_is_validated_and_in_the_study_file(study: Study) -> None:
    study.missed_turns_limit = 21
    study.idle_limit_seconds = 10 * 24 * 3600
    with pytest.raises(ValidationError) as err:
        study.full_clean()
    assert {"missed_turns_limit", "idle_limit_seconds"} <= set(err.value.message_dict)
    study.missed_turns_limit, study.idle_limit_seconds = 0, 900
    study.full_clean()
    study.save()
    data = studyfile.study_dict(study)
    assert data["missed_turns_limit"] == 0 and data["idle_limit_seconds"] == 900
