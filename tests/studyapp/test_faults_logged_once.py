"""Redis or the database away: a few lines per fault (its cause, each kind of failure once, its
end), not a traceback per call; 429s summed up once a minute (studyapp.logs)."""

from __future__ import annotations

import io
import logging
import shutil
import socket
import subprocess
import time
import uuid

import pytest
from django.db import OperationalError
from django.test import Client
from django.urls import reverse

from studyapp.logs import LineFormatter, OncePerFault, SummedRefusals, once_per_fault


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _redis_server(port: int) -> subprocess.Popen:
    server = subprocess.Popen(
        ["redis-server", "--port", str(port), "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return server
        time.sleep(0.05)
    server.kill()
    raise RuntimeError("redis-server did not start")


# Loggers of the test's own under the names of those that write these lines (psycopg.pool is
# recognised by name, so it is the real one, kept from propagating while the test runs).
LOGGERS = ("t.channels_redis.pubsub", "t.celery.beat", "t.kombu.message", "psycopg.pool")


class Captured:
    """The loggers a fault's lines come from, written only to a handler of their own that
    carries a fresh fault filter (whose end lines go there too), and its text."""

    def __init__(self, faults: OncePerFault) -> None:
        self.out = io.StringIO()
        self.handler = logging.StreamHandler(self.out)
        self.handler.setFormatter(LineFormatter())
        self.handler.addFilter(faults)
        faults.log = logging.Logger("studyapp.faults")
        faults.log.addHandler(self.handler)
        self.saved = []
        for name in LOGGERS:
            logger = logging.getLogger(name)
            self.saved.append((logger, logger.propagate, logger.level))
            logger.propagate, logger.level = False, logging.INFO
            logger.addHandler(self.handler)

    def close(self) -> None:
        for logger, propagate, level in self.saved:
            logger.propagate, logger.level = propagate, level
            logger.removeHandler(self.handler)

    def lines(self) -> list[str]:
        return self.out.getvalue().splitlines()


@pytest.fixture
def faults():
    faults = OncePerFault()
    faults.QUIET_SECONDS, faults.PROBE_SECONDS = 0.6, 0.1
    captured = Captured(faults)
    yield faults, captured
    captured.close()
    faults.forget()  # its watcher threads stop


@pytest.mark.skipif(shutil.which("redis-server") is None, reason="redis-server is not installed")
def test_redis_stopped_is_a_line_when_it_goes_one_per_kind_and_a_line_when_it_is_back(
    settings, faults
) -> None:
    import redis
    from celery.beat import SchedulingError

    faults, captured = faults
    port = _free_port()
    settings.REDIS_URL = f"redis://127.0.0.1:{port}/0"
    server = _redis_server(port)
    client = redis.Redis.from_url(settings.REDIS_URL, socket_connect_timeout=3)
    client.ping()
    server.terminate()
    server.wait(timeout=10)
    try:
        for _ in range(17):  # channels_redis's receive task, as it loops while Redis is away
            try:
                client.ping()
            except redis.ConnectionError:
                logging.getLogger("t.channels_redis.pubsub").exception(
                    "Unexpected exception in receive task"
                )
        for _ in range(3):  # beat: its send raised while the broker's error was handled
            try:
                try:
                    client.ping()
                except redis.ConnectionError as err:
                    raise SchedulingError(f"Couldn't apply scheduled task sweep: {err}") from None
            except SchedulingError as err:
                logging.getLogger("t.celery.beat").error("Message Error: %s", err, exc_info=True)
        for tag in (1, 2):
            try:
                client.ping()
            except redis.ConnectionError as err:
                logging.getLogger("t.kombu.message").critical(
                    "Couldn't ack %r, reason:%r", tag, err, exc_info=True
                )
        logging.getLogger("t.celery.beat").warning("unrelated line %s", "stays")
        lines = captured.lines()
        assert "Traceback" not in captured.out.getvalue()
        assert len(lines) == 4, lines
        assert "ERROR t.channels_redis.pubsub: Redis unreachable (ConnectionError: " in lines[0]
        assert lines[0].endswith("Unexpected exception in receive task")
        assert "ERROR t.celery.beat: Message Error: Couldn't apply" in lines[1]
        assert lines[1].endswith("(Redis still unreachable)")
        assert "CRITICAL t.kombu.message: Couldn't ack 1" in lines[2]
        assert lines[3].endswith("unrelated line stays")
        time.sleep(1.0)
        assert not any("reachable again" in line for line in captured.lines())  # still away
        server = _redis_server(port)
        began = time.monotonic()
        while time.monotonic() - began < 10 and len(captured.lines()) < 5:
            time.sleep(0.05)
    finally:
        server.terminate()
        server.wait(timeout=10)
    end = captured.lines()[4]
    assert "WARNING studyapp.faults: Redis reachable again after " in end
    seconds = float(end.split("after ")[1].split(" s")[0])
    assert 1.0 < seconds < 10
    assert end.endswith(
        "(19 more lines of it not written: t.celery.beat 2, t.channels_redis.pubsub 16, "
        "t.kombu.message 1)"
    )
    # The next fault is announced again.
    logging.getLogger("t.channels_redis.pubsub").error("again", exc_info=(OSError, None, None))
    try:
        client.ping()
    except redis.ConnectionError as err:
        logging.getLogger("t.channels_redis.pubsub").warning("lost: %s", err)
    assert "Redis unreachable (ConnectionError" in captured.lines()[-1]


def test_a_database_fault_ends_when_it_answers_and_a_full_pool_is_no_fault(faults) -> None:
    faults, captured = faults
    answers = iter([False, False, True, True, True, True, True, True, True, True] + [True] * 90)

    def probe() -> None:
        if not next(answers):
            raise OperationalError("still away")

    faults.probes["database"] = probe
    full = OperationalError("couldn't get a connection after 0.30 sec")
    full.__cause__ = type("PoolTimeout", (Exception,), {})()
    pubsub = logging.getLogger("t.channels_redis.pubsub")  # any logger with the handler
    pubsub.warning("database unavailable, GET / answered 503: %s", "x", extra={"fault_error": full})
    pubsub.warning("database unavailable, GET / answered 503: %s", "x", extra={"fault_error": full})
    assert len(captured.lines()) == 2 and not faults.faults  # written as before, no fault
    for _ in range(5):
        pubsub.warning(
            "database unavailable, POST /p/ answered 503",
            extra={"fault_error": OperationalError("server closed the connection\nunexpectedly")},
        )
    pool = logging.getLogger("psycopg.pool")
    for n in range(3):  # the pool's own line when it finds a connection the server closed
        pool.warning("discarding closed connection: %s", f"<psycopg.Connection [BAD] {n}>")
    try:
        raise OperationalError("consuming input failed: server closed\n\tbefore or while")
    except OperationalError as err:
        pubsub.error("Error calling book_table in Signal.send_robust() (%s)", err, exc_info=err)
    lines = captured.lines()
    assert lines[2].endswith(
        "database unreachable (OperationalError: server closed the connection): "
        "database unavailable, POST /p/ answered 503"
    )
    assert lines[3].endswith(
        "psycopg.pool: discarding closed connection: <psycopg.Connection [BAD] 0> "
        "(database still unreachable)"
    )
    assert lines[4].endswith(
        "Error calling book_table in Signal.send_robust() (consuming input failed: server "
        "closed … (database still unreachable)"
    )
    assert len(lines) == 5 and "Traceback" not in captured.out.getvalue()
    began = time.monotonic()
    while time.monotonic() - began < 10 and len(captured.lines()) < 6:
        time.sleep(0.05)
    assert len(captured.lines()) == 6, captured.lines()
    assert "database reachable again after" in captured.lines()[5]
    assert captured.lines()[5].endswith(
        "(6 more lines of it not written: psycopg.pool 2, t.channels_redis.pubsub 4)"
    )


def test_the_sites_and_celerys_handlers_carry_the_fault_filter() -> None:
    from studyapp.celery import site_log_format

    root = logging.getLogger()
    assert any(once_per_fault() in h.filters for h in root.handlers)
    logger = logging.Logger("celery.test")
    logger.addHandler(logging.StreamHandler())
    site_log_format(logger=logger)
    site_log_format(logger=logger)
    assert logger.handlers[0].filters == [once_per_fault()]


def test_a_launch_over_the_limit_is_one_line_a_minute_not_one_per_person(
    settings, caplog, transactional_db
) -> None:
    settings.PARTICIPANT_RATE_BURST = 2
    here = f"10.{uuid.uuid4().int % 250}.{uuid.uuid4().int % 250}.7"
    summed = next(
        f for f in logging.getLogger("django.request").filters if isinstance(f, SummedRefusals)
    )
    summed.flush()
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        codes = [
            Client(REMOTE_ADDR=here).post(reverse("tables:play_twenty_questions")).status_code
            for _ in range(12)
        ]
        assert codes.count(429) == 10
        assert not [r for r in caplog.records if r.name == "django.request"]
        summed.flush()
    lines = [r.getMessage() for r in caplog.records if r.name == "studyapp.ratelimit"]
    assert lines == [
        "10 requests refused as too many (429) in the last 60 s: /play/twenty-questions/ 10"
    ]
    Client().get("/no-such-page/")  # a 404 is still written at once
    assert any("Not Found" in r.getMessage() for r in caplog.records)


def test_a_ready_worker_does_not_print_celerys_notice_at_each_lost_connection() -> None:
    import warnings

    from celery.exceptions import CPendingDeprecationWarning
    from celery.worker.consumer.consumer import CANCEL_TASKS_BY_DEFAULT

    from studyapp.celery import without_connection_loss_notice

    with warnings.catch_warnings(record=True) as shown:
        warnings.filterwarnings("always", category=CPendingDeprecationWarning)  # Celery's setup
        warnings.warn(CANCEL_TASKS_BY_DEFAULT, CPendingDeprecationWarning, stacklevel=1)
        without_connection_loss_notice()
        warnings.warn(CANCEL_TASKS_BY_DEFAULT, CPendingDeprecationWarning, stacklevel=1)
        warnings.warn("another notice", CPendingDeprecationWarning, stacklevel=1)
    assert [str(w.message)[:30] for w in shown] == [CANCEL_TASKS_BY_DEFAULT[:30], "another notice"]
