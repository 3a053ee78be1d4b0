"""Model seats at tables: providers from settings, usage stored per turn and read by analysis,
failed calls that fall back instead of stalling, policies in the prompt, and local models.

The models are the loopback fake server driven by the real SDKs (or a tiny local model built from
code); agent turns run inline, as with no server loop."""

from __future__ import annotations

import itertools
import logging
import time

import pytest

from studyapp.dashboard.records import agent_frames, table_records
from studyapp.tables import pace, services, think
from studyapp.tables.models import PolicyRecord, Table, Turn
from tests.fakes.llm_server import FakeLLMServer, prompt_text
from tests.studyapp.tables.test_tables_eager_and_celery import (  # noqa: F401 (fixtures)
    celery_mode,
    executor,
    stream,
)

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("close_model_clients"),
]

APPLE = {"answer": "Apple", "max_questions": 20}
ORACLE = {"kind": "agent", "agent_spec": "offline:kb"}
POLICY = "Ask about living things before anything else."


@pytest.fixture
def site(settings, llm_server: FakeLLMServer) -> FakeLLMServer:
    """The site's settings point every API provider at the loopback server."""
    settings.OPENAI_BASE_URL = llm_server.openai_base_url
    settings.OPENAI_API_KEY = "site-openai-key"
    # A compatible server gets its own key, never OpenAI's (docs/production.md).
    settings.OPENAI_COMPATIBLE_API_KEY = "site-compatible-key"
    settings.ANTHROPIC_BASE_URL = llm_server.anthropic_base_url
    settings.ANTHROPIC_API_KEY = "site-anthropic-key"
    return llm_server


def sent_chars(body: dict) -> int:
    """Characters of everything a request showed the model (system text and every message)."""
    messages = sum(len(m["content"]) for m in body["messages"])
    return len(body.get("system") or "") + messages


def turns(table: Table) -> list[Turn]:
    return list(Turn.objects.filter(table=table).order_by("seq"))


@pytest.mark.parametrize(
    ("spec", "key"),
    [
        ("openai-compatible:fake-model", "site-compatible-key"),
        ("anthropic:fake-claude", "site-anthropic-key"),
    ],
)
def test_a_model_seat_plays_through_the_site_settings_and_its_usage_is_stored(
    site: FakeLLMServer, spec: str, key: str
) -> None:
    site.responder = lambda body: "Thinking... <answer>Is it an apple?</answer>"
    table = services.create_table(
        "twenty-questions", APPLE, [{"kind": "agent", "agent_spec": spec}, ORACLE]
    )
    table.refresh_from_db()
    assert table.status == Table.Status.FINISHED  # the guess at question 1 ends the game
    [turn] = turns(table)
    assert turn.event == {"type": "question", "seat": 0, "text": "Is it an apple?"}
    [request] = site.requests
    headers = {name.lower(): value for name, value in request.headers.items()}
    assert key in (headers.get("authorization", "") + headers.get("x-api-key", ""))
    reply = "Thinking... <answer>Is it an apple?</answer>"
    assert turn.usage["calls"] == 1 and "error" not in turn.usage
    assert turn.usage["input_chars"] == sent_chars(request.body)
    assert turn.usage["output_chars"] == len(reply)
    assert turn.usage["input_tokens"] == len(prompt_text(request.body)) // 4 + 1
    assert turn.usage["output_tokens"] == len(reply) // 4 + 1

    games = agent_frames()["games"]
    row = games[games["table"] == str(table.pk)].iloc[0]
    assert row["chars"] == sent_chars(request.body) + len(reply)
    assert row["tokens"] == turn.usage["input_tokens"] + turn.usage["output_tokens"]
    assert row["calls"] == 1 and row["player"] == spec


def test_offline_tables_record_no_usage() -> None:
    table = services.create_table(
        "twenty-questions",
        APPLE,
        [{"kind": "agent", "agent_spec": "offline:infogain"}, ORACLE],
    )
    assert all(turn.usage == {} for turn in turns(table))
    [record] = table_records(Table.objects.filter(pk=table.pk))
    assert record["usage"] is None


