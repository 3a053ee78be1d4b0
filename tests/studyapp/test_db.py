"""Database connections per process (studyapp.db and the DB_POOL_* settings): a bounded pool on
PostgreSQL that callers wait for instead of failing, no pool elsewhere, and a forked child that
leaves its parent's connections alone. Each case runs in a process of its own, started with the
environment it names, as daphne or a worker would be."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest
from django.db import connection

ROOT = Path(__file__).resolve().parents[2]


# Defined in every process ``run`` starts: this thread's server session, and a session ended by
# the server (as a restart does) once the idle connection ``raw`` has heard of it.
SESSIONS = """
import time
import psycopg
from django.db import connection
from studyapp.db import quiet

def backend():
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return cursor.fetchone()[0]

def end_session(url, pid, raw):
    with psycopg.connect(url, autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", [pid])
    for _ in range(50):  # the server's goodbye reaches the idle socket
        if not quiet(raw):
            break
        time.sleep(0.05)
"""


def run(tmp_path: Path, code: str, **env: str) -> subprocess.CompletedProcess:
    """``code`` after ``django.setup()`` (and :data:`SESSIONS`) in a fresh process with only
    ``env`` set."""
    base = {"PATH": "/usr/bin:/bin", "VAR_DIR": str(tmp_path), "SECRET_KEY": "x" * 60}
    setup = "import django; django.setup()\n" + SESSIONS
    return subprocess.run(
        [sys.executable, "-c", setup + textwrap.dedent(code)],
        cwd=ROOT,
        env={**base, "DJANGO_SETTINGS_MODULE": "studyapp.settings", "PYTHONPATH": str(ROOT), **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def database_settings(tmp_path: Path, **env: str) -> dict:
    result = run(
        tmp_path,
        """
        import json
        from django.conf import settings
        db = settings.DATABASES["default"]
        print(json.dumps({"max_age": db.get("CONN_MAX_AGE"), "options": db.get("OPTIONS", {})},
                         default=str))
        """,
        **env,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return json.loads(result.stdout.splitlines()[-1])


URL = "postgres://study@127.0.0.1:5432/study"


def test_postgresql_gets_a_bounded_pool_and_no_persistent_connections(tmp_path: Path) -> None:
    found = database_settings(tmp_path, DATABASE_URL=URL)
    assert found["max_age"] == 0
    assert found["options"]["pool"] == {
        "min_size": 1,
        "max_size": 8,
        "timeout": 10.0,
        "max_idle": 60.0,
    }
    found = database_settings(
        tmp_path, DATABASE_URL=URL, DB_POOL_SIZE="3", DB_POOL_MIN="5", DB_POOL_TIMEOUT="2.5"
    )
    assert found["options"]["pool"]["max_size"] == 3
    assert found["options"]["pool"]["min_size"] == 3  # never more than the size
    assert found["options"]["pool"]["timeout"] == 2.5


def test_no_pool_without_postgresql_or_when_turned_off(tmp_path: Path) -> None:
    assert "pool" not in database_settings(tmp_path)["options"]  # SQLite
    found = database_settings(tmp_path, DATABASE_URL=URL, DB_POOL_SIZE="0", DB_CONN_MAX_AGE="60")
    assert "pool" not in found["options"] and found["max_age"] == 60


@pytest.mark.parametrize(
    "env", [{"DB_POOL_SIZE": "-1"}, {"DB_POOL_TIMEOUT": "0"}, {"WORKER_DB_POOL_SIZE": "0"}]
)
def test_bad_pool_settings_are_refused_with_the_reason(tmp_path: Path, env: dict) -> None:
    result = run(tmp_path, "", DATABASE_URL=URL, **env)
    assert result.returncode != 0
    assert "DB_POOL_SIZE must be 0 (no pool) or more" in result.stderr


@pytest.fixture
def site_database() -> str:
    """The test database's URL, for a process of its own to connect to."""
    if connection.vendor != "postgresql":
        pytest.skip("the pool is for PostgreSQL (DATABASE_URL)")
    base = os.environ["DATABASE_URL"]
    return urlunsplit(urlsplit(base)._replace(path=f"/{connection.settings_dict['NAME']}"))


@pytest.mark.django_db(transaction=True)
def test_threads_share_the_pool_and_wait_for_a_connection(tmp_path: Path, site_database) -> None:
    """Ten threads each hold a connection for 0.3 s in a process allowed two: all of them get
    their query through, on at most two server sessions."""
    result = run(
        tmp_path,
        """
        import json
        from concurrent.futures import ThreadPoolExecutor
        from django.db import close_old_connections, connection

        def query(_):
            try:
                with connection.cursor() as cursor:
                    cursor.execute("SELECT pg_backend_pid(), pg_sleep(0.3)")
                    return cursor.fetchone()[0]
            finally:
                close_old_connections()  # what a request's end does: back to the pool

        with ThreadPoolExecutor(10) as threads:
            print(json.dumps(list(threads.map(query, range(10)))))
        """,
        DATABASE_URL=site_database,
        DB_POOL_SIZE="2",
    )
    assert result.returncode == 0, result.stderr[-2000:]
    pids = json.loads(result.stdout.splitlines()[-1])
    assert len(pids) == 10 and len(set(pids)) <= 2


@pytest.mark.django_db(transaction=True)
def test_a_wait_past_the_pool_timeout_is_an_operational_error(
    tmp_path: Path, site_database
) -> None:
    result = run(
        tmp_path,
        """
        import threading, time
        from django.db import OperationalError, close_old_connections, connection
        from studyapp.db import is_pool_timeout

        def hold():
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_sleep(1.5)")
            close_old_connections()

        holder = threading.Thread(target=hold)
        holder.start()
        time.sleep(0.3)
        try:
            with connection.cursor() as cursor:
                cursor.execute("SELECT 1")
        except OperationalError as err:
            print("timeout" if is_pool_timeout(err) else f"other: {err}")
        holder.join()
        """,
        DATABASE_URL=site_database,
        DB_POOL_SIZE="1",
        DB_POOL_TIMEOUT="0.3",
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.splitlines()[-1] == "timeout"


@pytest.mark.django_db(transaction=True)
def test_a_forked_child_opens_its_own_connection(tmp_path: Path, site_database) -> None:
    """A Celery pool process or an export's second process is a fork: it gets a session of its
    own, and the parent's pooled connection still works after the child has exited."""
    result = run(
        tmp_path,
        """
        import json, os
        from django.db import close_old_connections, connection

        parent = backend()
        close_old_connections()  # idle in the parent's pool when the child is made
        read, write = os.pipe()
        child = os.fork()
        if child == 0:
            os.write(write, str(backend()).encode())
            close_old_connections()
            os._exit(0)
        os.waitpid(child, 0)
        print(json.dumps({"parent": parent, "child": int(os.read(read, 100)),
                          "parent_after": backend()}))
        """,
        DATABASE_URL=site_database,
        DB_POOL_SIZE="1",  # one server session in the parent: the same one before and after
    )
    assert result.returncode == 0, result.stderr[-2000:]
    found = json.loads(result.stdout.splitlines()[-1])
    assert found["child"] != found["parent"]
    assert found["parent_after"] == found["parent"]  # the same session, not broken by the child


@pytest.mark.django_db(transaction=True)
def test_a_page_that_cannot_get_a_connection_is_a_503_with_one_log_line(
    tmp_path: Path, site_database
) -> None:
    """The database away for a moment (here: the process's only connection busy past the pool's
    timeout): the person gets the 503 page saying to reload, the log one line, no traceback."""
    result = run(
        tmp_path,
        """
        import threading, time
        from django.core.management import call_command
        from django.db import close_old_connections, connection
        from django.test import Client

        call_command("seed_demo", verbosity=0)
        close_old_connections()

        def hold():
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_sleep(2)")
            close_old_connections()

        holder = threading.Thread(target=hold)
        holder.start()
        time.sleep(0.3)
        for method in ("get", "post"):
            response = getattr(Client(), method)("/s/demo/")
            print(method, response.status_code, response["Retry-After"])
            print(response.content.decode().count("could not reach its database"))
        holder.join()
        print("after", Client().get("/s/demo/").status_code)
        """,
        DATABASE_URL=site_database,
        DB_POOL_SIZE="1",
        DB_POOL_TIMEOUT="0.3",
        ALLOWED_HOSTS="testserver",
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.split()[-10:] == [
        "get",
        "503",
        "5",
        "1",
        "post",
        "503",
        "5",
        "1",
        "after",
        "200",
    ]
    # Each line as the site's formatter writes it: time, level and logger, then the message.
    log = [line.split(": ", 1)[-1] for line in result.stderr.strip().splitlines()]
    assert not [line for line in log if "Service Unavailable" in line]  # one line, not two
    assert [line for line in log if "answered 503" in line] == [
        "database unavailable, GET /s/demo/ answered 503: OperationalError: "
        "couldn't get a connection after 0.30 sec",
        "database unavailable, POST /s/demo/ answered 503: OperationalError: "
        "couldn't get a connection after 0.30 sec",
    ], log
    assert "Traceback" not in result.stderr


# A process's table for one person and an agent, held by a session of its own: ``socket()`` opens
# that person's table socket, and ``away(seconds)`` holds a database connection that long (the
# database away for the process's other callers), in a thread it returns. Indented as the code
# it comes before (run() dedents the whole).
SOCKET_SETUP = """
        import threading
        from channels.testing import WebsocketCommunicator
        from django.contrib.sessions.backends.db import SessionStore
        from django.db import close_old_connections, connection
        from studyapp.asgi import application
        from studyapp.tables import services

        session = SessionStore()
        session.create()
        seats = [{"kind": "human", "session_key": session.session_key},
                 {"kind": "agent", "agent_spec": "offline:kb"}]
        table = services.create_table("twenty-questions", {"answer": "Apple"}, seats)
        close_old_connections()

        def away(seconds):
            def hold():
                with connection.cursor() as cursor:
                    cursor.execute("SELECT pg_sleep(%s)", [seconds])
                close_old_connections()
            holder = threading.Thread(target=hold)
            holder.start()
            return holder

        def socket():
            headers = [(b"origin", b"http://testserver"),
                       (b"cookie", f"sessionid={session.session_key}".encode())]
            return WebsocketCommunicator(application, f"/ws/tables/{table.pk}/", headers=headers)
"""


@pytest.mark.django_db(transaction=True)
def test_a_socket_gives_its_connections_back_and_keeps_open_while_the_database_is_away(
    tmp_path: Path, site_database
) -> None:
    """In a process allowed one connection, a table socket connects and plays (each of its
    database calls gives the connection back, or the next would wait for it in vain). Then the
    connection is busy past the pool's timeout: the open socket is told and stays open, a
    socket connecting meanwhile is refused (the page tries again), one log line each; once the
    connection is free the first socket plays on."""
    result = run(
        tmp_path,
        SOCKET_SETUP
        + """
        import asyncio

        async def main():
            ws = socket()
            assert (await ws.connect(timeout=30))[0]
            await ws.receive_from(timeout=30)
            await ws.send_json_to({"type": "question", "text": "Is it alive?"})
            print("played", "Is it alive?" in await ws.receive_from(timeout=10))
            while await ws.receive_nothing(timeout=1) is False:  # the agent's answer
                await ws.receive_from()
            holder = away(6)
            await asyncio.sleep(0.5)
            await ws.send_json_to({"type": "heartbeat"})
            print("notice", "could not be reached for a moment" in await ws.receive_from(timeout=10))
            late = socket()
            print("refused", not (await late.connect(timeout=5))[0])
            holder.join()
            while await ws.receive_nothing(timeout=0.5) is False:
                await ws.receive_from()
            await ws.send_json_to({"type": "question", "text": "Is it bigger than a shoe?"})
            print("again", "bigger than a shoe" in await ws.receive_from(timeout=10))
            await ws.disconnect()

        asyncio.run(main())
        """,
        DATABASE_URL=site_database,
        DB_POOL_SIZE="1",
        DB_POOL_TIMEOUT="1",
        DB_SOCKET_WAIT="0.3",  # its reads' three tries end well inside the 6 s away
        ALLOWED_HOSTS="testserver",
        AGENT_DELAY_SECONDS="0",
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.split() == ["played", "True", "notice", "True", "refused", "True"] + [
        "again",
        "True",
    ]
    lines = [line for line in result.stderr.splitlines() if "database unavailable" in line]
    assert len(lines) == 2 and all("socket" in line for line in lines), result.stderr[-3000:]
    assert "Traceback" not in result.stderr


@pytest.mark.django_db(transaction=True)
def test_a_sockets_reads_wait_briefly_for_a_connection_and_are_tried_again(
    tmp_path: Path, site_database
) -> None:
    """A process allowed one connection, with the pool's wait at 10 s and a socket's at 0.5 s
    (DB_SOCKET_WAIT). The connection held 1.2 s: a socket connecting meanwhile is still let in
    (its reads gave up after 0.5 s and were tried again), well before the pool's 10 s, and a move
    sent during another such hold is saved (its wait, which reached no database, tried again).
    The connection held 8 s: the open socket's heartbeat is told the table could not be reached
    within a few seconds (three short waits and two pauses), not after 10 s or more."""
    result = run(
        tmp_path,
        SOCKET_SETUP
        + """
        import asyncio, time

        async def main():
            holder = away(1.2)
            await asyncio.sleep(0.2)
            started = time.monotonic()
            ws = socket()
            connected = (await ws.connect(timeout=30))[0]
            print("connected", connected, round(time.monotonic() - started, 1))
            await ws.receive_from(timeout=30)
            holder.join()
            holder = away(1.2)
            await asyncio.sleep(0.2)
            started = time.monotonic()
            await ws.send_json_to({"type": "question", "text": "Is it alive?"})
            board = await ws.receive_from(timeout=30)
            print("moved", "Is it alive?" in board, round(time.monotonic() - started, 1))
            holder.join()
            while await ws.receive_nothing(timeout=1) is False:  # the agent's answer
                await ws.receive_from()
            holder = away(8)
            await asyncio.sleep(0.2)
            started = time.monotonic()
            await ws.send_json_to({"type": "heartbeat"})
            told = "could not be reached for a moment" in await ws.receive_from(timeout=30)
            print("told", told, round(time.monotonic() - started, 1))
            holder.join()
            await ws.disconnect()

        asyncio.run(main())
        """,
        DATABASE_URL=site_database,
        DB_POOL_SIZE="1",
        DB_POOL_TIMEOUT="10",
        DB_SOCKET_WAIT="0.5",
        ALLOWED_HOSTS="testserver",
        AGENT_DELAY_SECONDS="0",
    )
    assert result.returncode == 0, result.stderr[-3000:]
    lines = result.stdout.splitlines()[-3:]
    connected, moved, told = (line.split() for line in lines)
    assert connected[1] == "True" and float(connected[2]) < 5, lines
    assert moved[1] == "True" and float(moved[2]) < 5, lines  # saved, not sent back to resend
    assert told[1] == "True" and float(told[2]) < 6, lines
    assert "couldn't get a connection after 0.50 sec" in result.stderr
    assert "after 10.00 sec" not in result.stderr


def test_the_socket_wait_is_never_longer_than_the_pools_and_must_be_positive(
    tmp_path: Path,
) -> None:
    result = run(
        tmp_path,
        "from django.conf import settings; print(settings.DB_SOCKET_WAIT)",
        DATABASE_URL=URL,
        DB_POOL_TIMEOUT="1.5",
        DB_SOCKET_WAIT="4",
    )
    assert result.stdout.split()[-1] == "1.5"
    result = run(tmp_path, "", DATABASE_URL=URL, DB_SOCKET_WAIT="0")
    assert result.returncode != 0 and "DB_SOCKET_WAIT must be more than 0" in result.stderr


@pytest.mark.django_db(transaction=True)
def test_a_pooled_connection_the_server_ended_is_not_handed_out(
    tmp_path: Path, site_database
) -> None:
    """The pool checks an idle connection with a poll of its socket, not a round trip
    (studyapp.postgres): a session PostgreSQL ended while it sat in the pool (a restart, an
    administrator's kill) is thrown away and the next query runs on a new one; a quiet one is
    handed out again as it is."""
    result = run(
        tmp_path,
        """
        import json
        from django.db import close_old_connections, connection
        from studyapp.db import quiet

        first = backend()
        close_old_connections()  # back to the pool, idle
        again = backend()  # quiet: the same session, no round trip to check it
        raw = connection.connection
        was_quiet = quiet(raw)
        close_old_connections()
        end_session(URL, first, raw)
        after_kill_quiet = quiet(raw)
        print(json.dumps({"first": first, "again": again, "was_quiet": was_quiet,
                          "after_kill_quiet": after_kill_quiet, "next": backend()}))
        """.replace("URL", repr(site_database)),
        DATABASE_URL=site_database,
        DB_POOL_SIZE="1",  # one session: the killed one is the one the pool holds
    )
    assert result.returncode == 0, result.stderr[-2000:]
    found = json.loads(result.stdout.splitlines()[-1])
    assert found["again"] == found["first"] and found["was_quiet"]
    assert not found["after_kill_quiet"]
    assert found["next"] != found["first"]  # a new session, and the query went through


@pytest.mark.django_db(transaction=True)
def test_a_worker_process_keeps_a_good_connection_between_tasks(
    tmp_path: Path, site_database
) -> None:
    """Between two tasks (Celery's task_prerun and task_postrun) a pool process keeps its pooled
    connection while it is good; one whose query failed, or whose session the server ended, goes
    back to the pool, and the next task's query runs on a good one."""
    result = run(
        tmp_path,
        """
        import json
        from django.db import DatabaseError, connection
        from studyapp.db import between_tasks

        first = backend()
        between_tasks()
        kept = connection.connection is not None and backend() == first
        try:
            with connection.cursor() as cursor:
                cursor.execute("SELECT * FROM no_such_table")
        except DatabaseError:
            pass
        between_tasks()
        given_back_after_error = connection.connection is None
        second = backend()
        raw = connection.connection
        end_session(URL, second, raw)
        between_tasks()
        given_back_after_kill = connection.connection is None
        third = backend()
        print(json.dumps({"kept": kept, "after_error": given_back_after_error,
                          "after_kill": given_back_after_kill, "second": second,
                          "third": third}))
        """.replace("URL", repr(site_database)),
        DATABASE_URL=site_database,
        DB_POOL_SIZE="2",
    )
    assert result.returncode == 0, result.stderr[-2000:]
    found = json.loads(result.stdout.splitlines()[-1])
    assert found["kept"]
    assert found["after_error"] and found["after_kill"]
    assert found["third"] != found["second"]
