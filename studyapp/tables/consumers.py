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
import functools
import json
import logging
import time
from collections.abc import Awaitable, Callable
from html import escape
from typing import Any, TypeVar

from channels.consumer import get_handler_name
from channels.db import database_sync_to_async
from channels.exceptions import StopConsumer
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from channels.layers import get_channel_layer
from channels.utils import await_many_dispatch
from django.conf import settings
from django.db import connections
from django.utils.translation import gettext_lazy

from games.base import IllegalMove
from studyapp.cache import UNREACHABLE
from studyapp.db import TRANSIENT, is_pool_timeout, pool_wait, returning_connections
from studyapp.retry import DATABASE_PAUSES, retry_async
from studyapp.tables import driver, outages, services, store
from studyapp.tables.broadcast import table_group
from studyapp.tables.models import Table, Turn
from studyapp.tables.rendering import render_board

log = logging.getLogger(__name__)

FORBIDDEN = 4403
SEAT_TAKEN = 4409  # the seat is now held by another browser (the same person rejoined there)
SEAT_TAKEN_MESSAGE = (
    "This seat is now open in another browser or tab, so this page stopped sending moves. "
    "Go on in the other one."
)
NOT_FOUND = 4404  # a socket address that names nothing here
TOO_LARGE = 4413  # a frame over MAX_FRAME_BYTES (as HTTP's 413; daphne takes no 1009 from an app)
# A move is a few hundred bytes (the form's fields and htmx's headers); a frame larger than this
# is refused and the socket closed with TOO_LARGE. daphne is started with a larger limit of its
# own (4 MiB, deploy/ and the Procfile), so a frame up to that size gets this reason and a log
# line; beyond it daphne closes the socket itself (code 1009).
MAX_FRAME_BYTES = 64 * 1024
TOO_LARGE_MESSAGE = (
    "That message was too large for the table, so the connection was closed. "
    "Reload the page to go on."
)
# A database call that fails for a moment (PostgreSQL restarting, a connection cut, no pooled
# connection free within DB_SOCKET_WAIT): reads are tried again (studyapp.retry.DATABASE_PAUSES);
# then the socket stays open with a notice, and the next heartbeat or move tries again.
UNAVAILABLE_MESSAGE = (
    "The table could not be reached for a moment. Your last move may not have been saved: if "
    "the board does not show it within a few seconds, send it again."
)
# What play and heartbeat answer when the seat is no longer this socket's.
SEAT_GONE = object()
# A frame that is not JSON (or is nested too deeply to read) gets this reason, not a closed socket.
UNREADABLE: dict[str, Any] = {}
# Shown in the board, rendered in the table's language (gettext_lazy, translated at render time).
UNREADABLE_MESSAGE = gettext_lazy("That move could not be read; please use the form on this page.")
# Per socket: heartbeats closer together than this are ignored (the page sends one every
# HEARTBEAT_SECONDS), and moves beyond a small burst are refused until the bucket refills.
HEARTBEAT_MIN_SECONDS = 5.0
MOVE_BURST = settings.SOCKET_MOVE_BURST
MOVES_PER_SECOND = settings.SOCKET_MOVES_PER_SECOND
FRAME_BURST = settings.SOCKET_FRAME_BURST
FRAMES_PER_SECOND = settings.SOCKET_FRAMES_PER_SECOND
TOO_MANY_SOCKETS = 4429  # over SOCKETS_PER_SEAT or SOCKETS_PER_SESSION in this process
# This process's open table sockets, by ("seat", seat id) and ("session", session key).
OPEN_SOCKETS: dict[tuple[str, Any], set[Any]] = {}
TOO_FAST = gettext_lazy("Too many moves at once: wait a moment, then try again.")
T = TypeVar("T")


class LayerResting(Exception):
    """The channel layer failed a moment ago and it is not this socket's turn to try it."""


