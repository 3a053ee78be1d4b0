"""The table socket on the real ASGI stack (origin check, sessions, auth) and a transactional
database; agent turns run on the test's event loop as they would under daphne."""

from __future__ import annotations

import asyncio
import json
import logging
import re

import pytest
from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from channels.testing import WebsocketCommunicator

from studyapp.asgi import application
from studyapp.tables import broadcast, services
from studyapp.tables.consumers import NOT_FOUND, TOO_LARGE
from studyapp.tables.models import Seat, Turn
from studyapp.tables.socket_limits import MAX_FRAME_BYTES
from tests.studyapp.tables.conftest import make_session, make_staff_session, socket

pytestmark = pytest.mark.django_db(transaction=True)

ORACLE = {"kind": "agent", "agent_spec": "offline:kb"}
create_table = database_sync_to_async(services.create_table)


@database_sync_to_async
def turn_count(table_id: int) -> int:
    return Turn.objects.filter(table_id=table_id).count()


async def tq_table(session_key: str):
    seats = [{"kind": "human", "session_key": session_key}, ORACLE]
    return await create_table("twenty-questions", {"answer": "Apple"}, seats, agent_delay_seconds=0)


async def test_it_refuses_a_socket_without_a_seat() -> None:
    owner, stranger = await make_session(), await make_session()
    table = await tq_table(owner)
    for key in (stranger, None):
        communicator = socket(table.pk, key)
        connected, _ = await communicator.connect()
        assert not connected
    communicator = socket(table.pk + 1000, owner)
    assert not (await communicator.connect())[0]


async def test_it_sends_the_seat_its_current_board_on_connect() -> None:
    key = await make_session()
    table = await tq_table(key)
    communicator = socket(table.pk, key)
    assert (await communicator.connect())[0]
    frame = await communicator.receive_from(timeout=5)
    assert 'id="board"' in frame and 'id="question-text"' in frame
    assert "secret-word" not in frame  # only the oracle is shown the answer
    await communicator.disconnect()


async def test_a_move_is_committed_then_broadcast_and_the_oracle_answers() -> None:
    key = await make_session()
    table = await tq_table(key)
    communicator = socket(table.pk, key)
    await communicator.connect()
    await communicator.receive_from(timeout=5)
    await communicator.send_to(
        text_data=json.dumps({"type": "question", "text": "Is it a fruit?", "HEADERS": {}})
    )
    frames = [await communicator.receive_from(timeout=5) for _ in range(2)]
    assert "Waiting for the oracle" in frames[0]
    assert re.search(r'id="pending-question"><span class="question">Is it a fruit\?', frames[0])
    assert "No questions yet" not in frames[0]
    assert re.search(r"Is it a fruit\?</span> — <strong class=\"answer\">Yes", frames[1])
    assert await turn_count(table.pk) == 2
    await communicator.disconnect()


async def test_an_illegal_move_shows_the_reason_and_changes_nothing() -> None:
    key = await make_session()
    table = await tq_table(key)
    communicator = socket(table.pk, key)
    await communicator.connect()
    await communicator.receive_from(timeout=5)
    await communicator.send_to(text_data=json.dumps({"type": "question", "text": "   "}))
    frame = await communicator.receive_from(timeout=5)
    assert 'role="alert"' in frame and "empty" in frame
    await communicator.send_to(text_data="not json")
    assert "could not be read" in await communicator.receive_from(timeout=5)
    await communicator.send_to(bytes_data=b"\x00\x01binary")  # no text: the same reason
    assert "could not be read" in await communicator.receive_from(timeout=5)
    assert await turn_count(table.pk) == 0
    await communicator.disconnect()


async def test_staff_can_watch_a_table_without_a_seat() -> None:
    key = await make_session()
    table = await tq_table(key)
    communicator = socket(table.pk, await make_staff_session())
    assert (await communicator.connect())[0]
    frame = await communicator.receive_from(timeout=5)
    assert 'id="spectator"' in frame
    await communicator.send_to(text_data=json.dumps({"type": "question", "text": "Is it red?"}))
    assert await communicator.receive_nothing(timeout=0.2)
    assert await turn_count(table.pk) == 0
    await communicator.disconnect()


async def test_presence_follows_the_socket() -> None:
    key = await make_session()
    table = await tq_table(key)
    seat = database_sync_to_async(lambda: Seat.objects.get(table=table, index=0))
    communicator = socket(table.pk, key)
    await communicator.connect()
    await communicator.receive_from(timeout=5)
    assert (await seat()).connected
    await communicator.disconnect()
    assert not (await seat()).connected and (await seat()).last_seen is not None


async def drop_listeners(group: str) -> None:
    """Take every socket's channel out of ``group``, as a Redis connection cut takes a daphne
    process's subscriptions: the in-memory layer (no REDIS_URL) or Redis pub/sub."""
    layer = get_channel_layer()
    if hasattr(layer, "_get_layer"):  # channels-redis pub/sub: the group's subscribers here
        loop_layer = layer._get_layer()
        channels = loop_layer.groups.get(loop_layer._get_group_channel_name(group), set())
    else:
        channels = layer.groups.get(group, {})
    for channel in list(channels):
        await layer.group_discard(group, channel)


