"""Logging helpers named by ``settings.LOGGING``."""

from __future__ import annotations

import logging
import re

# Paths that carry a secret: a personal invite's token works for whoever opens it first.
SECRET_PATH = re.compile(r"/i/[^/?#\s]+")


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

    def filter(self, record: logging.LogRecord) -> bool:
        from studyapp.db import TRANSIENT

        error = record.exc_info[1] if record.exc_info else None
        if isinstance(error, TRANSIENT):
            first = str(error).strip().splitlines()[0] if str(error).strip() else ""
            record.msg = f"{record.getMessage()} ({type(error).__name__}: {first})"
            record.args = None
            record.exc_info = None
            record.exc_text = None
        return True
