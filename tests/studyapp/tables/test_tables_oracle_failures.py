"""An answering model that fails costs the participant nothing: the question is withdrawn, the
page says so, and after a few failures in a row the table pauses until staff resume it.

The models are the loopback fake server driven by the real SDKs; agent turns run inline (no
server loop), except in the socket test, where they run on the test's loop as under daphne."""

from __future__ import annotations

import json

import pytest
from channels.db import database_sync_to_async
from django.contrib.auth.models import User
from django.test import Client

from games.base import IllegalMove
from games.llm.providers import close_clients
from studyapp.tables import driver, services
from studyapp.tables.models import Table, Turn
from studyapp.tables.rendering import render_board
from tests.fakes.llm_server import FakeLLMServer
from tests.studyapp.tables.conftest import make_session, socket

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("close_model_clients"),
]

APPLE = {"answer": "Apple", "max_questions": 20}
NOTICE = "The answering side is unavailable; your question was not counted. Please try again."


@pytest.fixture
def site(settings, llm_server: FakeLLMServer) -> FakeLLMServer:
    settings.OPENAI_BASE_URL = llm_server.openai_base_url
    settings.OPENAI_API_KEY = "site-openai-key"
    return llm_server


def person_and_model(session_key: str, spec: str = "openai-compatible:oracle", **options) -> Table:
    seats = [{"kind": "human", "session_key": session_key}, {"kind": "agent", "agent_spec": spec}]
    return services.create_table("twenty-questions", APPLE, seats, agent_delay_seconds=0, **options)


def ask(table: Table, text: str = "Is it alive?") -> None:
    services.submit(table, 0, {"type": "question", "text": text})


def turns(table: Table) -> list[Turn]:
    return list(Turn.objects.filter(table=table).order_by("seq"))


def test_a_failing_oracle_withdraws_the_question_and_the_page_says_so(
    site: FakeLLMServer, session_key: str
) -> None:
    site.server_error_share = 1.0
    table = person_and_model(session_key)
    ask(table)
    question, void = turns(table)
    assert void.event["type"] == "void" and void.seat == 1
    assert "InternalServerError" in void.usage["error"] and void.event["reason"]
    snap = services.table_state(table)
    assert snap.state.turns == () and snap.waiting_for() == [0]  # not counted; ask again
    board = render_board(snap, 0)
    assert NOTICE in board and 'id="questions-asked">0<' in board
    site.server_error_share = 0.0
    site.responder = lambda body: "<answer>No</answer>"
    ask(table)
    board = render_board(services.table_state(table), 0)
    assert NOTICE not in board and 'id="questions-asked">1<' in board


@pytest.mark.parametrize(
    "spec, reason",
    [
        ("gpt4o", "spec"),  # a mistyped spec
        ("local:/nowhere/at/all", "local:"),  # a folder with no model
    ],
)
def test_an_oracle_that_cannot_be_built_voids_with_the_reason(
    session_key: str, spec: str, reason: str
) -> None:
    table = person_and_model(session_key, spec)
    ask(table)
    void = turns(table)[-1]
    assert void.event["type"] == "void" and reason in void.usage["error"]
    assert services.table_state(table).state.turns == ()


def test_a_missing_key_voids_instead_of_answering_invalid(settings, session_key: str) -> None:
    settings.OPENAI_API_KEY = ""
    table = person_and_model(session_key, "openai:gpt-4o")
    ask(table)
    void = turns(table)[-1]
    assert void.event["type"] == "void" and void.usage["error"]


def test_an_oracle_reply_without_an_answer_is_explained_with_the_reply(
    site: FakeLLMServer, session_key: str
) -> None:
    site.responder = lambda body: "Hmm, hard to say. <answer>Perhaps</answer>"
    table = person_and_model(session_key)
    ask(table)
    void = turns(table)[-1]
    assert void.event["type"] == "void" and "'Perhaps' is not usable" in void.usage["error"]
    assert void.usage["reply"] == "Hmm, hard to say. <answer>Perhaps</answer>"
    assert void.usage["calls"] == 2  # the reply and one corrective follow-up


