"""What a person reads when a game ends or goes on without them: an Undercover player voted out is
told so and keeps watching, and a seat an agent took over is never told "You won!"."""

from __future__ import annotations

import pytest

from studyapp.tables import driver, services
from studyapp.tables.models import Seat
from studyapp.tables.rendering import render_board

pytestmark = pytest.mark.django_db(transaction=True)

UNDERCOVER = {
    "players": 5,
    "normal_word": "coffee",
    "difference_word": "tea",
    "difference_seat": 4,
    "max_vote_rounds": 6,
}
PEOPLE = [{"kind": "human", "session_key": f"session-{i}"} for i in range(5)]


def speak_until_the_vote(table) -> None:
    snap = services.table_state(table.pk)
    while snap.engine.observe(snap.state, 0)["phase"] == "speak":
        seat = snap.engine.to_move(snap.state)[0]
        services.submit(table, seat, {"type": "clue", "text": f"thought {snap.next_seq} by {seat}"})
        snap = services.table_state(table.pk)


def vote(table, targets: dict[int, int | None]) -> None:
    for seat, target in targets.items():
        services.submit(table, seat, {"type": "vote", "target": target})


def test_a_player_voted_out_is_told_so_and_keeps_watching_to_the_end() -> None:
    table = services.create_table("undercover", UNDERCOVER, PEOPLE)
    speak_until_the_vote(table)
    vote(table, {0: 1, 1: 0, 2: 0, 3: 0, 4: 0})  # seat 0 (a common word) is out
    board = render_board(services.table_state(table.pk), 0)
    assert 'id="you-are-out"' in board and "voted you out in vote 1" in board
    assert "keep watching" in board
    assert 'id="waiting"' not in board and "move-form" not in board
    assert 'id="you-are-out"' not in render_board(services.table_state(table.pk), 1)

    # the game goes on without seat 0, which still sees the clues and then how it ended
    for seat in (1, 2, 3, 4):
        services.submit(table, seat, {"type": "clue", "text": f"later thought by {seat}"})
    board = render_board(services.table_state(table.pk), 0)
    assert "later thought by 4" in board and 'id="you-are-out"' in board
    vote(table, {1: 4, 2: 4, 3: 4, 4: 1})  # the difference is out: the common word wins
    board = render_board(services.table_state(table.pk), 0)
    assert 'id="you-are-out"' not in board
    assert "You won!" in board and "voted out in vote 1" in board


def test_a_seat_an_agent_took_over_is_not_told_it_won() -> None:
    table = services.create_table("undercover", UNDERCOVER, PEOPLE, dropout="replace")
    speak_until_the_vote(table)
    assert driver.drop_out(table.pk, 0) != "over"  # seat 0 left: an agent plays it on
    assert Seat.objects.get(table=table, index=0).kind == Seat.Kind.AGENT
    for seat, target in {1: 4, 2: 4, 3: 4, 4: 1}.items():
        if not services.table_state(table.pk).is_over:
            services.submit(table, seat, {"type": "vote", "target": target})
    snap = services.table_state(table.pk)
    assert snap.is_over and snap.state.winner == "normal"  # seat 0's common word won
    replaced = render_board(snap, 0)
    assert "You won!" not in replaced and "You lost." not in replaced
    assert 'id="taken-over-result"' in replaced and "does not count for you" in replaced
    assert "You won!" in render_board(snap, 1)  # a person who played on wins as before


def test_a_twenty_questions_seat_taken_over_is_not_told_it_found_the_word() -> None:
    seats = [
        {"kind": "human", "session_key": "session-a"},
        {"kind": "agent", "agent_spec": "offline:kb"},
    ]
    table = services.create_table("twenty-questions", {"answer": "Apple"}, seats, dropout="replace")
    services.submit(table, 0, {"type": "question", "text": "Is it a fruit?"})
    driver.drop_out(table.pk, 0)  # the offline questioner plays the seat to the end
    snap = services.table_state(table.pk)
    assert snap.is_over and snap.engine.observe(snap.state, 0)["found"]
    board = render_board(snap, 0)
    assert "You found the word!" not in board and 'id="taken-over-result"' in board
    assert "The agent's reward" in board
