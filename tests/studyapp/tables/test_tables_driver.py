"""Deadlines, lobbies and recovery, run without a server loop: agent turns run inline and timed
checks are called directly with the clock already past them."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from studyapp.tables import driver, lobby, services
from studyapp.tables.models import Seat, Table, Turn

pytestmark = pytest.mark.django_db(transaction=True)

ORACLE = {"kind": "agent", "agent_spec": "offline:kb"}


def overdue_table(session_key: str, dropout: str) -> Table:
    table = services.create_table(
        "twenty-questions",
        {"answer": "Apple", "max_questions": 20},
        [{"kind": "human", "session_key": session_key}, ORACLE],
        dropout=dropout,
        turn_deadline_seconds=30,
    )
    Table.objects.filter(pk=table.pk).update(started_at=timezone.now() - timedelta(seconds=31))
    return table


def test_it_waits_until_the_deadline_has_passed(session_key: str) -> None:
    table = overdue_table(session_key, "replace")
    Table.objects.filter(pk=table.pk).update(started_at=timezone.now())
    assert driver.check_deadline(table.pk, 0) == "early"
    assert not Turn.objects.filter(table=table).exists()


def test_a_missed_deadline_hands_the_seat_to_an_agent_and_logs_the_takeover(
    session_key: str,
) -> None:
    table = overdue_table(session_key, "replace")
    assert driver.check_deadline(table.pk, 0) == "replaced"
    first = Turn.objects.get(table=table, seq=0)
    assert first.event == {"type": "takeover", "seat": 0, "by": "offline:infogain"}
    seat = Seat.objects.get(table=table, index=0)
    assert seat.kind == Seat.Kind.AGENT and seat.session_key == session_key
    table.refresh_from_db()
    assert table.status == Table.Status.FINISHED  # the agent played on to the end


def test_a_missed_deadline_can_skip_the_turn(session_key: str) -> None:
    table = overdue_table(session_key, "skip")
    assert driver.check_deadline(table.pk, 0) == "skipped"
    events = [t.event for t in Turn.objects.filter(table=table).order_by("seq")]
    assert events[0]["type"] == "question" and events[0]["seat"] == 0
    assert Seat.objects.get(table=table, index=0).kind == Seat.Kind.HUMAN


def test_a_missed_deadline_can_end_the_table(session_key: str) -> None:
    table = overdue_table(session_key, "end")
    assert driver.check_deadline(table.pk, 0) == "ended"
    table.refresh_from_db()
    assert table.status == Table.Status.ABORTED
    assert Turn.objects.get(table=table, seq=0).event["type"] == "abort"


def test_a_deadline_check_for_an_old_turn_does_nothing(session_key: str) -> None:
    table = overdue_table(session_key, "end")
    services.submit(table, 0, {"type": "question", "text": "Is it a fruit?"})
    assert driver.check_deadline(table.pk, 0) == "stale"
    assert Table.objects.get(pk=table.pk).status == Table.Status.PLAYING


def test_it_resumes_an_unfinished_table_from_its_log() -> None:
    # A crash left a table where an agent was to move and no task is queued for it.
    table = services.create_table(
        "twenty-questions", {"answer": "Apple"}, [{"kind": "human"}, ORACLE], lobby=True
    )
    Seat.objects.filter(table=table, index=0).update(
        kind=Seat.Kind.AGENT, agent_spec="offline:infogain"
    )
    Table.objects.filter(pk=table.pk).update(status=Table.Status.PLAYING)
    Turn.objects.create(
        table=table, seq=0, seat=0, event={"type": "question", "seat": 0, "text": "Is it a fruit?"}
    )
    assert table.pk in driver.resume_unfinished()
    table.refresh_from_db()
    seqs = list(table.turns.values_list("seq", flat=True))
    assert table.status == Table.Status.FINISHED and seqs == list(range(len(seqs)))


def test_an_undercover_lobby_starts_when_its_humans_have_arrived() -> None:
    first = lobby.join_undercover("session-a", humans=2)
    assert first.table.status == Table.Status.LOBBY
    second = lobby.join_undercover("session-b", humans=2)
    assert second.table_id == first.table_id and second.index != first.index
    assert Table.objects.get(pk=first.table_id).status == Table.Status.PLAYING
    assert lobby.join_undercover("session-a", humans=2).pk == first.pk  # no second seat


def test_at_the_wait_limit_empty_seats_are_filled_by_agents() -> None:
    seat = lobby.join_undercover("session-a", humans=3, wait_seconds=0)
    assert driver.check_lobby(seat.table_id) == "filled"
    kinds = list(Seat.objects.filter(table_id=seat.table_id).values_list("kind", flat=True))
    assert kinds.count("human") == 1 and kinds.count("agent") == 4
    assert Table.objects.get(pk=seat.table_id).status == Table.Status.PLAYING


def test_at_the_wait_limit_humans_can_leave_with_a_paid_exit_code() -> None:
    seat = lobby.join_undercover("session-a", humans=3, wait_seconds=0, lobby_timeout="exit")
    assert driver.check_lobby(seat.table_id) == "released"
    table = Table.objects.get(pk=seat.table_id)
    assert table.status == Table.Status.ABORTED and len(table.exit_code) == 8
