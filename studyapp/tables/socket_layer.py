"""The table socket and the channel layer (Redis) while it is out of reach (studyapp.tables.
consumers): one gate per process, so that sockets connecting or trying again do not queue behind
each other's failing subscribes, and a socket that starts without broadcasts and listens again
once the layer answers."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from channels.exceptions import StopConsumer
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from channels.layers import get_channel_layer
from channels.utils import await_many_dispatch
from redis.exceptions import TimeoutError as RedisTimeoutError

from studyapp.cache import UNREACHABLE
from studyapp.tables.broadcast import table_group
from studyapp.tables.socket_limits import HEARTBEAT_MIN_SECONDS

# The socket's log lines, wherever in its classes they are written, under the socket's name.
log = logging.getLogger("studyapp.tables.consumers")
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


class LayerSocket(AsyncJsonWebsocketConsumer):
    """A socket that stays up while the channel layer is out of reach: it starts without
    broadcasts, and listens again once the layer answers. A subclass has ``table_id`` (whose
    group it joins) and ``current_board()`` (what it sends once it hears again)."""

    group: str = ""

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
                # a subscribe queued past its wait is Redis's fault too (studyapp.logs)
                fault = err if isinstance(err, UNREACHABLE) else RedisTimeoutError(err)
                log.warning(
                    "table socket without broadcasts, redis unavailable: %s",
                    err or f"no answer in {LayerGate.WAIT_SECONDS} s",
                    extra={"fault_error": fault},
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

    accepted = False

    async def accept(self, subprotocol: str | None = None, headers: Any = None) -> None:
        await super().accept(subprotocol, headers)
        self.accepted = True

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
