"""A person who rejoins in a second browser takes their seat there: the first browser's socket,
still open, commits no more moves and is closed with SEAT_TAKEN (4409) and the reason, at its
next move or heartbeat."""

from __future__ import annotations

import json

import pytest
from channels.db import database_sync_to_async

from studyapp.tables import services
from studyapp.tables.consumers import SEAT_TAKEN
from studyapp.tables.models import Seat, Turn
from tests.studyapp.tables.conftest import make_session, socket

pytestmark = pytest.mark.django_db(transaction=True)

ORACLE = {"kind": "agent", "agent_spec": "offline:kb"}
QUESTION = {"type": "question", "text": "Is it a fruit?", "HEADERS": {}}


@database_sync_to_async
def take_seat(table_id: int, session_key: str) -> None:
    """What the participants app does when the same person rejoins in another browser."""
    Seat.objects.filter(table_id=table_id, index=0).update(session_key=session_key)


@database_sync_to_async
def turn_count(table_id: int) -> int:
    return Turn.objects.filter(table_id=table_id).count()


async def _table(key: str):
    seats = [{"kind": "human", "session_key": key}, ORACLE]
    create = database_sync_to_async(services.create_table)
    return await create("twenty-questions", {"answer": "Apple"}, seats, agent_delay_seconds=0)


async def test_the_old_browsers_socket_commits_nothing_once_the_seat_is_taken() -> None:
    first, second = await make_session(), await make_session()
    table = await _table(first)
    old = socket(table.pk, first)
    assert (await old.connect())[0]
    await old.receive_from(timeout=5)
    await take_seat(table.pk, second)
    before = await turn_count(table.pk)
    await old.send_to(text_data=json.dumps(QUESTION))
    said = await old.receive_from(timeout=5)
    assert "another browser" in said
    closed = await old.receive_output(timeout=5)
    assert closed == {"type": "websocket.close", "code": SEAT_TAKEN}
    assert await turn_count(table.pk) == before

    new = socket(table.pk, second)
    assert (await new.connect())[0]
    await new.receive_from(timeout=5)
    await new.send_to(text_data=json.dumps(QUESTION))
    await new.receive_from(timeout=10)
    assert await turn_count(table.pk) > before
    await new.disconnect()


async def test_a_heartbeat_closes_the_old_browsers_socket() -> None:
    first, second = await make_session(), await make_session()
    table = await _table(first)
    old = socket(table.pk, first)
    assert (await old.connect())[0]
    await old.receive_from(timeout=5)
    await take_seat(table.pk, second)
    await old.send_to(text_data=json.dumps({"type": "heartbeat"}))
    assert "another browser" in await old.receive_from(timeout=5)
    assert (await old.receive_output(timeout=5))["code"] == SEAT_TAKEN