class LayerGate:
    """This process's view of the channel layer (Redis) while it is out of reach. channels-redis
    sends every subscribe of a process through one connection under one lock, and with Redis
    away each attempt holds it for its retries (most of a second): sockets connecting at once,
    and every socket without broadcasts trying again, queued behind each other past daphne's
    handshake timeout (5 s), which then reset the connection. So after a failure the layer is
    left alone for ``RETRY_SECONDS``: meanwhile a socket starts without broadcasts at once, and
    then one attempt at a time (``probing``) finds out whether Redis is back; and a socket
    connecting waits at most ``WAIT_SECONDS`` for its subscribe (those already queued when Redis
    went away), then starts without broadcasts."""

    RETRY_SECONDS = 5.0
    WAIT_SECONDS = 2.5
    PROBE_SECONDS = 30.0  # a probe that never said how it went (its socket gone) is forgotten

    def __init__(self) -> None:
        self.down_at: float | None = None
        self.probing = False
        self.probe_at = 0.0

    def may_try(self) -> bool:
        """Whether a socket may call the layer now (and if it is down, it is this one's turn)."""
        if self.down_at is None:
            return True
        now = time.monotonic()
        if self.probing and now - self.probe_at < self.PROBE_SECONDS:
            return False
        if now - self.down_at < self.RETRY_SECONDS:
            return False
        self.probing, self.probe_at = True, now
        return True

    def failed(self) -> None:
        self.down_at, self.probing = time.monotonic(), False

    def answered(self) -> None:
        self.down_at, self.probing = None, False

    async def attempt(self, call: Callable[[], Awaitable[T]], wait: float | None = None) -> T:
        """``call()`` on the layer when :meth:`may_try` allows it, its answer or failure noted.
        Raises :class:`LayerResting` when it is not this socket's turn, the layer's own error
        (``UNREACHABLE``) when it fails, and TimeoutError when ``wait`` seconds pass first (not
        counted as a failure: the call was queued behind others')."""
        if not self.may_try():
            raise LayerResting
        try:
            result = await (call() if wait is None else asyncio.wait_for(call(), wait))
        except UNREACHABLE:
            self.failed()
            raise
        self.answered()
        return result


LAYER = LayerGate()


def db_call(func: Any) -> Any:
    """``database_sync_to_async``: on PostgreSQL in a thread pool, so many sockets' moves overlap
    their database waits; on SQLite in the one sync thread (a file database takes one writer)."""
    parallel = connections["default"].vendor == "postgresql"
    return database_sync_to_async(returning_connections(func), thread_sensitive=not parallel)


def briefly(func: Any) -> Any:
    """``func`` waiting at most ``DB_SOCKET_WAIT`` for a pooled connection (studyapp.db.pool_wait),
    not the pool's ``DB_POOL_TIMEOUT``."""

    @functools.wraps(func)
    def waiting_briefly(*args: Any, **kwargs: Any) -> Any:
        with pool_wait(settings.DB_SOCKET_WAIT):
            return func(*args, **kwargs)

    return waiting_briefly


def db_read(func: Any) -> Any:
    """:func:`db_call` for a call that may safely run twice (a read, or marking a seat
    connected): it waits at most ``DB_SOCKET_WAIT`` for a pooled connection (not the pool's
    ``DB_POOL_TIMEOUT``), and a transient database error, that short wait's end included, is tried
    again, on a fresh connection (the failed one goes back to the pool, which drops it), after
    each of the database pauses (:mod:`studyapp.retry`). So a database that is away costs a
    socket a few seconds before its person is told, not the pool's full wait per read. Not for a
    move: a move whose commit failed may have been written (:func:`db_move`)."""
    call = db_call(briefly(func))

    async def retrying(*args: Any, **kwargs: Any) -> Any:
        return await retry_async(lambda: call(*args, **kwargs), retry_on=TRANSIENT)

    return retrying


def db_move(func: Any) -> Any:
    """:func:`db_call` for a move: the same short wait for a pooled connection, and a wait that
    ends is tried again like a read (the move never reached the database); any other database
    error is the caller's to look into (:meth:`TableConsumer.move_failed`)."""
    call = db_call(briefly(func))

    async def retrying(*args: Any, **kwargs: Any) -> Any:
        return await retry_async(
            lambda: call(*args, **kwargs),
            retry_on=TRANSIENT,
            give_up=lambda err: not is_pool_timeout(err),
        )

    return retrying


