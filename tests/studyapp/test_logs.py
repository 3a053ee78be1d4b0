"""A refused request is logged in one line, without a traceback."""

from __future__ import annotations

import json
import logging
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from django.test import Client

from studyapp.logs import JSONFormatter, LineFormatter, WithoutSecretPaths, WithoutTraceback


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


def _record(msg: str = "Not Found: %s", args: tuple = ("/i/tok-123/",)) -> logging.LogRecord:
    return logging.LogRecord("django.request", logging.WARNING, __file__, 1, msg, args, None)


def test_a_log_line_names_its_time_level_and_logger() -> None:
    line = LineFormatter().format(_record("ready in %d s", (3,)))
    assert re.fullmatch(
        r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00 WARNING django.request: ready in 3 s", line
    )


def test_a_json_line_has_the_same_fields_and_the_traceback() -> None:
    try:
        raise KeyError("seat")
    except KeyError:
        record = _record("failed", ())
        record.exc_info = sys.exc_info()
    entry = json.loads(JSONFormatter().format(record))
    assert entry["level"] == "WARNING" and entry["logger"] == "django.request"
    assert entry["message"] == "failed" and entry["time"].endswith("+00:00")
    assert entry["exception"].startswith("Traceback") and "KeyError: 'seat'" in entry["exception"]


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_the_site_logs_in_the_format_asked_and_still_masks_invite_tokens(fmt) -> None:
    code = (
        "import django, logging; django.setup(); "
        "logging.getLogger('django.request').warning('Not Found: %s', '/i/tok-s3cr3t/')"
    )
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "studyapp.settings", "LOG_FORMAT": fmt,
             "PYTHONPATH": str(root)},
        capture_output=True, text=True, timeout=60, cwd=root,
    )  # fmt: skip
    line = done.stderr.strip().splitlines()[-1]
    assert "tok-s3cr3t" not in done.stderr
    if fmt == "json":
        entry = json.loads(line)
        assert (entry["level"], entry["logger"]) == ("WARNING", "django.request")
        assert entry["message"] == "Not Found: /i/…/"
    else:
        assert line.endswith(" WARNING django.request: Not Found: /i/…/")


def test_a_celery_worker_logs_json_lines_when_asked(settings) -> None:
    from studyapp.celery import site_log_format

    logger = logging.Logger("celery.test")
    handler = logging.StreamHandler()
    logger.addHandler(handler)
    settings.LOG_FORMAT = "text"
    site_log_format(logger=logger)
    assert not isinstance(handler.formatter, JSONFormatter)  # Celery's own format stays
    settings.LOG_FORMAT = "json"
    site_log_format(logger=logger)
    record = logging.LogRecord("celery.worker", logging.ERROR, __file__, 1, "lost %s", ("x",), None)
    assert json.loads(handler.format(record))["message"] == "lost x"


def test_a_database_error_logged_while_the_interpreter_shuts_down_is_still_one_line() -> None:
    """A thread that logs as the interpreter shuts down finds its modules gone and
    ``sys.meta_path`` None: the site's filters must import nothing then (a pytest run used to end
    with ``ImportError: sys.meta_path is None`` from the database-error filter)."""
    code = (
        "import django, logging, sys; django.setup()\n"
        "from django.db import OperationalError\n"
        "try:\n"
        "    raise OperationalError('the server closed the connection\\nmore')\n"
        "except OperationalError:\n"
        "    info = sys.exc_info()\n"
        "sys.modules.pop('studyapp.db'); sys.meta_path = None  # as at shutdown\n"
        "logging.getLogger('studyapp.jobs').error('heartbeat failed', exc_info=info)\n"
    )
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "studyapp.settings", "PYTHONPATH": str(root)},
        capture_output=True, text=True, timeout=60, cwd=root,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "ImportError" not in done.stderr and "Traceback" not in done.stderr
    assert done.stderr.strip().endswith(
        "ERROR studyapp.jobs: heartbeat failed (OperationalError: the server closed the connection)"
    )
