"""The tables' hooks (studyapp/tables/hooks.py): where the tables need an answer they ask the
object named by ``TABLES_HOOKS``; with the defaults (no study behind the tables) they apply their
own policy. The participants app's answers are tested with the studies (tests/studyapp/
participants: groups, dropouts, the end of a game)."""

from __future__ import annotations

import logging
import time
from datetime import datetime

import pytest
from django.urls import reverse
from django.utils.html import format_html

from studyapp.tables import driver, hooks, services
from studyapp.tables.hooks import TablesHooks
from studyapp.tables.models import Table

pytestmark = pytest.mark.django_db

ORACLE = {"kind": "agent", "agent_spec": "offline:kb"}


def person_table(**options: object) -> Table:
    return services.create_table(
        "twenty-questions",
        {"answer": "Apple", "max_questions": 20},
        [{"kind": "human", "session_key": "session-a"}, ORACLE],
        **options,
    )


class LabHooks(TablesHooks):
    """A site of its own that names its pages and counts the sweep's ticks."""

    ticks = 0

    def table_page(self, table: Table, request: object) -> dict[str, str]:
        return {"title": "The Lab of Tests", "bar": format_html('<p id="lab-bar">{}</p>', "one")}

    def swept(self, now: datetime) -> dict[str, int]:
        LabHooks.ticks += 1
        return {"lab tick": 1}


class BrokenSweep(TablesHooks):
    def swept(self, now: datetime) -> dict[str, int]:
        raise RuntimeError("the lab's check broke")


def test_the_site_uses_the_participants_hooks():
    assert type(hooks.hooks()).__qualname__ == "ParticipantsHooks"


def test_with_the_default_hooks_an_idle_person_is_dropped_by_the_tables_own_policy(settings):
    settings.TABLES_HOOKS = "studyapp.tables.hooks.TablesHooks"
    settings.TABLE_SWEEP_SECONDS = 0.0
    table = person_table(turn_deadline_seconds=0, idle_limit_seconds=1, dropout="end")
    time.sleep(1.1)
    done = driver.sweep()
    assert done.get("idle person dropped") == 1
    assert Table.objects.get(pk=table.pk).status == Table.Status.ABORTED


def test_a_table_page_shows_what_the_hooks_add(settings, admin_client):
    settings.TABLES_HOOKS = f"{__name__}.LabHooks"
    table = person_table()
    text = admin_client.get(reverse("tables:table", args=[table.pk])).content.decode()
    assert "The Lab of Tests" in text and '<p id="lab-bar">one</p>' in text


def test_the_sweep_reports_what_the_hooks_did(settings):
    settings.TABLES_HOOKS = f"{__name__}.LabHooks"
    before = LabHooks.ticks
    assert driver.sweep()["lab tick"] == 1
    assert LabHooks.ticks == before + 1


def test_a_failing_sweep_hook_is_logged_and_the_sweep_goes_on(settings, caplog):
    settings.TABLES_HOOKS = f"{__name__}.BrokenSweep"
    settings.TABLE_SWEEP_SECONDS = 0.0
    table = person_table(turn_deadline_seconds=0, idle_limit_seconds=1, dropout="end")
    time.sleep(1.1)
    with caplog.at_level(logging.ERROR):
        done = driver.sweep()
    assert done.get("idle person dropped") == 1  # the rest of the sweep ran
    assert Table.objects.get(pk=table.pk).status == Table.Status.ABORTED
    assert "the lab's check broke" in caplog.text


def test_hooks_that_are_not_tables_hooks_are_refused(settings):
    settings.TABLES_HOOKS = "studyapp.tables.signals.Signal"
    with pytest.raises(TypeError, match="not a TablesHooks"):
        hooks.hooks()
