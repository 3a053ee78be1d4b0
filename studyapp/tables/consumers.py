"""The table socket: thin. It checks who may listen, relays moves to the services and pushes the
fragments the services broadcast. Every database call is one small ``database_sync_to_async``
method; no game logic lives here.

Channels closes stale database connections before every message, one trip to a worker thread
each; with a view per seat per move that was about a tenth of the server's CPU under load.
``dispatch`` skips it: every database call here is a ``database_sync_to_async`` method, which
does that itself in the thread that uses the connection."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from typing import Any

from channels.consumer import get_handler_name
from channels.exceptions import StopConsumer
from channels.generic.websocket import AsyncJsonWebsocketConsumer

from games.base import IllegalMove
from studyapp.cache import UNREACHABLE
from studyapp.db import TRANSIENT
from studyapp.retry import DATABASE_PAUSES
from studyapp.tables import driver, outages, services, store
from studyapp.tables.models import Table, Turn
from studyapp.tables.rendering import render_board
from studyapp.tables.socket_db import db_move, db_read
from studyapp.tables.socket_layer import LayerSocket
from studyapp.tables.socket_limits import (
    FRAME_BURST,
    FRAMES_PER_SECOND,
    HEARTBEAT_MIN_SECONDS,
    MAX_FRAME_BYTES,
    MOVE_BURST,
    MOVES_PER_SECOND,
    TOO_FAST,
    TokenBucket,
    count_socket,
    uncount_socket,
)
from studyapp.tables.socket_status import (
    SEAT_TAKEN_MESSAGE,
    TOO_LARGE_MESSAGE,
    UNAVAILABLE_MESSAGE,
    UNREADABLE_MESSAGE,
    alert,
    notice,
    resend_notice,
)

log = logging.getLogger(__name__)

FORBIDDEN = 4403
SEAT_TAKEN = 4409  # the seat is now held by another browser (the same person rejoined there)
NOT_FOUND = 4404  # a socket address that names nothing here
TOO_LARGE = 4413  # a frame over MAX_FRAME_BYTES (as HTTP's 413; daphne takes no 1009 from an app)
TOO_MANY_SOCKETS = 4429  # over SOCKETS_PER_SEAT or SOCKETS_PER_SESSION in this process
# What play and heartbeat answer when the seat is no longer this socket's.
SEAT_GONE = object()
# A frame that is not JSON (or is nested too deeply to read) gets this reason, not a closed socket.
UNREADABLE: dict[str, Any] = {}


class TableConsumer(LayerSocket):
    seat_index: int | None = None
    seat_id: int | None = None
    seen_seq: int = -1  # fragments can overtake each other when moves commit in parallel
    seen_status: str = ""  # the table's status on the board this socket last sent
    last_sent: str | None = None  # the last frame this socket sent (send_board)
    last_heartbeat: float = float("-inf")
    dropped: int = 0
    dropped_logged_at: float = float("-inf")
    counted_as: tuple[tuple[str, Any], ...] = ()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.moves = TokenBucket(MOVE_BURST, MOVES_PER_SECOND)
        self.frames = TokenBucket(FRAME_BURST, FRAMES_PER_SECOND)

    async def dispatch(self, message: dict[str, Any]) -> None:
        """Channels' dispatch without its per-message database clean-up (see the module). A
        database that stays away through the retries does not close the socket with 1011 and a
        traceback: one log line, and the person is told (or, while connecting, the page's socket
        is asked to try again)."""
        handler = getattr(self, get_handler_name(message), None)
        if handler is None:
            raise ValueError(f"No handler for message type {message['type']}")
        try:
            await handler(message)
        except UNREACHABLE as err:
            # Redis out of reach (the channel layer, the cache): the socket stays up and its
            # heartbeats keep the board current from the database until Redis is back.
            log.warning(
                "redis unavailable on table %s socket (%s): %s: %s",
                getattr(self, "table_id", "?"),
                message["type"],
                type(err).__name__,
                err,
            )
            if message["type"] == "websocket.disconnect":
                raise StopConsumer() from None
            if not self.accepted:
                await self.close()
        except TRANSIENT as err:
            first = str(err).strip().splitlines()[0] if str(err).strip() else ""
            log.warning(
                "database unavailable on table %s socket (%s): %s: %s",
                getattr(self, "table_id", "?"),
                message["type"],
                type(err).__name__,
                first,
                extra={"fault_error": err},  # one line per fault (studyapp.logs)
            )
            await asyncio.to_thread(outages.trouble)  # the clocks pause (outages.py)
            if message["type"] == "websocket.disconnect":
                raise StopConsumer() from None  # gone anyway; its next connect marks the seat again
            if not self.accepted:
                # the handshake is refused; the page's socket tries again after a pause
                await self.close()
            else:
                await self.send(text_data=notice(UNAVAILABLE_MESSAGE))

    async def connect(self) -> None:
        self.table_id = int(self.scope["url_route"]["kwargs"]["table_id"])
        if "database_error" in self.scope:  # the session's user could not be loaded
            raise self.scope["database_error"]
        if not await self.claim_place():
            await self.close(code=FORBIDDEN)
            return
        if not self.count_socket():
            log.warning(
                "table %s: too many sockets for one seat or session: refused", self.table_id
            )
            await self.close(code=TOO_MANY_SOCKETS)
            return
        await self.join_group()
        # Whatever was missed while away: the current view (read before the handshake is
        # accepted, so a database that is away refuses it and the page tries again), then
        # anything overdue.
        board = await self.current_board()
        await self.accept()
        await self.send(text_data=board)
        try:
            await self.catch_up()
        except UNREACHABLE as err:  # the sweep or the next heartbeat does it
            log.warning("table %s catch-up skipped, redis unavailable: %s", self.table_id, err)

    def count_socket(self) -> bool:
        """Count this socket against SOCKETS_PER_SEAT and SOCKETS_PER_SESSION (this process's
        open sockets); False, and nothing counted, when one of them is full."""
        session = self.scope.get("session")
        counted = count_socket(self, self.seat_id, session.session_key if session else None)
        if counted is None:
            return False
        self.counted_as = counted
        return True

    def uncount_socket(self) -> None:
        uncount_socket(self, self.counted_as)
        self.counted_as = ()

    async def disconnect(self, code: int) -> None:
        self.uncount_socket()
        if self.group:
            # with Redis away, its membership expires with the layer's group expiry
            with contextlib.suppress(*UNREACHABLE):
                await self.channel_layer.group_discard(self.group, self.channel_name)
        if self.seat_id is not None:
            await self.mark_presence(connected=False)

    async def receive(
        self, text_data: str | None = None, bytes_data: bytes | None = None, **kwargs: Any
    ) -> None:
        """A frame without text (binary, or empty) gets the same reason as text that is not
        JSON; Channels would raise and drop the socket without its close (the seat would stay
        marked connected). A frame over MAX_FRAME_BYTES is refused: the reason, one log line,
        and the socket closed with TOO_LARGE."""
        if not self.may_send_frame():
            return  # dropped unread: no parsing, no database, no rendering
        size = len(text_data.encode()) if text_data else len(bytes_data or b"")
        if size > MAX_FRAME_BYTES:
            log.warning(
                "table %s socket sent a %d-byte frame (at most %d): closed",
                self.table_id,
                size,
                MAX_FRAME_BYTES,
            )
            if self.seat_index is not None:
                await self.send(text_data=notice(TOO_LARGE_MESSAGE))
            await self.close(code=TOO_LARGE, reason=TOO_LARGE_MESSAGE[:120])
            return
        await self.receive_json(await self.decode_json(text_data) if text_data else UNREADABLE)

    @classmethod
    async def decode_json(cls, text_data: str) -> Any:
        try:
            return json.loads(text_data)
        except (ValueError, RecursionError):  # not JSON, or nested past Python's stack
            return UNREADABLE

    async def receive_json(self, content: Any, **kwargs: Any) -> None:
        if self.seat_index is None:
            return  # a spectator: nothing to do
        if not isinstance(content, dict) or not content.get("type"):  # not JSON, or not a move
            await self.send(text_data=alert(str(UNREADABLE_MESSAGE)))  # no database, no render
            return
        if content.get("type") == "heartbeat":
            now = time.monotonic()
            if now - self.last_heartbeat >= HEARTBEAT_MIN_SECONDS:
                self.last_heartbeat = now
                if not self.deaf and not self.group:  # a deaf socket: relisten_until_heard
                    await self.join_group()
                board = await self.heartbeat()
                if board is SEAT_GONE:
                    await self.leave_taken_seat()
                else:
                    await self.send_if_newer(board)
            return
        if not self.may_move():
            await self.send(text_data=alert(str(TOO_FAST)))  # no database, no render
            return
        sent_after = self.seen_seq
        try:
            rejected = await self.play(content)
        except TRANSIENT as err:
            await self.move_failed(sent_after, err)
            return
        if rejected is SEAT_GONE:
            await self.leave_taken_seat()
        elif rejected:
            await self.send(text_data=rejected)

    async def move_failed(self, sent_after: int, err: Exception) -> None:
        """The database failed while the move was being saved: it may or may not have been
        committed. Look (with the reads' retries) whether this seat moved since the board the
        move was made on: if so the board is sent; if not, or if the table cannot be read yet,
        the page is told its move was not saved and sends it again by itself (RESEND_MESSAGE
        carries ``data-resend``; static/js/table.js). A move sent again after it had landed is
        refused by the table (it is no longer this seat's turn), never recorded twice."""
        log.warning(
            "database unavailable while saving a move at table %s: %s: %s",
            self.table_id,
            type(err).__name__,
            str(err).strip().splitlines()[0] if str(err).strip() else "",
            extra={"fault_error": err},  # one line per fault (studyapp.logs)
        )
        await asyncio.to_thread(outages.trouble)
        await asyncio.sleep(DATABASE_PAUSES[0])
        try:
            landed = await self.moved_since(sent_after)
        except TRANSIENT:
            landed = False
        if landed:
            await self.send(text_data=await self.current_board())
        else:
            await self.send(text_data=resend_notice())

    @db_read
    def moved_since(self, seq: int) -> bool:
        return Turn.objects.filter(
            table_id=self.table_id, seat=self.seat_index, seq__gte=seq
        ).exists()

    async def leave_taken_seat(self) -> None:
        """Another browser took this socket's seat: say so and close for good (the page does not
        reconnect after SEAT_TAKEN); the seat's presence is the other browser's now."""
        log.info(
            "table %s seat %s taken by another browser: socket closed",
            self.table_id,
            self.seat_index,
        )
        self.seat_id = None  # not marked disconnected: the other browser holds it
        await self.send(text_data=notice(SEAT_TAKEN_MESSAGE))
        await self.close(code=SEAT_TAKEN)

    def may_send_frame(self) -> bool:
        """A token bucket per socket over every frame: FRAME_BURST, then FRAMES_PER_SECOND. A
        page sends a heartbeat every HEARTBEAT_SECONDS and a move now and then; a socket sending
        more has the rest dropped, counted, and logged at most once a minute."""
        if self.frames.take():
            return True
        now = time.monotonic()
        self.dropped += 1
        if now - self.dropped_logged_at >= 60:
            self.dropped_logged_at = now
            log.warning(
                "table %s socket over its frame limit: %d frames dropped so far",
                getattr(self, "table_id", "?"),
                self.dropped,
            )
        return False

    def may_move(self) -> bool:
        """A token bucket per socket: a burst of MOVE_BURST, then MOVES_PER_SECOND."""
        return self.moves.take()

    async def table_update(self, message: dict[str, Any]) -> None:
        """Pass on this seat's view of the move; spectators re-render for themselves. The move
        also moves on this process's fold of the table (:func:`store.follow`), so the next
        move here need not rebuild the table from its log."""
        store.follow(self.table_id, message["seq"], message.get("event"))
        if message["seq"] < self.seen_seq:
            return  # an older view arriving late would undo a newer one
        self.seen_seq = message["seq"]
        self.seen_status = message.get("status", self.seen_status)
        html = None if self.seat_index is None else message["boards"][self.seat_index]
        await self.send_board(html if html is not None else await self.current_board())

    async def send_if_newer(self, board: tuple[int, str, str] | None) -> None:
        """Send a board the catch-up rendered (:meth:`heartbeat`), unless a broadcast sent a
        newer one while it was being rendered."""
        if board is None:
            return
        seq, status, html = board
        if seq < self.seen_seq:
            return
        self.seen_seq, self.seen_status = seq, status
        await self.send_board(html)

    async def send_board(self, html: str) -> None:
        """Send a board pushed after a commit, unless it is the very frame this socket sent
        last: a turn the board does not show (a blinded table's takeover) then pushes nothing,
        so no empty frame marks the moment a person's seat was handed to an agent."""
        if html == self.last_sent:
            return
        await self.send(text_data=html)

    async def send(
        self, text_data: str | None = None, bytes_data: bytes | None = None, close: bool = False
    ) -> None:
        self.last_sent = text_data
        await super().send(text_data=text_data, bytes_data=bytes_data, close=close)

    @db_read
    def claim_place(self) -> bool:
        """A seat held by this session or user; staff without a seat watch as spectators."""
        born = Table.objects.filter(pk=self.table_id).values_list("created_at", flat=True).first()
        if born is None:
            return False
        session = self.scope.get("session")
        user = self.scope.get("user")
        seat = services.find_seat(self.table_id, session.session_key if session else None, user)
        if seat is not None:
            self.seat_index, self.seat_id = seat.index, seat.pk
            # a socket the server lost (a daphne restart) is the site's outage, not the seat's
            table = outages.table_key(self.table_id, born)
            outages.reconnected(table, seat.index, seat.connected, seat.last_seen)
            services.touch_seat(seat.pk, connected=True)
            return True
        return bool(user is not None and user.is_authenticated and user.is_staff)

    @db_read
    def current_board(self, error: str | None = None) -> str:
        snap = services.table_state(self.table_id)
        self.seen_seq = max(self.seen_seq, snap.next_seq)
        self.seen_status = snap.table.status
        return render_board(snap, self.seat_index, error)

    @db_read
    def catch_up(self) -> None:
        driver.tick(self.table_id)

    @db_read
    def heartbeat(self) -> tuple[int, str, str] | None:
        """Presence, the driver's catch-up, and this socket's: a board that moved on without
        this socket hearing of it (a broadcast lost with a Redis connection, a publish that
        failed) is rendered now, so a lost broadcast costs a person at most one heartbeat.
        Returns ``(seq, status, board)`` to send, or None when the page is up to date; SEAT_GONE
        when another browser holds the seat now."""
        if not self.holds_seat():
            return SEAT_GONE
        services.touch_seat(self.seat_id, connected=True)
        snap = driver.tick(self.table_id)  # a table being played: rebuilt from its log already
        if snap is None:
            version = services.table_version(self.table_id)
            if version is None or version == (self.seen_seq, self.seen_status):
                return None
            snap = services.table_state(self.table_id)
        if (snap.next_seq, snap.table.status) == (self.seen_seq, self.seen_status):
            return None
        return snap.next_seq, snap.table.status, render_board(snap, self.seat_index)

    @db_read
    def mark_presence(self, connected: bool) -> None:
        services.touch_seat(self.seat_id, connected=connected)

    def holds_seat(self) -> bool:
        """Whether this socket's browser still holds its seat (the same person may have taken it
        in another browser since, with the same recruiter IDs)."""
        session = self.scope.get("session")
        held = services.held_seat_id(
            self.table_id, session.session_key if session else None, self.scope.get("user")
        )
        return held is not None and held == self.seat_id

    @db_move
    def play(self, content: dict[str, Any]) -> Any:
        """Submit the move; on a rejection, this seat's unchanged view with the reason; SEAT_GONE,
        and nothing submitted, when another browser holds the seat now."""
        if not self.holds_seat():
            return SEAT_GONE
        try:
            services.submit(self.table_id, self.seat_index, content)
        except IllegalMove as err:
            return render_board(services.table_state(self.table_id), self.seat_index, err.reason)
        return None


class NotFoundConsumer(AsyncJsonWebsocketConsumer):
    """Any socket address that names no table (``/ws/nope/``, ``/ws/tables/abc/``): closed at
    once with NOT_FOUND. Channels' router would raise, and daphne answer 500 with a traceback."""

    async def connect(self) -> None:
        await self.accept()
        await self.close(code=NOT_FOUND, reason="There is nothing at this address.")
