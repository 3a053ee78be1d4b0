"""A process judges moves on its last fold of a table, which may be behind the log when another
process moved meanwhile: a move is still judged on the log, never on the stale fold."""

from __future__ import annotations

import pytest

from games.base import IllegalMove
from studyapp.tables import services
from studyapp.tables.models import Turn
from tests.studyapp.tables.conftest import new_session_key

pytestmark = pytest.mark.django_db(transaction=True)


def two_people() -> int:
    seats = [{"kind": "human", "session_key": new_session_key()} for _ in range(2)]
    table = services.create_table("twenty-questions", {"answer": "Apple"}, seats)
    services.submit(table.pk, 0, {"type": "question", "text": "Is it alive?"})
    return table.pk  # this process's fold: seq 1, the oracle (seat 1) to answer


def another_process_writes(table_id: int, *events: dict) -> None:
    seq = Turn.objects.filter(table_id=table_id).count()
    for event in events:
        Turn.objects.create(table_id=table_id, seq=seq, seat=event["seat"], event=event)
        seq += 1


def logged(table_id: int) -> list[tuple[int, str]]:
    return [(t.seq, t.event["type"]) for t in Turn.objects.filter(table_id=table_id)]


def test_it_accepts_a_move_its_stale_fold_would_turn_away() -> None:
    table_id = two_people()
    another_process_writes(table_id, {"type": "answer", "seat": 1, "answer": "No"})
    services.submit(table_id, 0, {"type": "question", "text": "Is it a tool?"})
    assert logged(table_id) == [(0, "question"), (1, "answer"), (2, "question")]


def test_it_refuses_a_move_its_stale_fold_would_let_in() -> None:
    table_id = two_people()
    another_process_writes(table_id, {"type": "answer", "seat": 1, "answer": "No"})
    with pytest.raises(IllegalMove, match="not your turn"):
        services.submit(table_id, 1, {"type": "answer", "answer": "Yes"})
    assert logged(table_id) == [(0, "question"), (1, "answer")]


def test_a_move_after_the_log_moved_on_takes_the_next_seq() -> None:
    table_id = two_people()
    another_process_writes(
        table_id,
        {"type": "answer", "seat": 1, "answer": "No"},
        {"type": "question", "seat": 0, "text": "Is it a tool?"},
    )
    services.submit(table_id, 1, {"type": "answer", "answer": "Yes"})
    assert logged(table_id)[-1] == (3, "answer")
    assert services.table_state(table_id).state.turns[-1].answer == "Yes"
