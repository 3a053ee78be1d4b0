"""An executor process's main loop (``manage.py run_steps``): it reads steps from the stream
through the executors' consumer group as room allows, runs them, acknowledges each when done,
keeps its own pending steps fresh, takes over a dead executor's, and publishes what it holds.

Nothing Redis does to the stream ends it. Redis out of reach is waited out (one line per fault,
:class:`studyapp.logs.OncePerFault`). A stream or group that is gone (a ``FLUSHDB``, the key
deleted, the group destroyed, Redis restarted without its data: ``XREADGROUP`` answers
``NOGROUP`` or, while blocked, ``UNBLOCKED ...``) is made again, with one line saying so; the
steps this executor holds go on and finish (their entries went with the stream, so there is
nothing to acknowledge)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import socket
from typing import Any

from django.conf import settings
from redis.asyncio import Redis
from redis.exceptions import ResponseError

from studyapp.cache import UNREACHABLE, redis_resilience
from studyapp.steps.executor import ELSEWHERE, HANDLERS, Executor, Step
from studyapp.steps.status import forget, publish_forever
from studyapp.steps.stream import GROUP, stream_key

log = logging.getLogger("studyapp.steps")
LOST = ("NOGROUP", "UNBLOCKED")  # the stream or its group is gone


def consumer_name() -> str:
    return f"{socket.gethostname()}-{os.getpid()}"


class Consumer:
    """One executor's reading of the stream under ``name``."""

    def __init__(self, executor: Executor, name: str, stop: asyncio.Event) -> None:
        self.executor = executor
        self.name = name
        self.stop = stop
        self.loop = executor.loop
        self.client = Redis.from_url(settings.REDIS_URL, **redis_resilience(asynchronous=True))
        self.key = stream_key()
        self.what = f"steps executor {name}"
        self.refused = ""  # the last unexpected refusal written (each kind once in a row)

    # --- Redis's faults -------------------------------------------------------------------

    def unreachable(self, err: BaseException) -> None:
        """Each failure is logged with its error; the site's one-line-per-fault filter writes
        the fault's start once, counts the repeats and writes its end when Redis answers."""
        log.warning("%s: cannot reach the steps' stream", self.what, extra={"fault_error": err})

    async def ensure_group(self) -> bool:
        """Make the stream and the group if either is missing; whether this call made them."""
        try:
            await self.client.xgroup_create(self.key, GROUP, id="0", mkstream=True)
        except ResponseError as err:
            if "BUSYGROUP" not in str(err):
                raise
            return False
        return True

    async def refused_by_redis(self, err: ResponseError) -> None:
        """A command refused: the stream or group gone is made again (one line); anything
        else (a replica that is read-only, a Redis out of memory) is written once and waited
        on, never the end of the process."""
        text = str(err).strip()
        if text.startswith(LOST):
            try:
                made = await self.ensure_group()
            except UNREACHABLE as again:
                self.unreachable(again)
                await asyncio.sleep(0.5)
                return
            except ResponseError as again:  # cannot make it (read-only, out of memory): below
                text = str(again).strip()
            else:
                if made:
                    log.warning(
                        "%s: the steps' stream or its group was gone (%s); made again, "
                        "%d step(s) in hand go on",
                        self.what,
                        text.split(" ")[0],
                        len(self.executor),
                    )
                return
        if text != self.refused:
            self.refused = text
            log.warning("%s: Redis refused a command (%s); trying again", self.what, text)
        await asyncio.sleep(1.0)

    # --- reading and acknowledging ---------------------------------------------------------

    async def done(self, step: Step, result: str) -> None:
        if result == ELSEWHERE:
            return  # left pending: claimed and tried again once the other copy is over
        try:
            async with self.client.pipeline(transaction=False) as pipe:
                pipe.xack(self.key, GROUP, step.entry)
                pipe.xdel(self.key, step.entry)
                await pipe.execute()
        except (*UNREACHABLE, ResponseError):
            pass  # left pending (or Redis lost it): a later claim finds its table moved on

    def take(self, entries: list, *, claimed: bool = False) -> None:
        for entry, fields in entries:
            entry = entry.decode() if isinstance(entry, bytes) else entry
            if entry in self.executor.held or not fields:
                continue
            fields = {k.decode(): v.decode() for k, v in fields.items()}
            try:
                step = Step(
                    fields["name"],
                    tuple(json.loads(fields["args"])),
                    json.loads(fields["kwargs"]),
                    float(fields["due"]),
                    entry,
                    2 if claimed else 1,
                )
            except (KeyError, ValueError):
                log.error("steps: entry %s is not a step; dropped", entry)
                self.loop.create_task(self.done(Step("", (), {}, 0, entry), "bad entry"))
                continue
            if step.name not in HANDLERS:
                log.error("steps: no step is registered as %r; entry %s dropped", step.name, entry)
                self.loop.create_task(self.done(step, "unknown"))
                continue
            self.executor.submit(step, self.done)

    async def read(self) -> None:
        executor = self.executor
        while not self.stop.is_set():
            await executor.room.wait()
            room = max(1, executor.limit - len(executor))
            try:
                answer = await self.client.xreadgroup(
                    GROUP, self.name, {self.key: ">"}, count=min(room, 256), block=1000
                )
            except ResponseError as err:
                await self.refused_by_redis(err)
                continue
            except UNREACHABLE as err:
                self.unreachable(err)
                await asyncio.sleep(0.5)
                continue
            self.refused = ""
            for _stream, entries in answer or []:
                self.take(entries)

    async def keep(self) -> None:
        """Every second: this executor's held steps are alive (their idle time starts again), a
        dead executor's steps silent past STEPS_STALE_SECONDS are claimed, and the status is
        published."""
        executor = self.executor
        stale_ms = int(settings.STEPS_STALE_SECONDS * 1000)
        while not self.stop.is_set():
            await asyncio.sleep(1.0)
            try:
                if executor.held:
                    await self.client.xclaim(
                        self.key, GROUP, self.name, 0, list(executor.held), justid=True
                    )
                if len(executor) < executor.limit:
                    answer = await self.client.xautoclaim(
                        self.key, GROUP, self.name, stale_ms, "0-0", count=min(100, executor.limit)
                    )
                    self.take(answer[1], claimed=True)
            except ResponseError as err:
                await self.refused_by_redis(err)
            except UNREACHABLE as err:
                self.unreachable(err)

    async def take_up_own(self) -> None:
        """This executor's own steps left pending by its previous run (same name): at once."""
        while True:
            try:
                await self.ensure_group()
                break
            except UNREACHABLE as err:
                self.unreachable(err)
                await asyncio.sleep(0.5)
        try:
            answer = await self.client.xreadgroup(
                GROUP, self.name, {self.key: "0"}, count=self.executor.limit
            )
            for _stream, entries in answer or []:
                self.take(entries, claimed=True)
        except (*UNREACHABLE, ResponseError) as err:
            log.warning("steps: own pending steps not read (%s); they are claimed later", err)


async def serve(
    stop: asyncio.Event | None = None,
    *,
    name: str | None = None,
    executor: Executor | None = None,
) -> None:
    """Run an executor process's consumer until ``stop`` is set (see the module)."""
    stop = stop or asyncio.Event()
    name = name or consumer_name()
    loop = asyncio.get_running_loop()
    executor = Executor(loop, settings.STEPS_IN_FLIGHT) if executor is None else executor
    consumer = Consumer(executor, name, stop)
    await consumer.take_up_own()
    tasks: list[asyncio.Task[Any]] = [
        loop.create_task(publish_forever(executor, name, stop)),
        loop.create_task(consumer.keep()),
    ]
    try:
        await consumer.read()
    finally:
        for task in tasks:
            task.cancel()
        if executor.tasks:  # a clean stop lets the steps it holds finish
            await asyncio.wait(executor.tasks, timeout=settings.STEPS_STOP_SECONDS)
        for task in list(executor.tasks):
            task.cancel()
        with contextlib.suppress(*UNREACHABLE):
            await consumer.client.aclose()
        forget(name)
