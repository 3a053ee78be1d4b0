from __future__ import annotations

import pytest
from django.db import IntegrityError

from games.base import IllegalMove
from games.twenty_questions.engine import RULES_VERSION
from studyapp.tables import agent_turns, services, signals, store
from studyapp.tables.models import Table, Turn

pytestmark = pytest.mark.django_db(transaction=True)

AGENTS_TQ = [
    {"kind": "agent", "agent_spec": "offline:infogain"},
    {"kind": "agent", "agent_spec": "offline:kb"},
]


def human_vs_oracle(session_key: str, **options) -> Table:
    seats = [{"kind": "human", "session_key": session_key}, AGENTS_TQ[1]]
    return services.create_table("twenty-questions", {"answer": "Apple"}, seats, **options)


def test_it_plays_an_agent_only_table_to_the_end() -> None:
    table = services.create_table("twenty-questions", None, AGENTS_TQ, seed=5)
    table.refresh_from_db()
    seqs = list(table.turns.values_list("seq", flat=True))
    assert table.status == Table.Status.FINISHED
    assert seqs == list(range(len(seqs))) and seqs


def test_table_state_is_the_replay_of_the_turns(session_key: str) -> None:
    table = human_vs_oracle(session_key)
    services.submit(table, 0, {"type": "question", "text": "Is it a fruit?"})
    snap = services.table_state(table.pk)
    events = [t.event for t in Turn.objects.filter(table=table).order_by("seq")]
    replayed = snap.engine.replay(table.config, events)
    assert snap.engine.state_to_json(snap.state) == snap.engine.state_to_json(replayed)
    assert [e["type"] for e in events] == ["question", "answer"]


def test_it_refuses_a_move_out_of_turn_and_changes_nothing(session_key: str) -> None:
    table = services.create_table(
        "undercover",
        None,
        [{"kind": "agent", "agent_spec": "offline:kb"}] * 4
        + [{"kind": "human", "session_key": session_key}],
        seed=1,
        agent_delay_seconds=0,
    )
    # With no server loop the agents ahead of seat 4 move at once; then it is seat 4's turn.
    before = Turn.objects.filter(table=table).count()
    with pytest.raises(IllegalMove, match="clue"):
        services.submit(table, 4, {"type": "vote", "target": 1})
    assert Turn.objects.filter(table=table).count() == before


def test_it_gives_the_engine_reason_for_a_clue_that_says_the_word(session_key: str) -> None:
    seats = [{"kind": "human", "session_key": session_key}] + [
        {"kind": "agent", "agent_spec": "offline:kb"}
    ] * 4
    table = services.create_table("undercover", None, seats, seed=2)
    word = services.table_state(table).engine.word(table.config, 0)
    with pytest.raises(IllegalMove) as err:
        services.submit(table, 0, {"type": "clue", "text": f"It is a {word}."})
    assert err.value.reason
    assert Turn.objects.filter(table=table).count() == 0


def test_it_drops_keys_a_browser_should_not_send(session_key: str) -> None:
    table = human_vs_oracle(session_key)
    turn = services.submit(
        table, 0, {"type": "question", "text": "Is it red?", "seat": 1, "HEADERS": {}}
    )
    assert turn.event == {"type": "question", "text": "Is it red?", "seat": 0}


def test_a_client_cannot_send_engine_only_events(session_key: str) -> None:
    table = human_vs_oracle(session_key)
    with pytest.raises(IllegalMove):
        services.submit(table, 0, {"type": "abort", "reason": "bored"})
    assert not Turn.objects.filter(table=table).exists()


def test_a_stale_writer_loses_the_seq_race(session_key: str) -> None:
    table = human_vs_oracle(session_key, turn_deadline_seconds=0)
    stale = services.table_state(table.pk)
    services.submit(table, 0, {"type": "question", "text": "Is it an animal?"})
    event = {"type": "question", "seat": 0, "text": "Is it blue?"}
    with pytest.raises(IntegrityError):
        store.commit(stale, event, stale.engine.apply(stale.state, event))
    assert Turn.objects.filter(table=table, seq=0).count() == 1


def test_a_duplicate_agent_turn_delivery_is_harmless(session_key: str) -> None:
    table = human_vs_oracle(session_key)
    Turn.objects.create(
        table=table, seq=0, seat=0, event={"type": "question", "seat": 0, "text": "Is it round?"}
    )
    assert agent_turns.take_agent_turn(table.pk, 1) == "moved"
    assert agent_turns.take_agent_turn(table.pk, 1) == "stale"
    assert list(table.turns.values_list("seq", flat=True)) == [0, 1]


def test_a_failing_game_over_receiver_costs_the_move_nothing(session_key: str, caplog) -> None:
    """A receiver of game_over that raises (a study's booking failing) is logged; the last move
    is committed, answered with the finished table, and nothing else is lost."""

    def broken(**_: object) -> None:
        raise RuntimeError("booking failed")

    signals.game_over.connect(broken, dispatch_uid="test.broken")
    try:
        seats = [{"kind": "human", "session_key": session_key}, AGENTS_TQ[1]]
        config = {"answer": "Apple", "rules_version": RULES_VERSION}
        table = services.create_table("twenty-questions", config, seats)
        turn = services.submit(table.pk, 0, {"type": "question", "guess": "Apple"})
    finally:
        signals.game_over.disconnect(dispatch_uid="test.broken")
    assert turn.seq == 0
    assert Table.objects.get(pk=table.pk).status == Table.Status.FINISHED
    assert "booking failed" in caplog.text and "broken" in caplog.text
