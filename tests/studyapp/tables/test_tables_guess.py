"""The Guess control of Twenty Questions at a table: the board offers it, the socket and the plain
form post carry it to the engine, a word that is not a candidate is refused with a reason."""

from __future__ import annotations

import json
import re

import pytest
from channels.db import database_sync_to_async
from django.test import Client
from django.urls import reverse

from games.twenty_questions import CANDIDATES
from games.twenty_questions.engine import ENGINE, RULES_VERSION
from studyapp.tables import services
from studyapp.tables.models import Table, Turn
from studyapp.tables.rendering import render_board
from tests.studyapp.tables.conftest import make_session, socket

pytestmark = pytest.mark.django_db(transaction=True)

ORACLE = {"kind": "agent", "agent_spec": "offline:kb"}


def new_table(session_key: str, word: str = "Orange") -> Table:
    seats = [{"kind": "human", "session_key": session_key}, ORACLE]
    config = ENGINE.new_config(0, answer=word)
    return services.create_table("twenty-questions", config, seats, agent_delay_seconds=0)


@database_sync_to_async
def events(table_id: int) -> list[dict]:
    return [turn.event for turn in Turn.objects.filter(table_id=table_id).order_by("seq")]


def test_the_questioners_board_has_a_guess_control_with_every_candidate(session_key) -> None:
    table = new_table(session_key)
    board = render_board(services.table_state(table.pk), 0)
    form = re.search(r'<form[^>]*class="[^"]*guess-form.*?</form>', board, re.S)[0]
    assert 'name="type" value="question"' in form
    assert re.search(r'<input[^>]*name="guess"[^>]*list="candidate-words"', form)
    options = re.findall(r'<option value="([^"]*)">', form)
    assert options == list(CANDIDATES)
    assert 'id="guess"' in form and ">Guess</button>" in form
    assert 'id="question-text"' in board  # beside the free question box
    oracle_board = render_board(services.table_state(table.pk), 1)
    assert "guess-form" not in oracle_board


def test_new_tables_carry_the_rules_version(session_key) -> None:
    table = services.create_table(
        "twenty-questions", None, [{"kind": "human", "session_key": session_key}, ORACLE]
    )
    assert table.config["rules_version"] == RULES_VERSION


async def test_a_guess_over_the_socket_ends_the_game_when_it_is_right() -> None:
    key = await make_session()
    table = await database_sync_to_async(new_table)(key)
    communicator = socket(table.pk, key)
    assert (await communicator.connect())[0]
    await communicator.receive_from(timeout=5)
    await communicator.send_to(text_data=json.dumps({"type": "question", "guess": "Peach"}))
    frame = await communicator.receive_from(timeout=5)
    assert re.search(r"Is the word Peach\?</span> — <strong class=\"answer\">No", frame)
    assert 'id="guess-word"' in frame  # still the questioner's turn: no oracle turn for a guess
    await communicator.send_to(text_data=json.dumps({"type": "question", "guess": "orange"}))
    frame = await communicator.receive_from(timeout=5)
    assert "You found the word" in frame and 'id="questions-used">2 of 20' in frame
    assert await events(table.pk) == [
        {"type": "question", "guess": "Peach", "seat": 0},
        {"type": "question", "guess": "orange", "seat": 0},
    ]
    await communicator.disconnect()


async def test_a_guess_that_is_not_a_candidate_is_refused_with_a_reason() -> None:
    key = await make_session()
    table = await database_sync_to_async(new_table)(key)
    communicator = socket(table.pk, key)
    await communicator.connect()
    await communicator.receive_from(timeout=5)
    await communicator.send_to(text_data=json.dumps({"type": "question", "guess": "Unicorn"}))
    frame = await communicator.receive_from(timeout=5)
    alert = re.search(r'<p class="error" role="alert" id="move-error">(.*?)</p>', frame)[1]
    assert "Unicorn" in alert and "not one of the 157 candidate words" in alert
    assert await events(table.pk) == []
    await communicator.disconnect()


def test_the_guess_form_works_as_a_plain_post_too(session_key) -> None:
    client = Client()
    client.post(reverse("tables:play_twenty_questions"))
    table = Table.objects.get(game="twenty-questions")
    url = reverse("tables:move", args=[table.pk])
    refused = client.post(url, {"type": "question", "guess": "Glass"})
    assert refused.status_code == 400
    assert "&quot;Glass&quot; is not one of the 157 candidate words" in refused.content.decode()
    client.post(url, {"type": "question", "guess": table.config["answer"]})
    table.refresh_from_db()
    assert table.status == Table.Status.FINISHED
    snap = services.table_state(table.pk)
    assert snap.engine.outcome(snap.state)[0]["reward"] == 1.0


@pytest.mark.parametrize("word", ["Bowl", "Peach"])
def test_the_pilot_bot_guesses_with_the_guess_control(session_key, word) -> None:
    from studyapp.participants.pilot_bot import PilotBot

    bot = PilotBot("http://testserver", "s", 1, token="t", answers=[])
    table = new_table(session_key, word)
    while services.table_state(table.pk).table.status == Table.Status.PLAYING:
        move = bot.move(render_board(services.table_state(table.pk), 0))
        assert move is not None and set(move) == {"type", "guess"}
        services.submit(table, 0, move)
    state = services.table_state(table.pk).state
    assert all(turn.by == "engine" and turn.guess for turn in state.turns)
    # Bowl is the 15th word of the list, Peach beyond the 20th.
    assert (state.found_at, len(state.turns)) == ((15, 15) if word == "Bowl" else (None, 20))
