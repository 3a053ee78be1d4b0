"""Every wait has an end: a table paused by a failing model is ended by the sweep after its limit
(a study books the round and the person goes on to their code), a model at a table with people
gets the live time budget, and a person waiting on a slow model is told so and what happens.

Models are the loopback fake server driven by the real SDKs; agent turns run inline (no server
loop), as in a management command."""

from __future__ import annotations

import re
import time
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from studyapp.participants.models import Participant, Study
from studyapp.tables import driver, services
from studyapp.tables.models import Table, Turn
from studyapp.tables.rendering import render_board
from tests.fakes.llm_server import FakeLLMServer
from tests.studyapp.participants.participant_helpers import get_ready, page

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("close_model_clients"),
]

ORACLE = "openai-compatible:oracle"


@pytest.fixture
def site(settings, llm_server: FakeLLMServer) -> FakeLLMServer:
    settings.OPENAI_BASE_URL = llm_server.openai_base_url
    settings.OPENAI_API_KEY = "site-openai-key"
    settings.LIVE_MODEL_RETRIES = 0
    return llm_server


def person_and_model(session_key: str, **options) -> Table:
    seats = [{"kind": "human", "session_key": session_key}, {"kind": "agent", "agent_spec": ORACLE}]
    config = {"answer": "Apple", "max_questions": 20}
    return services.create_table(
        "twenty-questions", config, seats, agent_delay_seconds=0, **options
    )


def test_a_paused_study_table_ends_after_its_limit_and_the_person_gets_their_code(
    site: FakeLLMServer, settings
) -> None:
    settings.MAX_ORACLE_FAILURES = 1
    settings.PAUSED_TABLE_LIMIT_SECONDS = 1
    site.server_error_share = 1.0  # the study's oracle is down
    study = Study.objects.create(
        slug="paused",
        title="Paused",
        rounds=1,
        oracle_spec=ORACLE,
        consent_text="Recorded.",
        completion_url="https://app.prolific.com/submissions/complete",
        code_finished="FIN123",
        code_dropped="DROP456",
    )
    alice = Client()
    person = get_ready(alice, study)
    alice.post(page(person, "play"))
    round_ = person.round_set.get(number=1)
    services.submit(round_.table_id, round_.seat, {"type": "question", "text": "Is it alive?"})
    table = Table.objects.get(pk=round_.table_id)
    assert table.status == Table.Status.PAUSED
    board = render_board(services.table_state(table.pk), round_.seat)
    assert re.search(r"If the game has not resumed within <time[^>]*>1 s</time>", board)

    assert driver.sweep() == {}  # within its limit: it waits for staff
    time.sleep(1.1)
    assert driver.sweep() == {"paused table ended": 1}
    table.refresh_from_db()
    assert table.status == Table.Status.ABORTED
    last = Turn.objects.filter(table=table).order_by("seq").last()
    assert last.event["type"] == "abort" and last.event["paused"] is True
    board = render_board(services.table_state(table.pk), round_.seat)
    assert 'id="ended-reason"' in board and 'id="continue"' in board
    # Booked by the sweep as an ended round, and the person has gone on to their code.
    person.refresh_from_db()
    round_.refresh_from_db()
    assert round_.finished_at is not None and round_.reward == 0.0
    assert person.status == Participant.Status.FINISHED and person.rounds_finished == 1
    assert b"FIN123" in alice.get(page(person, "done")).content
    assert driver.sweep() == {}  # ended once


def test_a_paused_table_without_a_limit_waits_for_staff(site: FakeLLMServer, session_key) -> None:
    site.server_error_share = 1.0
    table = person_and_model(session_key, max_oracle_failures=1, paused_limit_seconds=0)
    services.submit(table, 0, {"type": "question", "text": "Is it alive?"})
    Turn.objects.filter(table=table).update(created_at="2000-01-01T00:00:00Z")
    assert driver.sweep() == {}
    table.refresh_from_db()
    assert table.status == Table.Status.PAUSED
    assert "If the game has not resumed" not in render_board(services.table_state(table.pk), 0)