def test_a_failing_model_falls_back_and_the_table_goes_on(
    site: FakeLLMServer, caplog: pytest.LogCaptureFixture
) -> None:
    site.server_error_share = 1.0
    with caplog.at_level(logging.WARNING, logger="studyapp.tables"):
        table = services.create_table(
            "twenty-questions",
            APPLE,
            [{"kind": "agent", "agent_spec": "openai-compatible:down"}, ORACLE],
        )
    table.refresh_from_db()
    assert table.status == Table.Status.FINISHED  # every question fell back, none stalled
    first = turns(table)[0]
    engine = services.table_state(table).engine
    assert first.event == engine.fallback(engine.initial(table.config), 0)
    assert "InternalServerError" in first.usage["error"]
    assert first.usage["calls"] == 1 and first.usage["retries"] == 4  # the SDK's own retries
    assert site.faults()["500"] == 5 * sum(1 for t in turns(table) if t.seat == 0)
    assert any("could not move" in message for message in caplog.messages)


def test_a_seat_that_cannot_be_built_falls_back_with_the_reason(tmp_path) -> None:
    table = services.create_table(
        "twenty-questions",
        APPLE,
        [{"kind": "agent", "agent_spec": f"local:{tmp_path / 'missing'}"}, ORACLE],
    )
    table.refresh_from_db()
    assert table.status == Table.Status.FINISHED
    first = turns(table)[0]
    assert first.event["type"] == "question" and first.usage["error"]
    assert "local:" in first.usage["error"]


def test_a_seat_with_a_policy_shows_it_to_the_model(site: FakeLLMServer) -> None:
    site.responder = lambda body: "<answer>Is it an apple?</answer>"
    record = PolicyRecord.add(name="tq-living", game="twenty-questions", kind="rule", text=POLICY)
    plain = services.create_table(
        "twenty-questions", APPLE, [{"kind": "agent", "agent_spec": "openai-compatible:m"}, ORACLE]
    )
    with_policy = services.create_table(
        "twenty-questions",
        APPLE,
        [{"kind": "agent", "agent_spec": "openai-compatible:m", "policy": record}, ORACLE],
    )
    without, with_it = (prompt_text(request.body) for request in site.requests)
    assert POLICY not in without and POLICY in with_it
    [record_plain] = table_records(Table.objects.filter(pk=plain.pk))
    [record_policy] = table_records(Table.objects.filter(pk=with_policy.pk))
    assert record_plain["setting"] == "none" and record_plain["policy"] is None
    assert record_policy["setting"] == "rule-policy" and record_policy["policy"] == POLICY


@pytest.mark.ttra
def test_a_local_model_plays_a_turn(tmp_path, session_key: str) -> None:
    pytest.importorskip("transformers")
    pytest.importorskip("trl")
    from studyapp.pipelines.ttra.tiny import build_tiny_model

    model = build_tiny_model(tmp_path / "model")
    oracle = {"kind": "agent", "agent_spec": f"local:{model}"}
    table = services.create_table(
        "twenty-questions", APPLE, [{"kind": "human", "session_key": session_key}, oracle]
    )
    services.submit(table, 0, {"type": "question", "text": "Is it a fruit?"})
    # The tiny local oracle answered, or (no usable reply) withdrew the question and said why;
    # either way the human asks next.
    question, answer = turns(table)
    assert answer.seat == 1 and question.usage == {}
    if answer.event["type"] == "answer":
        assert "error" not in answer.usage
    else:
        assert answer.event["type"] == "void" and answer.usage["error"] and answer.usage["reply"]
    assert answer.usage["calls"] >= 1 and answer.usage["input_tokens"] > 0
    assert answer.usage["output_chars"] > 0
    assert services.table_state(table).waiting_for() == [0]


def test_at_a_table_with_people_a_failed_clue_is_a_sentence_not_a_pass(site: FakeLLMServer) -> None:
    """Issue 31: a person's clue form cannot pass, so a model seat that fails at a table with
    people gives the offline agent's sentence instead of passing (which would tell a blinded
    table that the seat is an agent); the failure stays in the turn's usage."""
    site.server_error_share = 1.0
    seats = [{"kind": "agent", "agent_spec": "openai-compatible:down"}]
    seats += [{"kind": "agent", "agent_spec": "offline:kb"}] * 3
    seats += [{"kind": "human", "session_key": "person"}]
    table = services.create_table("undercover", None, seats, seed=3, agents_disclosed=False)
    first = turns(table)[0]
    assert first.seat == 0 and first.event["type"] == "clue"
    assert first.event["text"]  # worded as people word theirs (issue 42: no fixed frame)
    assert "InternalServerError" in first.usage["error"]
    assert "an offline clue stood in" in first.usage["error"]


