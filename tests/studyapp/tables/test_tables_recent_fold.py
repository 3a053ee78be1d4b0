"""A process judges moves on its last fold of a table, which may be behind the log when another
process moved meanwhile: a move is still judged on the log, never on the stale fold."""

from __future__ import annotations

import pytest

from games.base import IllegalMove
from studyapp.tables import broadcast, services, store
from studyapp.tables.models import Table, Turn
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


def broadcast_of(table_id: int, seq: int) -> dict:
    """The event another process's broadcast of turn ``seq`` carries (:func:`broadcast.followable`),
    as the channel layer hands it over. This process's fold is left as it was."""
    fold = store._recent.get(table_id)
    snap = services.table_state(table_id)  # the committing process's view just after the commit
    if fold is not None:
        store._recent[table_id] = fold
    turn = Turn.objects.get(table_id=table_id, seq=seq)
    snap.events, snap.last_turn = snap.events[: seq + 1], turn
    return broadcast.followable(snap)


def test_a_broadcast_moves_the_fold_on_so_the_next_move_needs_no_rebuild(
    django_assert_max_num_queries: object,
) -> None:
    table_id = two_people()
    another_process_writes(table_id, {"type": "answer", "seat": 1, "answer": "No"})
    event = broadcast_of(table_id, 1)
    assert event == {"type": "answer", "seat": 1, "answer": "No"}
    store.follow(table_id, 2, event)
    assert services.recent_state(table_id).next_seq == 2
    # A move on the followed fold: the INSERT alone, no rebuild (three reads) before it.
    with django_assert_max_num_queries(1):
        services.submit(table_id, 0, {"type": "question", "text": "Is it a tool?"})
    assert logged(table_id) == [(0, "question"), (1, "answer"), (2, "question")]


def test_a_turn_that_changes_more_than_the_log_drops_the_fold() -> None:
    table_id = two_people()
    another_process_writes(table_id, {"type": "takeover", "seat": 1, "by": "offline:kb"})
    assert broadcast_of(table_id, 1) is None  # a takeover changes a seat: never followed
    store.follow(table_id, 2, None)
    assert table_id not in store._recent  # the next move is judged on a rebuild
    assert services.recent_state(table_id).seats[1].kind == "human"  # the log's seats, not stale


def test_a_broadcast_that_skips_a_turn_drops_the_fold() -> None:
    table_id = two_people()
    another_process_writes(
        table_id,
        {"type": "answer", "seat": 1, "answer": "No"},
        {"type": "question", "seat": 0, "text": "Is it a tool?"},
    )
    store.follow(table_id, 3, broadcast_of(table_id, 2))  # seq 2's broadcast came first
    assert table_id not in store._recent
    services.submit(table_id, 1, {"type": "answer", "answer": "Yes"})
    assert logged(table_id)[-1] == (3, "answer")


def test_a_fold_already_at_the_broadcast_seq_is_left_alone() -> None:
    table_id = two_people()  # this process committed seq 0 itself: its fold is at seq 1
    before = services.recent_state(table_id)
    store.follow(table_id, 1, {"type": "question", "seat": 0, "text": "Is it alive?"})
    assert services.recent_state(table_id) is before


def fields(snap: services.TableState) -> tuple:
    return (snap.next_seq, snap.events, snap.state, snap.table.status, [s.pk for s in snap.seats])


def test_an_agent_job_catches_its_fold_up_with_the_turns_since(
    django_assert_max_num_queries: object,
) -> None:
    """A worker's fold is behind by the person's move (committed by daphne): the job reads the
    table's status and the turns since in one query, and ends where a rebuild from the whole log
    ends."""
    table_id = two_people()
    another_process_writes(
        table_id,
        {"type": "answer", "seat": 1, "answer": "No"},
        {"type": "question", "seat": 0, "text": "Is it a tool?"},
    )
    with django_assert_max_num_queries(1):
        snap = services.caught_up(table_id)
    assert fields(snap) == fields(services.table_state(table_id))
    assert snap.waiting_for() == [1]
    with django_assert_max_num_queries(1):
        assert services.caught_up(table_id).next_seq == 3  # nothing new: the fold as it is


def test_a_lost_seq_race_reads_the_turns_since_not_the_whole_table(
    django_assert_max_num_queries: object,
) -> None:
    """The move's INSERT loses its ``seq`` to another process's turn: the fold catches up with
    that turn (one read) and the move commits next, with no rebuild (three reads and a replay)."""
    table_id = two_people()
    another_process_writes(table_id, {"type": "answer", "seat": 1, "answer": "No"})
    with django_assert_max_num_queries(3):  # the lost INSERT, the read, the INSERT
        services.submit(table_id, 0, {"type": "question", "text": "Is it a tool?"})
    assert logged(table_id) == [(0, "question"), (1, "answer"), (2, "question")]


@pytest.mark.parametrize(
    "since",
    [
        {"type": "void", "seat": 1, "reason": "the model failed"},  # a driver event
        {"type": "abort", "seat": None, "reason": "staff"},
    ],
)
def test_an_agent_job_rebuilds_when_a_turn_since_changed_more_than_the_log(since) -> None:
    table_id = two_people()
    another_process_writes(table_id, since)
    if since["type"] == "abort":  # an abort ends the table in the same transaction
        Table.objects.filter(pk=table_id).update(status=Table.Status.ABORTED)
    snap = services.caught_up(table_id)
    rebuilt = services.table_state(table_id)
    assert fields(snap) == fields(rebuilt)
    assert snap.events[-1]["type"] == since["type"]