def test_a_staff_resume_wins_over_a_pause_past_its_limit(site: FakeLLMServer, session_key) -> None:
    site.server_error_share = 1.0
    table = person_and_model(session_key, max_oracle_failures=1, paused_limit_seconds=1)
    services.submit(table, 0, {"type": "question", "text": "Is it alive?"})
    assert driver.resume(table.pk)
    assert driver.end_paused(table.pk) == "resumed"
    table.refresh_from_db()
    assert table.status == Table.Status.PLAYING


def test_a_hung_model_at_a_table_with_a_person_is_cut_at_the_live_budget(
    site: FakeLLMServer, session_key, settings
) -> None:
    """A model that takes 30 s per call: the person's table goes on after the live budget (the
    question is withdrawn, not counted), not after the batch timeout of 60 s and 4 retries."""
    settings.LIVE_MODEL_TIMEOUT_SECONDS = 30
    settings.LIVE_AGENT_TURN_SECONDS = 1.5
    site.latency = 30
    table = person_and_model(session_key)
    started = time.monotonic()
    services.submit(table, 0, {"type": "question", "text": "Is it alive?"})
    took = time.monotonic() - started
    assert took < 5, took
    void = Turn.objects.get(table=table, seq=1)
    assert void.event["type"] == "void"
    assert "live budget of 1.5 s" in void.usage["error"]
    assert services.table_state(table.pk).waiting_for() == [0]  # ask again


def test_a_model_at_a_table_with_people_gets_the_live_per_call_timeout(
    site: FakeLLMServer, session_key, settings
) -> None:
    """Each call times out after LIVE_MODEL_TIMEOUT_SECONDS (the SDK's own timeout), well within
    the turn's budget: the turn fails with the SDK's timeout error."""
    settings.LIVE_MODEL_TIMEOUT_SECONDS = 0.5
    settings.LIVE_AGENT_TURN_SECONDS = 30
    site.latency = 5
    table = person_and_model(session_key)
    started = time.monotonic()
    services.submit(table, 0, {"type": "question", "text": "Is it alive?"})
    assert time.monotonic() - started < 4
    void = Turn.objects.get(table=table, seq=1)
    assert void.event["type"] == "void" and "Timeout" in void.usage["error"]


def test_a_person_waiting_on_a_model_is_told_when_it_is_slow_and_what_happens(
    session_key, settings
) -> None:
    settings.SLOW_AGENT_NOTICE_SECONDS = 5
    settings.LIVE_AGENT_TURN_SECONDS = 45
    seats = [
        {"kind": "human", "session_key": session_key},
        {"kind": "agent", "agent_spec": "offline:kb"},
    ]
    table = services.create_table("twenty-questions", None, seats, agent_delay_seconds=2)
    assert 'id="slow-agent"' not in render_board(services.table_state(table.pk), 0)  # my turn
    # The question is in the log and the oracle has not answered yet (its job is elsewhere).
    asked = Turn.objects.create(
        table=table,
        seq=0,
        seat=0,
        event={"type": "question", "seat": 0, "text": "Is it alive?"},
        created_at=timezone.now(),
    )
    board = render_board(services.table_state(table.pk), 0)  # just asked: hidden for 5 s
    notice = re.search(r'<p class="notice" role="status" id="slow-agent"([^>]*)>(.*?)</p>', board)
    assert notice and 'data-show-after="5" hidden' in notice[1]
    assert "The other player is taking longer than usual" in notice[2]
    assert 'data-seconds-left="47"' in notice[2]  # its pause and the live budget
    assert "your question is withdrawn (it is not counted) and you can ask again" in notice[2]
    # A board rendered 10 s later (a reconnect, a heartbeat's catch-up): shown at once.
    Turn.objects.filter(pk=asked.pk).update(created_at=timezone.now() - timedelta(seconds=10))
    notice = re.search(
        r'id="slow-agent"([^>]*)>(.*?)</p>', render_board(services.table_state(table.pk), 0)
    )
    assert "hidden" not in notice[1] and 'data-seconds-left="37"' in notice[2]
