"""A refused request is logged in one line, without a traceback."""

from __future__ import annotations

import logging
import sys

from django.test import Client

from studyapp.logs import WithoutTraceback


def test_django_security_logs_go_through_the_filter_that_drops_tracebacks() -> None:
    logger = logging.getLogger("django.security")
    assert not logger.propagate
    assert any(isinstance(f, WithoutTraceback) for h in logger.handlers for f in h.filters)


def test_the_filter_keeps_the_message_and_drops_the_stack() -> None:
    try:
        raise ValueError("Invalid HTTP_HOST header: 'evil.example'")
    except ValueError:
        record = logging.LogRecord(
            "django.security.DisallowedHost", logging.ERROR, __file__, 1, "%s", ("bad",), None
        )
        record.exc_info = sys.exc_info()
    assert WithoutTraceback().filter(record)
    assert record.exc_info is None and record.getMessage() == "bad"
    assert "Traceback" not in logging.Formatter().format(record)


def test_a_bad_host_is_refused(settings) -> None:
    settings.ALLOWED_HOSTS = ["games.example.org"]
    assert Client(HTTP_HOST="evil.example").get("/").status_code == 400
