"""Logging helpers named by ``settings.LOGGING``."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import sys
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime

# Paths that carry a secret: a personal invite's token works for whoever opens it first.
SECRET_PATH = re.compile(r"/i/[^/?#\s]+")


def utc_time(record: logging.LogRecord) -> str:
    return datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds")


class LineFormatter(logging.Formatter):
    """``2026-11-25T23:40:00.123+00:00 ERROR django.request: message`` and any traceback."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s: %(message)s")

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:
        return utc_time(record)


class JSONFormatter(logging.Formatter):
    """One JSON object a line (``LOG_FORMAT=json``), for log collectors: time (UTC), level,
    logger, message, process, and the traceback as text when there is one."""

    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "time": utc_time(record),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            "process": record.process,
        }
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        elif record.exc_text:
            entry["exception"] = record.exc_text
        if record.stack_info:
            entry["stack"] = self.formatStack(record.stack_info)
        return json.dumps(entry, ensure_ascii=False)


class WithoutTraceback(logging.Filter):
    """Keep the message, drop the traceback: a refused request (a bad Host header, a body over
    the limit) is logged by Django's ``django.security`` loggers with the whole stack, a screen of
    text per probe that says nothing the message does not."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.exc_info = None
        record.exc_text = None
        return True


class WithoutSecretPaths(logging.Filter):
    """Django's request log names the path of every 404 and 500 (``Not Found: /i/<token>/``): an
    invite's token is masked, so a log reader cannot open someone's personal link."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple) and record.args:
            record.args = tuple(
                SECRET_PATH.sub("/i/…", arg) if isinstance(arg, str) else arg for arg in record.args
            )
        return True


class BriefDatabaseErrors(logging.Filter):
    """A database that is away for a moment fails every request and socket call at once: each
    such error is logged as one line (its message), not a traceback per request."""

    def __init__(self) -> None:
        super().__init__()
        # Imported once, when the logging is configured, not for each record: a thread that logs
        # while the interpreter shuts down (its modules going, sys.meta_path None) can import
        # nothing, and its last line would end the run with an ImportError instead.
        from studyapp.db import TRANSIENT

        self.transient = TRANSIENT

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        if isinstance(error, self.transient):
            first = str(error).strip().splitlines()[0] if str(error).strip() else ""
            record.msg = f"{record.getMessage()} ({type(error).__name__}: {first})"
            record.args = None
            record.exc_info = None
            record.exc_text = None
        return True