async def test_a_socket_that_missed_broadcasts_catches_up_on_its_next_heartbeat() -> None:
    """The socket's subscription is lost (as a Redis connection cut takes a process's
    subscriptions): the person's question and the oracle's answer are committed and broadcast to
    nobody. The next heartbeat finds the log ahead of the board the page shows and sends it."""
    key = await make_session()
    table = await tq_table(key)
    communicator = socket(table.pk, key)
    await communicator.connect()
    assert 'data-seq="0"' in await communicator.receive_from(timeout=5)
    await drop_listeners(broadcast.table_group(table.pk))  # nobody hears the table now
    await communicator.send_to(text_data=json.dumps({"type": "question", "text": "Is it a fruit?"}))
    for _ in range(100):
        if await turn_count(table.pk) == 2:
            break
        await asyncio.sleep(0.05)
    assert await turn_count(table.pk) == 2
    assert await communicator.receive_nothing(timeout=0.3)  # the broadcasts were lost
    await communicator.send_to(text_data=json.dumps({"type": "heartbeat"}))
    frame = await communicator.receive_from(timeout=5)
    assert 'data-seq="2"' in frame
    assert re.search(r"Is it a fruit\?</span> — <strong class=\"answer\">Yes", frame)
    await communicator.disconnect()


async def test_a_heartbeat_from_an_up_to_date_page_sends_nothing() -> None:
    key = await make_session()
    table = await tq_table(key)
    communicator = socket(table.pk, key)
    await communicator.connect()
    await communicator.receive_from(timeout=5)
    await communicator.send_to(text_data=json.dumps({"type": "heartbeat"}))
    assert await communicator.receive_nothing(timeout=0.5)
    await communicator.disconnect()


@pytest.mark.parametrize("path", ["/ws/nope/", "/ws/tables/abc/", "/ws/tables/1/extra/"])
async def test_a_socket_address_that_names_no_table_is_closed_with_4404(path: str) -> None:
    communicator = WebsocketCommunicator(
        application, path, headers=[(b"origin", b"http://testserver")]
    )
    connected, _ = await communicator.connect()
    assert connected
    assert await communicator.receive_output(timeout=5) == {
        "type": "websocket.close",
        "code": NOT_FOUND,
        "reason": "There is nothing at this address.",
    }


async def test_a_frame_over_the_limit_is_refused_with_the_reason_and_one_log_line(caplog) -> None:
    key = await make_session()
    table = await tq_table(key)
    communicator = socket(table.pk, key)
    await communicator.connect()
    await communicator.receive_from(timeout=5)
    text = "x" * MAX_FRAME_BYTES
    with caplog.at_level(logging.WARNING, logger="studyapp.tables.consumers"):
        await communicator.send_to(text_data=json.dumps({"type": "question", "text": text}))
        notice = await communicator.receive_from(timeout=5)
        closed = await communicator.receive_output(timeout=5)
    assert "too large for the table" in notice and 'id="socket-status"' in notice
    assert closed["type"] == "websocket.close" and closed["code"] == TOO_LARGE
    lines = [r.getMessage() for r in caplog.records if "byte frame" in r.getMessage()]
    assert len(lines) == 1 and not caplog.records[-1].exc_info
    assert await turn_count(table.pk) == 0  # nothing of it was played


async def test_a_frame_at_the_limit_is_still_read() -> None:
    key = await make_session()
    table = await tq_table(key)
    communicator = socket(table.pk, key)
    await communicator.connect()
    await communicator.receive_from(timeout=5)
    frame = json.dumps({"type": "question", "text": "x"})
    await communicator.send_to(text_data=frame + " " * (MAX_FRAME_BYTES - len(frame)))
    reply = await communicator.receive_from(timeout=5)
    assert "data-seq" in reply  # a board (the move judged), not the refusal
    await communicator.disconnect()


async def test_a_push_of_the_frame_just_sent_sends_nothing() -> None:
    """A turn the board does not show (a blinded table's takeover) pushes the same board again:
    the socket sends nothing for it, so no empty frame marks the moment; a new board goes out."""
    key = await make_session()
    table = await tq_table(key)
    communicator = socket(table.pk, key)
    assert (await communicator.connect())[0]
    shown = await communicator.receive_from(timeout=5)
    layer = get_channel_layer()
    group = broadcast.table_group(table.pk)
    update = {"type": "table.update", "status": "playing", "event": None}
    await layer.group_send(group, {**update, "seq": 1, "boards": [shown, None]})
    assert await communicator.receive_nothing(timeout=0.5)
    newer = shown.replace('data-seq="0"', 'data-seq="1"')
    assert newer != shown
    await layer.group_send(group, {**update, "seq": 2, "boards": [newer, None]})
    assert await communicator.receive_from(timeout=5) == newer
    await communicator.disconnect()
