"""A missed turn deadline is a missed turn, not a departure (studyapp.tables.driver.miss_turn):
the table passes the turn for the person, who keeps their seat and is told so on the board; only
the table's idle policy (turns missed in a row, the idle limit) takes them out. The due time of a
turn is one (studyapp.tables.dues.deadline_due): the scheduler, the driver and the board's
countdown read it, the site's outages and a seat's cut-off socket included."""

from __future__ import annotations

import re
import time
from datetime import timedelta

import pytest
from django.core.cache import cache
from django.utils import timezone

from studyapp.tables import driver, dues, outages, services, timing
from studyapp.tables.models import SKIP_SPEC, Seat, Table, Turn
from studyapp.tables.rendering import render_board

pytestmark = pytest.mark.django_db(transaction=True)

ORACLE = {"kind": "agent", "agent_spec": "offline:kb"}


@pytest.fixture(autouse=True)
def no_outages_yet():
    cache.delete_many([outages.LAST_SWEEP, outages.OUTAGES])
    yield
    cache.delete_many([outages.LAST_SWEEP, outages.OUTAGES])


def waiting_table(session_key: str, **options: object) -> Table:
    options = {"dropout": "replace", "turn_deadline_seconds": 30, **options}
    table = services.create_table(
        "twenty-questions",
        {"answer": "Apple", "max_questions": 20},
        [{"kind": "human", "session_key": session_key}, ORACLE],
        **options,
    )
    overdue(table, 31)
    return table


def overdue(table: Table, seconds: float) -> None:
    """Move the table's clock back: the turn it waits on began ``seconds`` ago (each earlier
    turn a further ``seconds`` before it)."""
    at = timezone.now()
    for turn in Turn.objects.filter(table=table).order_by("-seq"):
        at -= timedelta(seconds=seconds)
        Turn.objects.filter(pk=turn.pk).update(created_at=at)
    Table.objects.filter(pk=table.pk).update(started_at=at - timedelta(seconds=seconds))


def miss(table: Table) -> str:
    snap = services.table_state(table.pk)
    return driver.check_deadline(table.pk, snap.next_seq)


def test_a_missed_deadline_passes_the_turn_and_the_person_keeps_the_seat(session_key) -> None:
    table = waiting_table(session_key, missed_turns_limit=3)
    assert miss(table) == "missed"
    first = Turn.objects.get(table=table, seq=0)
    assert first.event["missed"] is True and first.event["type"] == "question"
    assert first.actor == SKIP_SPEC and "turn deadline" in first.usage["missed"]
    assert Seat.objects.get(table=table, index=0).kind == Seat.Kind.HUMAN
    snap = services.table_state(table.pk)
    assert snap.waiting_for() == [0]  # the oracle answered the passed question; their turn again
    board = render_board(snap, 0)
    assert 'id="missed-turn"' in board and "You keep your seat" in board
    assert "After 3 missed turns in a row you leave the study" in board
    assert 'id="replaced"' not in board
    # The person's own move ends the run of missed turns.
    services.submit(table.pk, 0, {"type": "question", "text": "Is it alive?"})
    assert timing.missed_in_a_row(services.table_state(table.pk).events, 0) == 0
    assert 'id="missed-turn"' not in render_board(services.table_state(table.pk), 0)


def test_only_the_limit_of_missed_turns_in_a_row_takes_the_person_out(session_key) -> None:
    table = waiting_table(session_key, missed_turns_limit=3)
    assert miss(table) == "missed"
    overdue(table, 31)
    assert miss(table) == "missed"
    assert timing.missed_in_a_row(services.table_state(table.pk).events, 0) == 2
    overdue(table, 31)
    assert miss(table) == "replaced"  # the third in a row: the dropout policy applies
    seat = Seat.objects.get(table=table, index=0)
    assert seat.kind == Seat.Kind.AGENT
    events = [t.event for t in Turn.objects.filter(table=table).order_by("seq")]
    assert sum(bool(e.get("missed")) for e in events) == 2
    assert any(e["type"] == "takeover" for e in events)


def test_a_table_outside_a_study_keeps_its_old_rule(session_key) -> None:
    table = waiting_table(session_key)  # no missed_turns_limit: 1
    assert timing.missed_turns_limit(table.opts) == 1
    assert miss(table) == "replaced"
    assert not any(t.event.get("missed") for t in Turn.objects.filter(table=table))


def test_the_idle_limit_counts_across_missed_turns(session_key) -> None:
    table = waiting_table(session_key, missed_turns_limit=5, idle_limit_seconds=50)
    assert miss(table) == "missed"  # 31 s idle: under the limit
    overdue(table, 31)
    # 62 s since the turn that began the run of missed turns: past the idle limit of 50 s
    assert miss(table) == "replaced"
    assert Seat.objects.get(table=table, index=0).kind == Seat.Kind.AGENT


def test_the_board_the_scheduler_and_the_driver_read_one_due_time(session_key) -> None:
    table = waiting_table(session_key, missed_turns_limit=3)
    overdue(table, 40)
    now = time.time()
    outages.note_sweep(now - 35)
    outages.note_sweep(now - 5)  # 30 s without a sweep: 25 s of outage
    snap = services.table_state(table.pk)
    due = dues.deadline_due(snap)
    assert due == dues.seat_due(snap, 0)
    assert (due - timezone.now()).total_seconds() == pytest.approx(15, abs=1.5)
    board = render_board(snap, 0)
    shown = int(re.search(r'id="turn-deadline".*?data-seconds-left="(\d+)"', board, re.S)[1])
    assert shown == pytest.approx(15, abs=1.5)  # the countdown counts the outage too
    assert driver.check_deadline(table.pk, 0) == "early"


def test_a_seat_the_server_cut_off_is_not_charged_for_it(session_key) -> None:
    table = waiting_table(session_key, missed_turns_limit=3)
    overdue(table, 40)
    now = time.time()
    key = outages.table_key(table.pk, table.created_at)
    outages.seat_cut_off(key, 0, now - 30, now - 5)  # a daphne restart, 25 s
    snap = services.table_state(table.pk)
    assert (dues.seat_due(snap, 0) - timezone.now()).total_seconds() == pytest.approx(15, abs=1.5)
    assert driver.check_deadline(table.pk, 0) == "early"
    # another table's seat is not paused by it
    other = waiting_table(session_key, missed_turns_limit=3)
    assert miss(other) == "missed"
