"""``manage.py study plan SLUG --places N [--json]``: the games, model calls, tokens and cost per
model, Prolific's share and the duration, before anyone is paid."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command
from launch_helpers import MODEL, undercover_study

from studyapp.participants import spend_plan, table_study
from studyapp.tables.models import Table, Turn
from tests.fakes.prolific_server import FakeProlific

pytestmark = pytest.mark.django_db


def plan(*args: str) -> dict:
    out = io.StringIO()
    call_command("study", "plan", *args, "--json", stdout=out)
    return json.loads(out.getvalue())


def test_the_plan_counts_the_model_calls_of_every_table_from_the_design(settings):
    settings.PROLIFIC_API_TOKEN = ""
    study = undercover_study()
    report = plan(study.slug, "--places", "10")
    assert report["games"] == 20  # ten people, one to a table, two rounds
    row = report["models"][MODEL]
    # four model agents: three clues and a ballot each per round of play, more rounds when the
    # vote misses (the loopback games of the issue measured 22.6 calls a table)
    assert 16 * 20 <= row["calls"] <= 40 * 20
    assert row["input_tokens"] > row["output_tokens"] > 0
    assert row["cost"] is None and "no price" in row["note"]
    assert report["cost"] is None and report["total_cost"] is None
    assert report["prolific"]["rewards"] == "45.00"
    assert report["duration_minutes"]["per_person"] == 25


def test_the_plan_prices_each_model_at_the_study_price_and_adds_prolific_fee(settings):
    settings.PROLIFIC_API_TOKEN = ""
    settings.PROLIFIC_FEE_RATE = "0.5"
    study = undercover_study(model_prices={MODEL: ["1.00", "2.00"]}, model_budget="1000.00")
    report = plan(study.slug, "--places", "4")
    row = report["models"][MODEL]
    expected = (row["input_tokens"] * 1 + row["output_tokens"] * 2) / 1_000_000
    assert abs(float(row["cost"]) - expected) < 0.01
    assert report["prolific"]["total"] == "27.00"  # 4.50 × 4 and half of it again
    assert report["within_budget"] is True
    assert float(report["total_cost"]) == pytest.approx(float(report["cost"]) + 27.0)


def test_the_plan_asks_prolific_cost_calculator_when_a_token_is_set(settings):
    study = undercover_study()
    with FakeProlific() as server:
        settings.PROLIFIC_API_TOKEN = server.token
        settings.PROLIFIC_API_URL = server.url
        report = plan(study.slug, "--places", "10")
    assert report["prolific"]["total"] == "63.90"  # 450 cents × 10 × 1.42
    assert "calculator" in report["prolific"]["source"]
    assert [path for _, path, _ in server.requests] == ["/api/v1/study-cost-calculator/"]  # once
    assert server.requests[-1][2] == {"reward": 450, "total_available_places": 10}


def test_the_plan_as_text_names_each_model_and_says_one_has_no_price(settings):
    settings.PROLIFIC_API_TOKEN = ""
    study = undercover_study()
    out = io.StringIO()
    call_command("study", "plan", study.slug, "--places", "3", stdout=out)
    text = out.getvalue()
    assert MODEL in text and "no price" in text and "Prolific:" in text


def test_it_refuses_a_plan_for_no_places():
    study = undercover_study()
    with pytest.raises(CommandError, match="--places"):
        call_command("study", "plan", study.slug, "--places", "0")


def test_a_twenty_questions_plan_takes_every_game_to_its_question_cap(settings, study):
    settings.PROLIFIC_API_TOKEN = ""
    study.oracle_spec = MODEL
    study.save()
    report = plan(study.slug, "--places", "3")
    assert report["games"] == 6  # one person a table, two rounds
    assert report["models"][MODEL]["calls"] == 6 * 20  # each question one oracle call


def finish_tables(study, count: int = 3) -> None:
    """``count`` finished tables of the study, each of ten model calls of 500 and 20 tokens."""
    for _ in range(count):
        table = Table.objects.create(game="undercover", config={}, status="finished")
        table_study.record(table, {table_study.STUDY: study.slug})
        for seq in range(10):
            Turn.objects.create(
                table=table, seq=seq, seat=1, event={"type": "clue"}, actor=MODEL,
                usage={"calls": 1, "input_tokens": 500, "output_tokens": 20},
            )  # fmt: skip


def test_the_shown_plan_is_fresh_once_a_table_finishes_or_the_study_changes(settings):
    settings.PROLIFIC_API_TOKEN = ""
    study = undercover_study(places=5)
    assert spend_plan.shown_plan(study)["source"].startswith("estimated")
    finish_tables(study)
    shown = spend_plan.shown_plan(study)
    assert shown["source"].startswith("measured") and shown["models"][MODEL]["calls"] == 100
    study.rounds = 1
    study.save()
    assert spend_plan.shown_plan(study)["models"][MODEL]["calls"] == 50


def test_the_plan_takes_the_study_own_tables_once_it_has_some(settings):
    settings.PROLIFIC_API_TOKEN = ""
    study = undercover_study()
    finish_tables(study)
    report = plan(study.slug, "--places", "5")
    assert report["source"].startswith("measured")
    assert report["models"][MODEL] == {**report["models"][MODEL], "calls": 100,
        "input_tokens": 50_000, "output_tokens": 2_000}  # fmt: skip


def test_study_spend_shows_the_plan_for_the_study_places_beside_the_spend(settings):
    settings.PROLIFIC_API_TOKEN = ""
    study = undercover_study(places=5)
    finish_tables(study)
    out = io.StringIO()
    call_command("study", "spend", study.slug, "--json", stdout=out)
    report = json.loads(out.getvalue())
    assert report["plan"] == plan(study.slug, "--places", "5")
    out = io.StringIO()
    call_command("study", "spend", study.slug, stdout=out)
    assert "spent so far: 30 calls" in out.getvalue()
    assert f"plan of {study.slug} for 5 place(s)" in out.getvalue()
