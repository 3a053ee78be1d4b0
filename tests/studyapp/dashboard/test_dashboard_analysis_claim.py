"""The analysis row is claimed once, not on every poll, however old it is.

The study page polls every second or two while a study runs and games land. A row whose last sign
of life is older than ``ANALYSIS_STALE_SECONDS`` is free to claim; the first poll claims it and
queues one computation, and the claim stamps the row, so the next polls see a computation under
way until it ends or its own heartbeat goes silent. The clock is shifted for real: the row's
stamps are written into the past with ``QuerySet.update`` (which no ``auto_now`` field follows),
and the polls go through the real page."""

from __future__ import annotations

from datetime import timedelta

import pytest
from analysis_db_helpers import events_found_at, finished_table, make_study
from django.contrib.auth.models import User
from django.db import models
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from studyapp import dispatch
from studyapp.dashboard.models import AnalysisResult

pytestmark = pytest.mark.django_db

SCOPE = "study:tq-study"


@pytest.fixture
def staff() -> Client:
    client = Client()
    client.force_login(User.objects.create_user("researcher", password="pw", is_staff=True))
    return client


@pytest.fixture
def queued(monkeypatch) -> list[tuple]:
    """What is handed to the dispatcher: kept as queued on a busy worker, never run."""
    sent: list[tuple] = []
    monkeypatch.setattr(dispatch, "send", lambda task, args, **kw: sent.append((task.name, args)))
    return sent


def stamps_in_the_past(seconds: float, **fields) -> None:
    """Every date-time stamp of the row ``seconds`` ago (and ``fields`` set), by ``update``."""
    then = timezone.now() - timedelta(seconds=seconds)
    stamps = {
        field.name: then
        for field in AnalysisResult._meta.get_fields()
        if isinstance(field, models.DateTimeField)
    }
    assert stamps  # the row has a stamp to shift
    AnalysisResult.objects.filter(scope=SCOPE).update(**stamps, **fields)


def a_game_lands() -> None:
    finished_table(
        events_found_at(2),
        [{"kind": "agent", "agent_spec": "offline:kb"}, {"kind": "agent", "agent_spec": "x"}],
    )


def test_an_old_row_polled_twenty_times_while_games_land_queues_one_computation(
    staff, settings, queued
):
    make_study()
    AnalysisResult.objects.create(
        scope=SCOPE, version="an-older-version", wanted="an-older-version", status="done"
    )
    stamps_in_the_past(settings.ANALYSIS_STALE_SECONDS + 60)
    url = reverse("dashboard:analysis_study", kwargs={"slug": "tq-study"})
    for _ in range(20):
        a_game_lands()
        assert staff.get(url).status_code == 200
    assert queued == [("dashboard.compute_analysis", (SCOPE, queued[0][1][1]))]
    row = AnalysisResult.objects.get(scope=SCOPE)
    assert row.status == "queued" and row.wanted == queued[0][1][1]


def test_a_computation_whose_heartbeat_went_silent_is_queued_again_once(staff, settings, queued):
    """A queued or running computation is under way while it beats; silent past the limit it
    lost its process, and the next poll (one of many) queues it again."""
    make_study()
    url = reverse("dashboard:analysis_study", kwargs={"slug": "tq-study"})
    staff.get(url)
    assert len(queued) == 1
    for _ in range(5):
        a_game_lands()
        staff.get(url)
    assert len(queued) == 1  # under way: its claim is recent

    stamps_in_the_past(settings.ANALYSIS_STALE_SECONDS + 1, status="running")
    for _ in range(5):
        a_game_lands()
        staff.get(url)
    assert len(queued) == 2
