"""What one socket (or one browser) can impose: frames over the socket's frame limit are dropped
unread, refused moves and junk are answered without a board rendered or the database read, the
sockets one seat or one session may hold in a process are capped, and the plain-HTTP move path
has a limit of its own."""

from __future__ import annotations

import logging

import pytest
from channels.db import database_sync_to_async
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from studyapp.tables import consumers, services, socket_limits
from studyapp.tables.models import Seat, Turn
from tests.ratelimits import at_window_start
from tests.studyapp.tables.conftest import make_session, socket

pytestmark = pytest.mark.django_db(transaction=True)

ORACLE = {"kind": "agent", "agent_spec": "offline:kb"}


async def _table(key: str):
    seats = [{"kind": "human", "session_key": key}, ORACLE]
    create = database_sync_to_async(services.create_table)
    return await create("twenty-questions", {"answer": "Apple"}, seats, agent_delay_seconds=0)


async def _drain(communicator) -> list[str]:
    frames = []
    while not await communicator.receive_nothing(timeout=0.3):
        frames.append(await communicator.receive_from(timeout=5))
    return frames


async def test_a_flood_of_frames_is_dropped_unread_past_the_frame_limit(caplog) -> None:
    key = await make_session()
    table = await _table(key)
    communicator = socket(table.pk, key)
    assert (await communicator.connect())[0]
    await communicator.receive_from(timeout=5)
    with caplog.at_level(logging.WARNING, logger="studyapp.tables.consumers"):
        for n in range(300):
            await communicator.send_to(text_data=f"junk {n}")
        frames = await _drain(communicator)
    # Each junk frame within the limit gets a one-line reason (no board); the rest get nothing.
    assert socket_limits.FRAME_BURST <= len(frames) <= socket_limits.FRAME_BURST + 10
    assert all('role="alert"' in f and 'id="board"' not in f for f in frames)
    assert "over its frame limit" in caplog.text
    await communicator.disconnect()


async def test_refused_moves_are_answered_without_reading_the_table() -> None:
    key = await make_session()
    table = await _table(key)
    communicator = socket(table.pk, key)
    assert (await communicator.connect())[0]
    await communicator.receive_from(timeout=5)
    for n in range(socket_limits.MOVE_BURST + 8):
        await communicator.send_json_to({"type": "question", "text": f"Is it alive? {n}"})
    frames = await _drain(communicator)
    refusals = [f for f in frames if str(socket_limits.TOO_FAST) in f]
    assert len(refusals) >= 4
    assert all('id="board"' not in f and len(f) < 300 for f in refusals)
    await communicator.disconnect()


async def test_one_seat_may_hold_only_so_many_sockets_in_a_process(settings) -> None:
    key = await make_session()
    table = await _table(key)
    held = []
    for _ in range(settings.SOCKETS_PER_SEAT):
        communicator = socket(table.pk, key)
        assert (await communicator.connect())[0]
        await communicator.receive_from(timeout=5)
        held.append(communicator)
    extra = socket(table.pk, key)
    connected, code = await extra.connect()
    assert not connected and code == consumers.TOO_MANY_SOCKETS
    await held[0].disconnect()
    again = socket(table.pk, key)
    assert (await again.connect())[0]  # a closed socket's place is free again
    for communicator in [*held[1:], again]:
        await communicator.disconnect()
    assert ("session", key) not in socket_limits.OPEN_SOCKETS  # all four closed: none counted


@pytest.mark.django_db
def test_the_http_move_path_refuses_a_flood_before_any_game_work(settings) -> None:
    from django.core.cache import cache

    cache.clear()
    browser = Client()
    browser.get("/")
    browser.session.save()
    key = browser.session.session_key
    table = services.create_table(
        "twenty-questions", {"answer": "Apple"}, [{"kind": "human", "session_key": key}, ORACLE]
    )
    allowance = settings.SOCKET_MOVE_BURST + int(10 * settings.SOCKET_MOVES_PER_SECOND)
    at_window_start()  # every request of the flood in one of the limit's windows
    statuses = []
    for n in range(allowance + 5):
        with CaptureQueriesContext(connection) as queries:
            answer = browser.post(
                f"/tables/{table.pk}/move/", {"type": "question", "text": f"Q {n}?"}
            )
        statuses.append((answer.status_code, len(queries)))
    refused = [q for status, q in statuses if status == 429]
    assert len(refused) == 5
    assert all(q <= 4 for q in refused)  # the session, the table, the seat: no game read
    assert Seat.objects.filter(table=table).count() == 2
    assert Turn.objects.filter(table=table, event__type="question").count() <= allowance
