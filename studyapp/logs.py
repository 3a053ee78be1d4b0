"""Logging helpers named by ``settings.LOGGING``."""

from __future__ import annotations

import json
import logging
import re
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