class WithoutAnswered503(logging.Filter):
    """Django's request logger repeats every 5xx response; a 503 is the database-away page, whose
    cause the middleware has already logged in one line (``database unavailable, ...``)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return getattr(record, "status_code", None) != 503


# --- One line per fault ------------------------------------------------------------------------


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else ""


def _one_line(record: logging.LogRecord) -> str:
    """The record's message on one line (an error's text may run over several)."""
    lines = record.getMessage().strip().splitlines() or [""]
    return lines[0] + (" …" if len(lines) > 1 else "")


def _chain(error: BaseException | None) -> list[BaseException]:
    """The error and those it was raised from or during (Celery beat's ``SchedulingError`` is
    raised while handling the broker's ``OperationalError``), a few deep."""
    seen: list[BaseException] = []
    while error is not None and len(seen) < 6 and error not in seen:
        seen.append(error)
        error = error.__cause__ or error.__context__
    return seen


class Fault:
    """One service out of reach in this process: when it began, its cause, the kinds of line
    already written for it and how many lines were counted instead."""

    def __init__(self, service: str, cause: BaseException) -> None:
        self.service = service
        self.cause = f"{type(cause).__name__}: {_first_line(cause)}".rstrip(": ")
        self.began = time.monotonic()
        self.last_error = self.began
        self.answered_since: float | None = None
        self.written: set[tuple[str, str]] = set()
        self.counted: dict[str, int] = {}


class OncePerFault(logging.Filter):
    """Redis or the database away for a moment fails many calls at once, in every process: the
    channel layer's receive task, Celery beat's sends, a worker's acks, the tables' scheduling
    and broadcasts, each with a traceback, again and again until it is back. This filter makes
    such a fault a few lines per process:

    - the first line that carries the fault's error (as its exception, as one of its arguments,
      or anywhere in the chain it was raised from) is written as
      ``Redis unreachable (ConnectionError: ...): <its message>``, without a traceback;
    - while the fault lasts, the first line of each other kind (logger and message) is written
      once, ``<message> (Redis still unreachable)``; every repeat is counted, not written;
    - a thread of this process probes the service every second (a ``PING``, a ``SELECT 1``), and
      once it answers and no error has come for :attr:`QUIET_SECONDS` it writes the fault's end:
      ``Redis reachable again after 20.3 s (41 lines not written: channels_redis.pubsub 17, ...)``.

    A database pool that is merely full (no connection free within ``DB_POOL_TIMEOUT``) is not a
    fault: those lines are written as before. A line written while the interpreter shuts down
    goes through untouched (no thread can start then).
    """

    QUIET_SECONDS = 5.0
    PROBE_SECONDS = 1.0
    log = logging.getLogger("studyapp.faults")

    def __init__(self) -> None:
        super().__init__()
        # Imported here, once, when the logging is configured (see BriefDatabaseErrors).
        from kombu.exceptions import OperationalError as BrokerUnreachable
        from redis.exceptions import ConnectionError as RedisConnectionError
        from redis.exceptions import TimeoutError as RedisTimeoutError

        from studyapp.db import TRANSIENT, is_pool_timeout

        self.kinds: tuple[tuple[str, tuple[type[BaseException], ...]], ...] = (
            ("Redis", (RedisConnectionError, RedisTimeoutError, BrokerUnreachable)),
            ("database", TRANSIENT),
        )
        self.is_pool_timeout = is_pool_timeout
        self.lock = threading.Lock()
        self.faults: dict[str, Fault] = {}
        self.probes: dict[str, Callable[[], object]] = {
            "Redis": probe_redis,
            "database": probe_database,
        }
        os.register_at_fork(after_in_child=self.forget)

    def forget(self) -> None:
        """A forked child (a Celery pool process) has no watcher thread: it starts afresh."""
        self.lock = threading.Lock()
        self.faults = {}

    def classify(self, record: logging.LogRecord) -> tuple[str, BaseException] | None:
        if record.name == "psycopg.pool" and str(record.msg).startswith("discarding closed"):
            # the pool found a connection the server had closed: the database's fault, whose
            # error the pool does not pass on
            return "database", ConnectionError("the server closed pooled connections")
        candidates: list[BaseException] = []
        if record.exc_info and record.exc_info[1] is not None:
            candidates.append(record.exc_info[1])
        marked = record.__dict__.get("fault_error")
        if isinstance(marked, BaseException):
            candidates.append(marked)
        if isinstance(record.args, tuple):
            candidates.extend(a for a in record.args if isinstance(a, BaseException))
        elif isinstance(record.args, dict):
            candidates.extend(a for a in record.args.values() if isinstance(a, BaseException))
        for candidate in candidates:
            for error in _chain(candidate):
                for service, types in self.kinds:
                    if isinstance(error, types):
                        if service == "database" and self.is_pool_timeout(error):
                            return None
                        return service, error
        return None

    def filter(self, record: logging.LogRecord) -> bool:
        if record.__dict__.get("fault_note") or sys.meta_path is None:
            return True
        verdict = record.__dict__.get("fault_verdict")
        if verdict is not None:  # a second handler of the same record: judged once
            return verdict
        record.fault_verdict = verdict = self._judge(record)
        return verdict

    def _judge(self, record: logging.LogRecord) -> bool:
        found = self.classify(record)
        if found is None:
            return True
        service, error = found
        kind = (record.name, str(record.msg))
        with self.lock:
            fault = self.faults.get(service)
            if fault is None:
                fault = self.faults[service] = Fault(service, error)
                fault.written.add(kind)
                text = f"{service} unreachable ({fault.cause}): {_one_line(record)}"
                self._watch(fault)
            elif kind not in fault.written:
                fault.written.add(kind)
                fault.last_error, fault.answered_since = time.monotonic(), None
                text = f"{_one_line(record)} ({service} still unreachable)"
            else:
                fault.last_error, fault.answered_since = time.monotonic(), None
                fault.counted[record.name] = fault.counted.get(record.name, 0) + 1
                return False
        record.msg, record.args = text, None
        record.exc_info, record.exc_text, record.stack_info = None, None, None
        return True

    def _watch(self, fault: Fault) -> None:
        with contextlib.suppress(RuntimeError):  # the interpreter is shutting down
            threading.Thread(
                target=self._until_answered, args=(fault,), name="fault-watch", daemon=True
            ).start()

    def _until_answered(self, fault: Fault) -> None:
        probe = self.probes[fault.service]
        while True:
            time.sleep(self.PROBE_SECONDS)
            try:
                probe()
                answered = True
            except Exception:
                answered = False
            with self.lock:
                if self.faults.get(fault.service) is not fault:
                    return  # forgotten (a fork)
                now = time.monotonic()
                if not answered:
                    fault.answered_since = None
                    continue
                if fault.answered_since is None:
                    fault.answered_since = now
                if now - fault.last_error < self.QUIET_SECONDS:
                    continue
                del self.faults[fault.service]
            break
        seconds = (fault.answered_since or time.monotonic()) - fault.began
        counted = sum(fault.counted.values())
        detail = ", ".join(f"{name} {n}" for name, n in sorted(fault.counted.items()))
        self.log.warning(
            "%s reachable again after %.1f s (%s)",
            fault.service,
            seconds,
            f"{counted} more lines of it not written: {detail}" if counted else "no line repeated",
            extra={"fault_note": True},
        )


def probe_redis() -> None:
    from django.conf import settings

    url = settings.REDIS_URL or getattr(settings, "CELERY_BROKER_URL", "")
    if not url.startswith(("redis://", "rediss://", "unix://")):
        return
    import redis

    client = redis.Redis.from_url(url, socket_timeout=1, socket_connect_timeout=1)
    try:
        client.ping()
    finally:
        client.close()


def probe_database() -> None:
    from django.db import DEFAULT_DB_ALIAS, connections

    wrapper = connections.create_connection(DEFAULT_DB_ALIAS)
    try:
        with wrapper.cursor() as cursor:
            cursor.execute("SELECT 1")
    finally:
        wrapper.close()


FAULTS: OncePerFault | None = None


def once_per_fault() -> OncePerFault:
    """The process's one filter (``settings.LOGGING`` and Celery's own handlers share it, so a
    fault is counted once whichever handler writes its lines)."""
    global FAULTS
    if FAULTS is None:
        FAULTS = OncePerFault()
    return FAULTS


# --- Refusals summed up ------------------------------------------------------------------------


class SummedRefusals(logging.Filter):
    """Django's request log writes every 429 (a start over the new-participant limit, a form
    posted too often, a move sent too fast): a launch over the limit was a line per person. The
    429s are counted instead, and one line sums up each minute that had any:
    ``140 requests refused as too many (429) in the last 60 s: /s/demo/ 140``."""

    WINDOW_SECONDS = 60.0
    log = logging.getLogger("studyapp.ratelimit")

    def __init__(self) -> None:
        super().__init__()
        self.lock = threading.Lock()
        self.counts: dict[str, int] = {}
        self.timer: threading.Timer | None = None
        os.register_at_fork(after_in_child=self.forget)

    def forget(self) -> None:
        self.lock, self.counts, self.timer = threading.Lock(), {}, None

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, "status_code", None) != 429:
            return True
        request = getattr(record, "request", None)
        path = SECRET_PATH.sub("/i/…", getattr(request, "path", "") or "?")
        with self.lock:
            self.counts[path] = self.counts.get(path, 0) + 1
            if self.timer is None:
                try:
                    self.timer = threading.Timer(self.WINDOW_SECONDS, self.flush)
                    self.timer.daemon = True
                    self.timer.start()
                except RuntimeError:  # shutting down
                    self.timer = None
        return False

    def flush(self) -> None:
        with self.lock:
            counts, self.counts, self.timer = self.counts, {}, None
        if not counts:
            return
        top = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
        shown = ", ".join(f"{path} {n}" for path, n in top[:5])
        if len(top) > 5:
            shown += f", {len(top) - 5} more paths {sum(n for _, n in top[5:])}"
        self.log.warning(
            "%d requests refused as too many (429) in the last %d s: %s",
            sum(counts.values()),
            self.WINDOW_SECONDS,
            shown,
        )