def test_at_a_german_table_a_failed_clue_is_a_german_sentence(site: FakeLLMServer) -> None:
    """The failure's stand-in speaks the table's language: at a table in German a model seat
    that fails gives one of the German vague sentences (games/languages), never an English one,
    however long the game; the failure stays in the turn's usage."""
    from games.cases import case_config
    from games.undercover.agents import vague_sentences
    from games.undercover.engine import normalise

    site.server_error_share = 1.0
    seats = [{"kind": "agent", "agent_spec": "openai-compatible:down"}] * 4
    seats += [{"kind": "human", "session_key": "person"}]
    config = case_config("undercover", 3, 0, language="de", players=5)
    table = services.create_table(
        "undercover",
        config,
        seats,
        seed=3,
        agents_disclosed=False,
        language="de",
        replacement_spec="openai-compatible:down",
    )
    clues = [t for t in turns(table) if t.event["type"] == "clue"]
    assert [t.seat for t in clues] == [0, 1, 2, 3]  # the person (seat 4) is asked next
    german = {normalise(text) for text in vague_sentences("de")}
    english = {normalise(text) for text in vague_sentences("en")}
    for turn in clues:  # in the seat's style: its capital and stop may differ (issue 42)
        assert normalise(turn.event["text"]) in german - english
        assert "an offline clue stood in" in turn.usage["error"]
    assert len({t.event["text"] for t in clues}) == 4  # never said twice at a table


def test_a_german_table_refuses_the_sites_english_replacement(settings) -> None:
    """A German table that names no replacement would hand a person's seat to the site's
    default agent: an offline one (English only) is refused at creation with the reason; a
    table that never hands a seat over (dropout end, no lobby) needs none."""
    from games.cases import case_config

    settings.DEFAULT_AGENT_SPEC = "offline:kb"
    seats = [{"kind": "agent", "agent_spec": "openai-compatible:m"}] * 4
    seats += [{"kind": "human", "session_key": "person"}]
    config = case_config("undercover", 3, 0, language="de", players=5)
    with pytest.raises(ValueError, match="offline:kb plays in English only"):
        services.create_table("undercover", config, seats, language="de")
    table = services.create_table("undercover", config, seats, language="de", dropout="end")
    assert table.options["dropout"] == "end"


def test_a_failed_question_reads_in_the_tables_language(site: FakeLLMServer) -> None:
    """A model questioner that fails asks the engine's fallback question: a German oracle sees
    it written in German on the board, not the English placeholder."""
    from games.cases import case_config
    from studyapp.tables.rendering import render_board

    site.server_error_share = 1.0
    config = case_config("twenty-questions", 3, 0, language="de", max_questions=2)
    seats = [
        {"kind": "agent", "agent_spec": "openai-compatible:down"},
        {"kind": "human", "session_key": "oracle"},
    ]
    table = services.create_table("twenty-questions", config, seats, language="de", dropout="end")
    first = turns(table)[0]
    assert first.event["type"] == "question" and "error" in first.usage
    board = render_board(services.table_state(table.pk), 1)
    assert "(keine Frage)" in board and "(no question)" not in board


# --- a blinded vote's model ballots (issue 48: no timing tell; issue 49: asked once) -----------

VOTE_PROMPT = "It is time to vote"
VOTE_BOUNDS = [2, 6]
LATENCY = 1.5


def wait_for(check, seconds: float = 30.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.05)
    return False