class TableConsumer(AsyncJsonWebsocketConsumer):
    seat_index: int | None = None
    seat_id: int | None = None
    group: str = ""
    seen_seq: int = -1  # fragments can overtake each other when moves commit in parallel
    seen_status: str = ""  # the table's status on the board this socket last sent
    last_sent: str | None = None  # the last frame this socket sent (send_board)
    last_heartbeat: float = float("-inf")
    move_tokens: float = MOVE_BURST
    tokens_at: float = 0.0
    frame_tokens: float = FRAME_BURST
    frames_at: float = 0.0
    dropped: int = 0
    dropped_logged_at: float = float("-inf")
    counted_as: tuple[tuple[str, Any], ...] = ()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        """Channels' consumer start, except that a channel layer out of reach (Redis down: the
        pub/sub layer subscribes the socket's channel here) does not fail the handshake with a
        500: the socket runs without broadcasts, its heartbeats render what it missed from the
        database, and once Redis answers again it starts listening (:meth:`relisten`)."""
        self.scope = scope
        self.channel_layer = get_channel_layer(self.channel_layer_alias)
        self.base_send = send
        sources = [receive]
        if self.channel_layer is not None:
            try:
                # bounded: a handshake queued behind others' failing subscribes would otherwise
                # outlast daphne's handshake timeout (LayerGate)
                self.channel_name = await LAYER.attempt(
                    self.channel_layer.new_channel, wait=LayerGate.WAIT_SECONDS
                )
            except LayerResting:
                self.channel_layer, self.deaf = None, True  # Redis was away a moment ago
            except (*UNREACHABLE, TimeoutError) as err:
                log.warning(
                    "table socket without broadcasts, redis unavailable: %s",
                    err or f"no answer in {LayerGate.WAIT_SECONDS} s",
                )
                self.channel_layer, self.deaf = None, True
            else:
                sources.append(functools.partial(self.channel_layer.receive, self.channel_name))
        # A deaf socket asks itself whether the layer is back, heartbeats or not (a client that
        # sends none, such as the pilot bots, would otherwise never hear another board); this
        # loop is the only place it asks.
        relistening = asyncio.create_task(self.relisten_until_heard()) if self.deaf else None
        try:
            with contextlib.suppress(StopConsumer):
                await await_many_dispatch(sources, self.dispatch)
        finally:
            for task in (relistening, self.listening):
                if task is not None:
                    task.cancel()

    listening: asyncio.Task | None = None

    async def relisten_until_heard(self) -> None:
        while self.deaf:
            await asyncio.sleep(HEARTBEAT_MIN_SECONDS)
            if self.accepted:
                await self.relisten()

    deaf = False  # started without the channel layer

    async def relisten(self) -> None:
        """A socket started without broadcasts: once the layer answers again, it subscribes a
        channel of its own, joins the table's group, listens in a task beside the socket's own
        loop, and sends the board it may have missed. The page keeps its socket."""
        layer = get_channel_layer(self.channel_layer_alias)
        if layer is None or not self.deaf:
            return

        async def subscribe() -> str:
            name = await layer.new_channel()
            await layer.group_add(table_group(self.table_id), name)
            return name

        try:
            name = await LAYER.attempt(subscribe)
        except (LayerResting, *UNREACHABLE):
            return
        self.channel_layer, self.channel_name = layer, name
        self.group, self.deaf = table_group(self.table_id), False
        self.listening = asyncio.create_task(self.listen(layer, name))
        log.info("table %s socket hears broadcasts again", self.table_id)
        await self.send(text_data=await self.current_board())

    async def listen(self, layer: Any, name: str) -> None:
        while True:
            await self.dispatch(await layer.receive(name))

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
            )
            await asyncio.to_thread(outages.trouble)  # the clocks pause (outages.py)
            if message["type"] == "websocket.disconnect":
                raise StopConsumer() from None  # gone anyway; its next connect marks the seat again
            if not self.accepted:
                # the handshake is refused; the page's socket tries again after a pause
                await self.close()
            else:
                await self.send(text_data=notice(UNAVAILABLE_MESSAGE))

    accepted = False

    async def accept(self, subprotocol: str | None = None, headers: Any = None) -> None:
        await super().accept(subprotocol, headers)
        self.accepted = True

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

    async def join_group(self) -> None:
        """Listen to the table's broadcasts. With Redis out of reach the socket is still
        accepted (no 500 to the handshake): its heartbeats render what it missed from the
        database, and each heartbeat tries to join again."""
        self.group = ""
        if self.channel_layer is None:
            return
        layer, name = self.channel_layer, self.channel_name
        try:
            await LAYER.attempt(lambda: layer.group_add(table_group(self.table_id), name))
        except LayerResting:
            return
        except UNREACHABLE as err:
            log.warning(
                "table %s socket not joined to its broadcasts, redis unavailable: %s",
                self.table_id,
                err,
            )
            return
        self.group = table_group(self.table_id)

    def count_socket(self) -> bool:
        """Count this socket against SOCKETS_PER_SEAT and SOCKETS_PER_SESSION (this process's
        open sockets); False, and nothing counted, when one of them is full."""
        session = self.scope.get("session")
        keys = []
        if self.seat_id is not None:
            keys.append((("seat", self.seat_id), settings.SOCKETS_PER_SEAT))
        if session is not None and session.session_key:
            keys.append((("session", session.session_key), settings.SOCKETS_PER_SESSION))
        if any(len(OPEN_SOCKETS.get(key, ())) >= cap for key, cap in keys):
            return False
        for key, _ in keys:
            OPEN_SOCKETS.setdefault(key, set()).add(self)
        self.counted_as = tuple(key for key, _ in keys)
        return True

    def uncount_socket(self) -> None:
        for key in self.counted_as:
            held = OPEN_SOCKETS.get(key)
            if held is not None:
                held.discard(self)
                if not held:
                    del OPEN_SOCKETS[key]
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
        now = time.monotonic()
        self.frame_tokens = min(
            FRAME_BURST, self.frame_tokens + (now - self.frames_at) * FRAMES_PER_SECOND
        )
        self.frames_at = now
        if self.frame_tokens >= 1:
            self.frame_tokens -= 1
            return True
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
        now = time.monotonic()
        elapsed = now - self.tokens_at
        self.move_tokens = min(MOVE_BURST, self.move_tokens + elapsed * MOVES_PER_SECOND)
        self.tokens_at = now
        if self.move_tokens < 1:
            return False
        self.move_tokens -= 1
        return True

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
        if not Table.objects.filter(pk=self.table_id).exists():
            return False
        session = self.scope.get("session")
        user = self.scope.get("user")
        seat = services.find_seat(self.table_id, session.session_key if session else None, user)
        if seat is not None:
            self.seat_index, self.seat_id = seat.index, seat.pk
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


