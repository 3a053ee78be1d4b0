"""Every move a model seat did not make itself says why, in the turn's usage.

Tables of model seats play against the loopback server while it answers with garbage (no tag),
unusable answers, moves the engine refuses, and HTTP 500s after the SDK's retries. Afterwards no
stand-in move (an Invalid question, a withdrawn question, a passed clue, an abstained vote) may be
left without an ``error``."""

from __future__ import annotations

import random
import re
import threading

import pytest

from games.twenty_questions.engine import NO_QUESTION
from studyapp.tables import services
from studyapp.tables.models import Table, Turn
from tests.fakes.llm_server import FakeLLMServer, last_user_text

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("close_model_clients"),
]


@pytest.fixture
def faulty(settings, llm_server: FakeLLMServer) -> FakeLLMServer:
    """A server that misbehaves one call in three, seeded so a run is repeatable."""
    settings.OPENAI_BASE_URL = llm_server.openai_base_url
    settings.OPENAI_API_KEY = "site-openai-key"
    settings.AGENT_DELAY_SECONDS = 0
    llm_server.server_error_share = 0.1
    llm_server.retry_after = 0
    draw = random.Random(7)
    lock = threading.Lock()

    def responder(body: dict) -> str:
        text = last_user_text(body)
        word = re.search(r'Your secret word is "([^"]+)"', text)
        with lock:
            roll = draw.random()
            n = draw.randrange(1000)
        if roll < 0.2:
            return "I would rather not play."  # no tag at all
        if roll < 0.35:
            return "<answer></answer>"  # an empty answer
        if word and (roll < 0.5 or ("was not accepted" in text and roll < 0.9)):
            return f"<answer>My word is {word.group(1)}.</answer>"  # the engine refuses it
        if "vote" in text.lower() and "time to vote" in text:
            return f"<answer>{n % 7}</answer>"  # sometimes oneself or no one at the table
        if word:
            return f"<answer>Something people talk about, number {n}.</answer>"
        if "secret word is" in text:  # the oracle
            return "<answer>Maybe</answer>" if roll < 0.6 else "<answer>No</answer>"
        return f"<answer>Is it thing number {n}?</answer>"

    llm_server.responder = responder
    return llm_server


def stand_in(event: dict) -> bool:
    kind = event["type"]
    return (
        kind == "void"
        or (kind == "question" and event["text"] == NO_QUESTION)
        or (kind == "clue" and event["text"] is None)
        or (kind == "vote" and event["target"] is None)
    )


def unexplained(tables: list[Table]) -> tuple[int, list[Turn]]:
    turns = list(Turn.objects.filter(table__in=tables).order_by("table", "seq"))
    stand_ins = [turn for turn in turns if turn.event["type"] != "abort" and stand_in(turn.event)]
    return len(stand_ins), [turn for turn in stand_ins if not turn.usage.get("error")]


def test_undercover_model_seats_explain_every_stand_in_move(faulty: FakeLLMServer) -> None:
    seats = [{"kind": "agent", "agent_spec": "openai-compatible:fake"}] * 5
    tables = [services.create_table("undercover", None, seats, seed=seed) for seed in range(3)]
    for table in tables:
        table.refresh_from_db()
        assert table.status == Table.Status.FINISHED
    count, missing = unexplained(tables)
    assert count > 10 and missing == []
    errors = Turn.objects.filter(table__in=tables, usage__has_key="error")
    # a clue that said the word, refused three times, is explained with the engine's reason
    assert any("moves refused" in turn.usage["error"] for turn in errors)
    assert faulty.faults()["500"] > 0


def test_twenty_questions_model_seats_explain_every_stand_in_move(faulty: FakeLLMServer) -> None:
    seats = [
        {"kind": "agent", "agent_spec": "openai-compatible:asker"},
        {"kind": "agent", "agent_spec": "openai-compatible:oracle"},
    ]
    tables = [
        services.create_table("twenty-questions", None, seats, seed=seed, max_oracle_failures=50)
        for seed in range(2)
    ]
    count, missing = unexplained(tables)
    assert count > 5 and missing == []
    voids = Turn.objects.filter(table__in=tables, event__type="void")
    assert voids.exists() and all(turn.usage["error"] for turn in voids)
    assert any(turn.usage.get("reply") for turn in voids)
