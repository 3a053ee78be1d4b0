"""Seat order drawn per table and each move credited to its maker (issue 31): people no longer
always sit at seat 0 and speak first, the order is seeded and recorded per seat with its design
slot (table, games.csv, turns.csv, transcript); a design may pin it; after a takeover the
agent's moves are the agent's in the transcript and the exports, and the game's result is not
the person's."""

from __future__ import annotations

import random

import pandas as pd
import pytest
from participant_helpers import page
from test_study_designs import AGENT, PERSON, make_study, play_out, ready

from studyapp.dashboard.records import study_frames
from studyapp.dashboard.records.shaping import games_and_turns
from studyapp.participants import table_study
from studyapp.participants.design import DesignError, normalise
from studyapp.participants.models import Participant
from studyapp.participants.rounds import current_round
from studyapp.participants.transcripts import transcript
from studyapp.tables import driver, services
from studyapp.tables.models import Seat, Turn


def test_each_table_draws_its_seat_order_from_a_recorded_seed(client_factory):
    study = make_study(rounds=1, design={"seats": [PERSON, AGENT, AGENT, AGENT, AGENT]})
    seats_taken = []
    for _ in range(10):
        client = client_factory()
        person = ready(client, study)
        client.post(page(person, "play"))
        round_ = current_round(person)
        table = round_.table
        part = table_study.of(table)
        assert part.seat_order == "drawn" and isinstance(part.seat_order_seed, int)
        slots = list(range(5))
        random.Random(part.seat_order_seed).shuffle(slots)
        assert part.seat_slots == slots  # the recorded seed gives the recorded order
        assert round_.seat == slots.index(0) == table.options["person_seats"][0]
        kinds = [s.kind for s in table.seats.order_by("index")]
        assert kinds == ["human" if slot == 0 else "agent" for slot in slots]
        seats_taken.append(round_.seat)
    assert len(set(seats_taken)) >= 3, seats_taken  # people no longer always sit first


def test_a_design_may_pin_the_seat_order(client_factory):
    design = {"seats": [PERSON, AGENT, AGENT, AGENT, AGENT], "seat_order": "fixed"}
    study = make_study(rounds=1, design=design)
    for _ in range(4):
        client = client_factory()
        person = ready(client, study)
        client.post(page(person, "play"))
        table = current_round(person).table
        assert current_round(person).seat == 0
        assert table_study.of(table).seat_order == "fixed"
        assert table_study.of(table).seat_slots == [0, 1, 2, 3, 4]
        assert table_study.of(table).seat_order_seed is None


def test_a_seat_order_that_cannot_be_kept_is_refused():
    with pytest.raises(DesignError, match="seat_order"):
        normalise("undercover", {"seats": [PERSON] + [AGENT] * 4, "seat_order": "random"})
    with pytest.raises(DesignError, match="roles"):
        normalise("twenty-questions", {"seat_order": "drawn"})
    assert normalise("undercover", {"players": 5})["seat_order"] == "drawn"
    assert normalise("twenty-questions", {})["seat_order"] == "fixed"


def test_the_exports_carry_each_seats_design_slot(client_factory):
    study = make_study(rounds=1, design={"seats": [PERSON, AGENT, AGENT, AGENT, AGENT]})
    client = client_factory()
    person = ready(client, study)
    client.post(page(person, "play"))
    table = current_round(person).table
    play_out(table.pk)
    slots = table_study.of(table).seat_slots
    frames = study_frames(study)
    games, turns = frames["games"], frames["turns"]
    for row in games.itertuples():
        assert row.seat_slot == slots[row.seat]
    mine = games[games["player"] == person.public_id]
    assert list(mine["seat_slot"]) == [0] and list(mine["seat"]) == [slots.index(0)]
    moves = turns[turns["seat"].notna()]
    assert all(r.seat_slot == slots[int(r.seat)] for r in moves.itertuples())
    # the exporting path (chunks of tables, turns read as columns) says the same
    _, streamed = games_and_turns([table.pk], study.slug, {})
    assert list(streamed["seat_slot"]) == list(turns["seat_slot"])
    assert list(streamed["actor_kind"]) == list(turns["actor_kind"])
    lines = transcript(Participant.objects.get(pk=person.pk))[0]
    assert any(f"(design slot 0): {person.public_id}" in label for label in lines.seats)


def take_over_after_one_move(client_factory):
    """A one-person table (fixed order: the person at seat 0 speaks first) whose person gives
    one clue and then leaves the study: the replacement agent plays the seat to the end."""
    design = {"seats": [PERSON, AGENT, AGENT, AGENT, AGENT], "seat_order": "fixed"}
    study = make_study(rounds=1, design=design, dropout="replace")
    client = client_factory()
    person = ready(client, study)
    client.post(page(person, "play"))
    table = current_round(person).table
    services.submit(table.pk, 0, {"type": "clue", "text": "It is something I had for lunch."})
    assert driver.drop_out(table.pk, 0) == "replaced"
    for _ in range(100):
        snap = services.table_state(table.pk)
        if snap.is_over:
            break
        driver.tick(table.pk)
    assert services.table_state(table.pk).is_over
    return study, person, table


def test_after_a_takeover_the_agents_moves_are_credited_to_the_agent(client_factory):
    study, person, table = take_over_after_one_move(client_factory)
    spec = table.seats.get(index=0).agent_spec
    assert table.seats.get(index=0).kind == Seat.Kind.AGENT
    seat0 = list(Turn.objects.filter(table=table, seat=0).order_by("seq"))
    assert seat0[0].actor == "person" and seat0[0].event["type"] == "clue"
    assert seat0[1].event["type"] == "takeover" and seat0[1].actor == ""
    assert len(seat0) > 2 and all(t.actor == spec for t in seat0[2:])

    frames = study_frames(study, include_pilots=True)
    turns = frames["turns"]
    by_seat0 = turns[turns["seat"] == 0].reset_index(drop=True)
    assert by_seat0.loc[0, "player"] == person.public_id
    assert by_seat0.loc[0, "actor_kind"] == "human"
    assert by_seat0.loc[1, "actor_kind"] == "table"
    later = by_seat0.iloc[2:]
    assert set(later["player"]) == {spec} and set(later["actor_kind"]) == {"offline"}
    assert person.public_id not in set(later["player"])

    games = frames["games"]
    row = games[games["player"] == person.public_id].iloc[0]
    assert bool(row["taken_over"]) and row["taken_over_by"] == spec
    assert row["reward"] != row["reward"]  # NaN: the result is the agent's, not the person's
    assert row["win"] is None or str(row["win"]) == "<NA>"

    game = transcript(Participant.objects.get(pk=person.pk))[0]
    mine = [line for line in game.lines if line.who.startswith("seat 0")]
    assert "(this participant)" in mine[0].who and "agent" not in mine[0].who
    assert any(line.who == "table" and "seat 0 changes hands" in line.text for line in game.lines)
    assert all(f"agent {spec} (took over this participant's seat)" in line.who for line in mine[1:])


def test_a_turn_from_before_actors_were_recorded_is_not_called_the_tables(client_factory):
    study, person, table = take_over_after_one_move(client_factory)
    Turn.objects.filter(table=table, seq=0).update(actor="")  # as the migration left old turns
    _, turns = games_and_turns([table.pk], study.slug, {})
    first = turns[turns["seq"] == 0].iloc[0]
    assert first["actor_kind"] is pd.NA or pd.isna(first["actor_kind"])
    assert first["player"] == person.public_id  # the seat's evaluated player, as before
    takeover = turns[turns["type"] == "takeover"].iloc[0]
    assert takeover["actor_kind"] == "table"
