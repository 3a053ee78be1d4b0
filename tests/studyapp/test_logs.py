"""A refused request is logged in one line, without a traceback."""

from __future__ import annotations

import logging
import sys

from django.test import Client

from studyapp.logs import WithoutSecretPaths, WithoutTraceback


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


def test_an_invites_token_never_reaches_the_log(db) -> None:
    """The line Django writes for a 404 on an invite link names the path with its token masked
    (what a reader of the log could otherwise open); the served site's log is checked in
    test_secrecy_attacks."""
    token = "tok-" + "s3cr3t" * 4
    assert Client().get(f"/i/{token}/").status_code == 404
    handlers = [h for h in logging.getLogger().handlers if isinstance(h, logging.StreamHandler)]
    assert any(any(isinstance(f, WithoutSecretPaths) for f in h.filters) for h in handlers)
    record = logging.LogRecord(
        "django.request", logging.WARNING, __file__, 1, "Not Found: %s", (f"/i/{token}/",), None
    )
    assert WithoutSecretPaths().filter(record)
    assert token not in record.getMessage() and record.getMessage() == "Not Found: /i/…/"
