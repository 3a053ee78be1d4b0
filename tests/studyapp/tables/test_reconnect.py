"""A server that goes away is the site's outage, not the person's (studyapp.tables.outages): a
seat whose socket the server lost without hearing it close (a daphne restart or kill) gets the
time until its page reconnects added to its deadline, and the driver does not judge a seat while
it is cut off; the page reconnects within a few seconds (static/js/table.js)."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
from datetime import timedelta
from pathlib import Path

import pytest
from channels.db import database_sync_to_async
from django.conf import settings
from django.core.cache import cache
from django.utils import timezone

from studyapp.tables import driver, dues, outages, services
from studyapp.tables.models import Seat, Table, Turn
from tests.studyapp.tables.conftest import make_session, socket

pytestmark = pytest.mark.django_db(transaction=True)

ORACLE = {"kind": "agent", "agent_spec": "offline:kb"}


@pytest.fixture(autouse=True)
def no_outages_yet():
    cache.delete_many([outages.LAST_SWEEP, outages.OUTAGES])
    yield
    cache.delete_many([outages.LAST_SWEEP, outages.OUTAGES])


def waiting_table(session_key: str, since: float) -> Table:
    table = services.create_table(
        "twenty-questions",
        {"answer": "Apple", "max_questions": 20},
        [{"kind": "human", "session_key": session_key}, ORACLE],
        turn_deadline_seconds=30,
        missed_turns_limit=3,
    )
    Table.objects.filter(pk=table.pk).update(started_at=timezone.now() - timedelta(seconds=since))
    return table


def lost_socket(table: Table, silent: float) -> None:
    """The seat's socket was on a server process that died ``silent`` seconds ago: the seat
    still reads connected, last heard from then."""
    Seat.objects.filter(table=table, index=0).update(
        connected=True, last_seen=timezone.now() - timedelta(seconds=silent)
    )


async def test_a_page_back_after_a_server_restart_is_not_charged_for_it() -> None:
    key = await make_session()
    table = await database_sync_to_async(waiting_table)(key, since=40)
    await database_sync_to_async(lost_socket)(table, silent=35)
    communicator = socket(table.pk, key)
    assert (await communicator.connect())[0]
    await communicator.receive_from(timeout=5)
    snap = await database_sync_to_async(services.table_state)(table.pk)
    due = await database_sync_to_async(dues.seat_due)(snap, 0)
    # 40 s into a 30 s turn, 35 of them cut off by the server: 25 s left
    assert (due - timezone.now()).total_seconds() == pytest.approx(25, abs=2)
    assert await database_sync_to_async(driver.check_deadline)(table.pk, 0) == "early"
    await communicator.disconnect()


async def test_a_reload_or_a_closed_page_is_no_outage() -> None:
    key = await make_session()
    table = await database_sync_to_async(waiting_table)(key, since=40)
    # heard from 5 s ago (a reload): no outage
    await database_sync_to_async(lost_socket)(table, silent=5)
    communicator = socket(table.pk, key)
    assert (await communicator.connect())[0]
    await communicator.receive_from(timeout=5)
    await communicator.disconnect()  # the close is heard: not connected
    seat = await database_sync_to_async(Seat.objects.get)(table=table, index=0)
    assert not seat.connected
    # the connect's catch-up sent the overdue check, which found the turn missed
    for _ in range(50):
        first = await database_sync_to_async(Turn.objects.filter(table=table, seq=0).first)()
        if first is not None:
            break
        await asyncio.sleep(0.1)
    else:
        assert await database_sync_to_async(driver.check_deadline)(table.pk, 0) == "missed"
        first = await database_sync_to_async(Turn.objects.get)(table=table, seq=0)
    assert first.event.get("missed") is True


def test_the_driver_waits_for_a_seat_the_server_cut_off(session_key: str) -> None:
    table = waiting_table(session_key, since=40)
    lost_socket(table, silent=2 * settings.HEARTBEAT_SECONDS + 5)
    assert driver.check_deadline(table.pk, 0) == "cut off"
    lost_socket(table, silent=outages.CUT_OFF_WAIT_SECONDS + 1)  # never came back
    assert driver.check_deadline(table.pk, 0) == "missed"


def run_node(script: str) -> str:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    done = subprocess.run([node, "-e", script], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_page_reconnects_within_a_few_seconds_with_jitter() -> None:
    source = (Path(settings.BASE_DIR) / "static" / "js" / "table.js").read_text()
    stub = """
      const window = { htmx: { config: {} } };
      const document = { addEventListener() {}, getElementById() { return null; } };
      SOURCE
      const delay = window.htmx.config.wsReconnectDelay;
      const out = [];
      for (let retry = 0; retry < 12; retry++) {
        for (let n = 0; n < 200; n++) out.push([retry, delay(retry)]);
      }
      console.log(JSON.stringify(out));
    """.replace("SOURCE", source)
    delays = json.loads(run_node(stub))
    first = [d for retry, d in delays if retry == 0]
    later = [d for retry, d in delays if retry >= 3]
    assert max(d for _, d in delays) <= 4000  # never the extension's 64 s
    assert min(first) >= 500 and max(first) <= 1000
    assert min(later) >= 2000 and len({round(d) for d in later}) > 100  # jittered