def test_the_table_pauses_after_the_configured_failures_and_staff_resume_it(
    site: FakeLLMServer, session_key: str
) -> None:
    site.server_error_share = 1.0
    table = person_and_model(session_key, max_oracle_failures=2)
    ask(table)
    table.refresh_from_db()
    assert table.status == Table.Status.PLAYING
    ask(table, "Is it red?")
    table.refresh_from_db()
    assert table.status == Table.Status.PAUSED
    snap = services.table_state(table)
    assert snap.waiting_for() == [] and 'id="paused"' in render_board(snap, 0)
    with pytest.raises(IllegalMove, match="paused"):
        ask(table, "Is it blue?")
    assert len(turns(table)) == 4
    site.server_error_share = 0.0
    site.responder = lambda body: "<answer>Yes</answer>"
    assert driver.resume(table.pk) and not driver.resume(table.pk)
    ask(table, "Is it a fruit?")
    table.refresh_from_db()
    assert table.status == Table.Status.PLAYING
    assert turns(table)[-1].event == {"type": "answer", "seat": 1, "answer": "Yes"}


def test_a_resume_is_logged_and_the_count_of_failures_starts_again(
    site: FakeLLMServer, session_key: str
) -> None:
    site.server_error_share = 1.0
    table = person_and_model(session_key, max_oracle_failures=2)
    ask(table)
    ask(table, "Is it red?")
    assert driver.resume(table.pk)
    assert turns(table)[-1].event == {"type": "resume", "by": "staff"}
    ask(table, "Is it blue?")  # one more failure: not two in a row since the resume
    table.refresh_from_db()
    assert table.status == Table.Status.PLAYING
    ask(table, "Is it green?")
    table.refresh_from_db()
    assert table.status == Table.Status.PAUSED


def test_a_player_cannot_send_a_resume_or_a_void(session_key: str) -> None:
    table = person_and_model(session_key, "offline:kb")
    for action in ({"type": "resume"}, {"type": "void", "reason": "x"}):
        with pytest.raises(IllegalMove, match="Players cannot send that"):
            services.submit(table, 0, action)


def test_the_default_limit_comes_from_settings(
    settings, site: FakeLLMServer, session_key: str
) -> None:
    settings.MAX_ORACLE_FAILURES = 1
    site.server_error_share = 1.0
    table = person_and_model(session_key)
    ask(table)
    table.refresh_from_db()
    assert table.status == Table.Status.PAUSED


def test_staff_resume_a_paused_table_from_the_live_monitor(
    site: FakeLLMServer, session_key: str
) -> None:
    site.server_error_share = 1.0
    table = person_and_model(session_key, max_oracle_failures=1)
    ask(table)
    staff = Client()
    staff.force_login(User.objects.create_user("researcher", password="x", is_staff=True))
    page = staff.get("/dashboard/tables/").content.decode()
    assert f'id="resume-{table.pk}"' in page and "1 paused" in page
    assert Client().post(f"/dashboard/tables/{table.pk}/resume/").status_code == 302
    table.refresh_from_db()
    assert table.status == Table.Status.PAUSED  # an anonymous post was sent to the login page
    response = staff.post(f"/dashboard/tables/{table.pk}/resume/")
    assert response.status_code == 302
    table.refresh_from_db()
    assert table.status == Table.Status.PLAYING


@database_sync_to_async
def failing_table(session_key: str, server: FakeLLMServer) -> Table:
    from django.conf import settings

    settings.OPENAI_BASE_URL = server.openai_base_url
    settings.OPENAI_API_KEY = "site-openai-key"
    return person_and_model(session_key)


async def test_the_participant_socket_shows_the_question_was_not_counted(
    llm_server: FakeLLMServer, settings
) -> None:
    llm_server.server_error_share = 1.0
    key = await make_session()
    table = await failing_table(key, llm_server)
    communicator = socket(table.pk, key)
    assert (await communicator.connect())[0]
    await communicator.receive_from(timeout=5)
    await communicator.send_to(text_data=json.dumps({"type": "question", "text": "Is it big?"}))
    frames = []
    while NOTICE not in "".join(frames):
        frames.append(await communicator.receive_from(timeout=20))
    assert 'id="question-text"' in frames[-1]  # the participant may ask again
    assert 'id="questions-asked">0<' in frames[-1]
    await communicator.disconnect()
    await close_clients()
