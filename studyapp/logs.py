"""Logging helpers named by ``settings.LOGGING``."""

from __future__ import annotations

import logging


class WithoutTraceback(logging.Filter):
    """Keep the message, drop the traceback: a refused request (a bad Host header, a body over
    the limit) is logged by Django's ``django.security`` loggers with the whole stack, a screen of
    text per probe that says nothing the message does not."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.exc_info = None
        record.exc_text = None
        return True
