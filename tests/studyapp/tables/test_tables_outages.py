"""The site's own outages pause the clocks (studyapp.tables.outages): a person whose table could
not hear them, while the sweep could not run or the database or Redis was away, is not dropped
for that time, neither by the turn deadline nor by the study's idle limit."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from django.core.cache import cache
from django.utils import timezone

from studyapp.tables import driver, outages, services
from studyapp.tables.models import Table, Turn

pytestmark = pytest.mark.django_db(transaction=True)

ORACLE = {"kind": "agent", "agent_spec": "offline:kb"}


@pytest.fixture(autouse=True)
def no_outages_yet():
    cache.delete_many([outages.LAST_SWEEP, outages.OUTAGES])
    yield
    cache.delete_many([outages.LAST_SWEEP, outages.OUTAGES])


def waiting_table(session_key: str, since: float, **options: object) -> Table:
    table = services.create_table(
        "twenty-questions",
        {"answer": "Apple", "max_questions": 20},
        [{"kind": "human", "session_key": session_key}, ORACLE],
        dropout="end",
        **options,
    )
    started = timezone.now() - timedelta(seconds=since)
    Table.objects.filter(pk=table.pk).update(started_at=started)
    return table


def test_a_gap_between_sweeps_is_an_outage_and_a_short_one_is_not() -> None:
    now = time.time()
    assert outages.note_sweep(now - 200) == 0.0
    assert outages.note_sweep(now - 195) == pytest.approx(5)  # on time
    assert outages.paused_seconds(timezone.now() - timedelta(seconds=300), timezone.now()) == 0
    outages.note_sweep(now - 100)  # 95 s without a sweep
    paused = outages.paused_seconds(timezone.now() - timedelta(seconds=300), timezone.now())
    assert paused == pytest.approx(95 - 5, abs=1)


def test_the_turn_deadline_does_not_run_during_the_sites_outage(session_key: str) -> None:
    table = waiting_table(session_key, since=40, turn_deadline_seconds=30)
    # The sweep ran, then nothing for 30 s (beat, the broker or the database away).
    now = time.time()
    outages.note_sweep(now - 35)
    outages.note_sweep(now - 5)
    assert driver.check_deadline(table.pk, 0) == "early"  # 40 s waited, 25 of them the site's
    assert not Turn.objects.filter(table=table).exists()


def test_without_an_outage_the_deadline_applies(session_key: str) -> None:
    table = waiting_table(session_key, since=40, turn_deadline_seconds=30)
    assert driver.check_deadline(table.pk, 0) == "ended"


def test_trouble_seen_by_a_socket_pauses_the_idle_limit(session_key: str) -> None:
    table = waiting_table(session_key, since=65, turn_deadline_seconds=0, idle_limit_seconds=60)
    outages.trouble(time.time() - 20)  # a database error 20 s ago: 10 s paused
    snap = driver.table_state(table.pk)
    assert driver.drop_idle(snap, timezone.now()) == []
    cache.delete(outages.OUTAGES)
    assert driver.drop_idle(snap, timezone.now()) == ["idle person dropped"]
