"""Telling a table's sockets: one channel-layer send per committed turn, carrying each listened-to
seat's own rendered view."""

from __future__ import annotations

import logging

from channels.layers import get_channel_layer

from games.base import Event
from studyapp.background import call_async
from studyapp.tables.models import Seat, Table
from studyapp.tables.rendering import render_board
from studyapp.tables.store import DRIVER_EVENTS, TableState

log = logging.getLogger(__name__)


def table_group(table_id: int) -> str:
    """Every socket at a table (seats and spectators): one channel-layer send per move."""
    return f"table-{table_id}"


def broadcast(snap: TableState) -> None:
    """Tell every socket at the table, in one channel-layer send: the message carries each
    listened-to seat's own rendered view, and each socket passes on only its seat's (the views
    stay inside the server; a browser never gets the full state or another seat's view).
    Spectators are rare: they get no view and re-render for themselves.

    It never raises: a publish that meets a broken Redis connection is sent again on a new one
    (the pool's retry, ``settings.redis_resilience``), and one that still fails is logged and
    left to the sockets' catch-up (:func:`table_version`)."""
    layer = get_channel_layer()
    if layer is None:
        return
    boards = [
        render_board(snap, seat.index)
        # nobody listens to an agent's seat, unless it took over from a person
        if seat.kind == Seat.Kind.HUMAN or seat.session_key or seat.user_id
        else None
        for seat in snap.seats
    ]
    message = {
        "type": "table.update",
        "seq": snap.next_seq,
        "status": snap.table.status,
        "boards": boards,
        "event": followable(snap),
    }
    try:
        call_async(layer.group_send, table_group(snap.table.pk), message)
    except Exception as err:  # Redis down even after the client's retries (settings.py)
        # The turn is committed and the next step must still be scheduled: a broadcast
        # that cannot be sent is not an error of the move. Every socket compares the seq it
        # showed with the log's on its next heartbeat and sends its board then (consumers).
        log.warning(
            "table %s: the board at seq %s was not broadcast (%s: %s); sockets catch up on "
            "their next heartbeat",
            snap.table.pk,
            snap.next_seq,
            type(err).__name__,
            err,
        )


def followable(snap: TableState) -> Event | None:
    """The move just committed, when other processes may move their folds on by it (see
    :func:`follow`): a plain move at a table still being played. Events stay inside the server
    (the channel layer); sockets only pass on their seat's board."""
    if snap.last_turn is None or not snap.events or snap.next_seq != snap.last_turn.seq + 1:
        return None
    event = snap.events[-1]
    if event.get("type") in DRIVER_EVENTS or snap.table.status != Table.Status.PLAYING:
        return None
    return None if snap.is_over else event
