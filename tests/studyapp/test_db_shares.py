"""The pool's shares (studyapp.db.current_share): in a daphne whose pool page views have filled
up to their share, a socket's read still gets a connection and a move's commit gets the last
one; a page past its share waits, and its wait ends as the pool's own does (a 503 that says to
try again). A process of its own, as daphne is."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_db import run, site_database  # noqa: F401  (a fixture)

HOLD_AND_TRY = """
import json, threading, time
from django.db import OperationalError, close_old_connections, connection
from studyapp.db import MOVE, PAGE, READ, is_pool_timeout, working_on

def hold(kind, seconds):
    with working_on(kind):
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_sleep(%s)", [seconds])
    close_old_connections()

def attempt(kind):
    started = time.monotonic()
    with working_on(kind):
        try:
            with connection.cursor() as cursor:
                cursor.execute("SELECT 1")
            verdict = "ok"
        except OperationalError as err:
            verdict = "timeout" if is_pool_timeout(err) else f"other: {err}"
        finally:
            close_old_connections()
    return verdict, round(time.monotonic() - started, 2)

holders = [threading.Thread(target=hold, args=(PAGE, 3)) for _ in range(2)]
holders.append(threading.Thread(target=hold, args=(READ, 3)))
for holder in holders:
    holder.start()
    time.sleep(0.2)
found = {kind: attempt(kind) for kind in (PAGE, MOVE)}
for holder in holders:
    holder.join()
found["page after"] = attempt(PAGE)
print(json.dumps(found))
"""


@pytest.mark.django_db(transaction=True)
def test_pages_never_hold_the_connections_a_move_needs(tmp_path: Path, site_database) -> None:  # noqa: F811
    result = run(
        tmp_path,
        HOLD_AND_TRY,
        DATABASE_URL=site_database,
        DB_POOL_SIZE="4",
        DB_POOL_SOCKETS="2",  # pages hold 2 at most, reads 3, a move any
        DB_POOL_TIMEOUT="0.5",
    )
    assert result.returncode == 0, result.stderr[-2000:]
    found = json.loads(result.stdout.splitlines()[-1])
    assert found["page"][0] == "timeout" and found["page"][1] >= 0.4  # waited its share's turn
    assert found["move"][0] == "ok" and found["move"][1] < 0.3  # the pool's last connection
    assert found["page after"][0] == "ok"  # the share given back with the connections