RESEND_MESSAGE = gettext_lazy(
    "Your move was not saved: the table could not be reached for a moment. It is sent again "
    "automatically in a few seconds; keep this page open."
)


def resend_notice() -> str:
    """The status line telling the page its last move was not saved and to send it again."""
    return (
        '<p id="socket-status" class="notice" role="status" data-resend="1">'
        f"{escape(str(RESEND_MESSAGE))}</p>"
    )


def alert(message: str) -> str:
    """The connection status line carrying a refusal (a move too fast, a frame that is not a
    move): a few bytes, no database read and no board rendered; the form keeps what was typed."""
    return f'<p id="socket-status" class="notice error" role="alert">{escape(message)}</p>'


def notice(message: str) -> str:
    """The page's connection status line (``#socket-status``), swapped in by htmx, saying
    ``message``."""
    return f'<p id="socket-status" class="notice" role="status">{escape(message)}</p>'


class NotFoundConsumer(AsyncJsonWebsocketConsumer):
    """Any socket address that names no table (``/ws/nope/``, ``/ws/tables/abc/``): closed at
    once with NOT_FOUND. Channels' router would raise, and daphne answer 500 with a traceback."""

    async def connect(self) -> None:
        await self.accept()
        await self.close(code=NOT_FOUND, reason="There is nothing at this address.")
