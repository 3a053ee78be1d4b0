"""Reads every frame one human seat receives over whole Undercover games and looks for the other
word or any seat's role before the end (DESIGN core idea 3); once the game is over they are no
secret and the last frame shows them. Staff-only facts (who plays each seat, the words during
play) go to a staff spectator and never to a seat."""

from __future__ import annotations

import asyncio
import html
import json
import re

import pytest
from channels.db import database_sync_to_async

from games import get_engine
from studyapp.tables import services
from studyapp.tables.models import Turn
from tests.studyapp.tables.conftest import make_session, make_staff_session, socket

pytestmark = pytest.mark.django_db(transaction=True)

ENGINE = get_engine("undercover")
AGENT = {"kind": "agent", "agent_spec": "offline:kb"}


@database_sync_to_async
def public_clues(table_id: int) -> list[str]:
    events = Turn.objects.filter(table_id=table_id, event__type="clue").values_list(
        "event", flat=True
    )
    return [e["text"] for e in events if e.get("text")]


async def play_as_human(table_id: int, key: str) -> list[str]:
    """Answer every prompt the board shows (a numbered clue, the first vote target)."""
    communicator = socket(table_id, key)
    assert (await communicator.connect())[0]
    frames: list[str] = []
    clues = 0
    move: dict = {}
    while True:
        frame = await communicator.receive_from(timeout=10)
        if 'role="alert"' in frame:  # faster than the socket's move limit: send it again
            await asyncio.sleep(0.6)
            await communicator.send_to(text_data=json.dumps(move))
            continue
        frames.append(frame)
        if 'data-status="finished"' in frame:
            break
        if 'id="clue-text"' in frame:
            clues += 1
            move = {"type": "clue", "text": f"my thought number {clues} is hidden"}
        elif 'id="cast-vote"' in frame:
            move = {"type": "vote", "target": re.search(r'name="target" value="(\d+)"', frame)[1]}
        else:
            continue
        await communicator.send_to(text_data=json.dumps(move))
    await communicator.disconnect()
    return frames


@pytest.mark.parametrize("as_difference", [False, True])
async def test_a_seat_never_receives_another_word_or_role(as_difference: bool) -> None:
    config = ENGINE.new_config(seed=11)
    human = config["difference_seat"] if as_difference else (config["difference_seat"] + 1) % 5
    key = await make_session()
    seats = [AGENT] * 5
    seats[human] = {"kind": "human", "session_key": key}
    table = await database_sync_to_async(services.create_table)(
        "undercover", config, seats, agent_delay_seconds=0
    )
    frames = await play_as_human(table.pk, key)

    mine = ENGINE.word(config, human)
    other = config["normal_word"] if as_difference else config["difference_word"]
    spoken = [html.escape(text) for text in await public_clues(table.pk)]
    assert len(frames) > 10
    assert all("difference_seat" not in frame for frame in frames)
    for frame in frames[:-1]:
        private = frame
        for text in spoken:  # what players said aloud is public; judge only what the server adds
            private = private.replace(text, "")
        assert mine in frame
        assert not re.search(rf"\b{re.escape(other)}\b", private, re.IGNORECASE)
        assert "difference_seat" not in frame
    assert all('id="result"' not in frame for frame in frames[:-1])
    expected = (
        "the player with the different word" if as_difference else "a player with the common word"
    )
    assert expected in frames[-1]
    assert mine in frames[-1] and other in frames[-1]  # revealed after the game


async def test_staff_only_facts_reach_a_staff_spectator_and_never_a_seat() -> None:
    config = ENGINE.new_config(seed=12)
    human = (config["difference_seat"] + 1) % 5
    key = await make_session()
    seats = [AGENT] * 5
    seats[human] = {"kind": "human", "session_key": key}
    table = await database_sync_to_async(services.create_table)(
        "undercover", config, seats, agent_delay_seconds=0
    )
    staff = socket(table.pk, await make_staff_session())
    assert (await staff.connect())[0]
    watched = await staff.receive_from(timeout=5)
    frames = await play_as_human(table.pk, key)
    await staff.disconnect()

    staff_only = ['id="staff-seats"', "offline:kb", 'id="back-to-tables"']
    assert all(marker in watched for marker in staff_only)
    for seat in range(5):  # every word and role, during play
        role, word = ENGINE.role(config, seat), ENGINE.word(config, seat)
        row = rf"<td>{seat}</td>(?:(?!</tr>).)*<td>{role}</td><td[^>]*>{word}</td>"
        assert re.search(row, watched, re.S)
    assert 'data-status="playing"' in watched
    for frame in frames:
        assert not any(marker in frame for marker in staff_only)