@pytest.mark.usefixtures("executor")
def test_a_blinded_votes_model_ballots_land_each_at_its_own_draw_not_a_model_call_apart(
    site: FakeLLMServer,
) -> None:
    """Three model seats, an offline agent and a person at a blinded table whose provider answers
    every call in a fixed 1.5 s, on the production path (the steps' Redis stream and a real
    executor). When the vote opens the models are asked at once, and each agent's ballot (the
    offline one's too) lands at its own draw of a person's ballot time counted from the vote's
    opening, not one model call (or no time at all) after the ballot before it; the person's
    ballot, cast between two of them, costs no model call: each seat's ballot is asked of the
    model once."""
    numbers = itertools.count()

    def responder(body: dict) -> str:
        if VOTE_PROMPT in prompt_text(body):
            return "Reasoning. <answer>4</answer>"
        return f"Reasoning. <answer>Idea number {next(numbers)} about it.</answer>"

    site.responder = responder
    seats = [{"kind": "agent", "agent_spec": "openai-compatible:fake-model"}] * 3
    seats += [{"kind": "agent", "agent_spec": "offline:kb"}]
    seats += [{"kind": "human", "session_key": "person"}]
    bounds = {kind: [0, 0] for kind in think.MOVE_KINDS}
    table = services.create_table(
        "undercover",
        None,
        seats,
        seed=2,
        agents_disclosed=False,
        turn_deadline_seconds=120,
        agent_think_seconds={**bounds, "vote": VOTE_BOUNDS, "timed_out": 0},
        think_seed=11,
    )
    for n in range(3):  # the person speaks last in each of the three speaking rounds
        assert wait_for(lambda: services.table_state(table.pk).waiting_for() == [4])
        if n == 2:
            site.latency = LATENCY  # from the vote on, every model call takes 1.5 s
        services.submit(table.pk, 4, {"type": "clue", "text": f"My own remark {n} on it."})
    opened = Turn.objects.get(table=table, seq=14).created_at  # the clue that opened the vote
    assert wait_for(lambda: Turn.objects.filter(table=table, event__type="vote").exists())
    services.submit(table.pk, 4, {"type": "vote", "target": 0})  # between the models' ballots
    assert wait_for(lambda: Turn.objects.filter(table=table, event__type="vote").count() == 5)
    site.latency = 0.0
    ballots = list(Turn.objects.filter(table=table, event__type="vote", seat__lt=4).order_by("seq"))
    seed = pace.think_seed(table)
    for ballot in ballots:  # each at its own draw from the vote's opening (draws above 1.5 s)
        drawn = think.think_seconds(seed, f"vote:15:{ballot.seat}", VOTE_BOUNDS)
        landed = (ballot.created_at - opened).total_seconds()
        assert landed == pytest.approx(drawn, abs=0.6), (ballot.seat, landed, drawn)
    gaps = [(b.created_at - a.created_at).total_seconds() for a, b in itertools.pairwise(ballots)]
    assert not any(abs(gap - LATENCY) < 0.15 for gap in gaps), gaps  # not a model call apart
    asked = [r for r in site.requests if VOTE_PROMPT in prompt_text(r.body)]
    assert len(asked) == 3  # one call per model seat's ballot, none asked again


def test_a_clue_said_again_in_other_words_is_refused_and_the_model_asked_again(
    site: FakeLLMServer,
) -> None:
    """Issue 48: the rules refuse a repeated clue from every seat, in other words too (rules
    version 2); a model that repeats one is asked again with the reason, like any illegal
    move, and its next clue is the one the table shows."""
    replies = iter(["poured over cereal", "You pour it over cereal.", "Golden and sticky"])
    site.responder = lambda body: f"Reasoning. <answer>{next(replies, 'A new thing')}</answer>"
    seats = [{"kind": "agent", "agent_spec": "openai-compatible:fake-model"}] * 2
    seats += [{"kind": "human", "session_key": "person"}] * 3
    table = services.create_table("undercover", None, seats, seed=4, agent_delay_seconds=0)
    first, second = turns(table)[:2]
    assert first.event["text"] == "poured over cereal"
    assert second.event["text"] == "Golden and sticky"
    asked_again = prompt_text(site.requests[2].body)
    assert "already given in other words" in asked_again
    assert table.config["rules_version"] == "2"


@pytest.mark.parametrize("in_form", [False, True])
def test_a_studys_clue_form_for_models_is_off_unless_asked_and_recorded_per_clue(
    site: FakeLLMServer, in_form: bool
) -> None:
    """The form rules that keep offline clues free of fixed openings reach model seats only when
    the study asks (``model_clue_form``): a model's own words are what a study measures. When on,
    the clue loses its lead-in, and its turn records the model's own text."""
    site.responder = lambda body: "Reasoning. <answer>My clue: Golden and sticky.</answer>"
    seats = [{"kind": "agent", "agent_spec": "openai-compatible:fake-model"}]
    seats += [{"kind": "human", "session_key": "person"}] * 4
    options = {"model_clue_form": True} if in_form else {}
    table = services.create_table("undercover", None, seats, seed=4, **options)
    [clue] = turns(table)
    if not in_form:
        assert clue.event["text"] == "My clue: Golden and sticky."
        assert "clue_form" not in clue.usage
        return
    assert clue.event["text"].lower().rstrip(".") == "golden and sticky"
    assert clue.usage["clue_form"] == {
        "rule": "people",
        "model_text": "My clue: Golden and sticky.",
    }
