"""A study's model budget (``model_budget``): the spend so far adds up its tables' recorded
usage per model; once the next table could pass the budget, no table opens with a priced model
(the stand-in takes its seats and the table says so, or the study shows as full), staff are told
once (a log line, the admin page, /healthz); the study file and the admin validate the budget and
the prices as amounts; the export's usage.csv carries the spend beside the plan; and the study
admin's actions draft, check and publish the Prolific study."""

from __future__ import annotations

import io
import json
import logging
import tempfile
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import pandas as pd
import pytest
from django.core.management import call_command
from django.urls import reverse
from django.utils import timezone
from launch_helpers import MODEL, undercover_study
from test_study_designs import admin_post
from test_study_files import apply_text

from studyapp.dashboard.exporting import export_study
from studyapp.participants import assignment, budget, spend, study_tables, table_study
from studyapp.participants import design as designs
from studyapp.participants.management.commands.pilot import pilot_report
from studyapp.participants.models import Study
from studyapp.participants.pilot_bot import BotResult
from studyapp.tables.models import Table, Turn
from tests.fakes.prolific_server import FakeProlific

pytestmark = pytest.mark.django_db

PRICES = {MODEL: ["10.00", "10.00"]}  # per million tokens


def played(study, calls: int, tokens: int, status: str = "finished") -> Table:
    """A table of the study whose model agents made ``calls`` calls of ``tokens`` in and out."""
    table = Table.objects.create(game="undercover", config={}, status=status)
    table_study.record(table, {table_study.STUDY: study.slug})
    for seq in range(calls):
        Turn.objects.create(
            table=table,
            seq=seq,
            seat=1,
            event={"type": "clue", "seat": 1, "text": "x"},
            actor=MODEL,
            usage={"calls": 1, "input_tokens": tokens, "output_tokens": tokens},
        )
    Turn.objects.create(table=table, seq=calls, seat=0, event={"type": "clue"}, actor="person")
    return table


def test_the_spend_adds_up_each_model_calls_tokens_and_cost():
    study = undercover_study(model_prices=PRICES)
    played(study, 20, 1000)
    played(study, 5, 1000, status="playing")
    spent = spend.of_study(study)
    row = spent.models[MODEL]
    assert (row.calls, row.input_tokens, row.output_tokens) == (25, 25_000, 25_000)
    assert str(row.cost) == "0.5000"  # 50 000 tokens at 10 a million
    assert spent.tables == 2 and spent.finished_tables == 1


def test_past_the_budget_a_new_table_seats_the_stand_in_and_staff_are_told_once(caplog):
    study = undercover_study(model_prices=PRICES, model_budget="0.40", over_budget="stand-in")
    seats = study_tables.seat_list(designs.effective(study)["design"])
    kept, options = budget.seats_within(study, seats, {"replacement_spec": "offline:kb"})
    assert kept == seats and table_study.BUDGET_STAND_IN not in options
    played(study, 20, 1000)  # 0.40 spent: the next table could pass the budget
    caplog.set_level(logging.WARNING)
    changed, options = budget.seats_within(study, seats, {"replacement_spec": MODEL})
    assert [s["agent_spec"] for s in changed[1:]] == ["offline:kb"] * 4
    assert options["replacement_spec"] == "offline:kb"
    assert options[table_study.BUDGET_STAND_IN] == {
        "1": MODEL, "2": MODEL, "3": MODEL, "4": MODEL, "replacement": MODEL}  # fmt: skip
    budget.seats_within(study, seats, {})
    told = [
        r.getMessage() for r in caplog.records if "could pass its model budget" in r.getMessage()
    ]
    assert len(told) == 1
    assert "0.4000 spent, " in told[0] and "projected with tables in play, of 0.40 USD" in told[0]
    study.refresh_from_db()
    assert study.budget_reached_at is not None
    assert f"model_budget:{study.slug}" in budget.staff_notes()


def test_a_table_in_play_keeps_its_share_of_the_budget():
    study = undercover_study(model_prices=PRICES, model_budget="100.00")
    ahead = sum(budget.table_cost(study).values())
    assert ahead > 0
    study.model_budget = (ahead * Decimal("2.5")).quantize(Decimal("0.01"))
    study.save(update_fields=["model_budget"])
    assert not budget.reached(study)
    table = played(study, 0, 0, status="playing")
    table.seats.create(index=1, kind="agent", agent_spec=MODEL)
    table.seats.create(index=2, kind="agent", agent_spec=MODEL)
    played(study, 1, 1, status="playing").seats.create(index=1, kind="agent", agent_spec=MODEL)
    assert budget.reached(study)  # two games in play, each may spend a table's worth


def test_a_study_that_shows_as_full_takes_nobody_new_once_its_budget_is_reached():
    study = undercover_study(model_prices=PRICES, model_budget="0.50", over_budget="full")
    assert not assignment.is_full(study)
    played(study, 20, 1000)
    assert assignment.is_full(study)


@pytest.mark.parametrize(
    ("language", "closed", "taken"),
    [
        ("en", "closed to new participants for now", "has been taken"),
        ("de", "nimmt vorerst keine neuen Teilnehmenden auf", "sind vergeben"),
    ],
)
def test_a_study_closed_by_its_budget_says_closed_for_now_not_taken(
    client, language, closed, taken
):
    study = undercover_study(
        model_prices=PRICES, model_budget="0.50", over_budget="full", language=language
    )
    played(study, 20, 1000)
    page = client.get(reverse("participants:study_link", args=[study.slug])).content.decode()
    assert 'id="study-full"' in page and closed in page and taken not in page


def test_a_pilot_where_no_bot_got_to_play_is_not_ok():
    study = undercover_study(model_prices=PRICES, model_budget="0.50", over_budget="full")
    played(study, 20, 1000)
    turned_away = [BotResult(index=i, pid=f"PILOT{i}", status="full") for i in (1, 2)]
    report = pilot_report(study, turned_away)
    assert not report["ok"] and report["finished"] == 0
    assert report["problems"][0].startswith("no bot got to play a game: the bots ended 2 full")
    assert "model budget" in report["problems"][0]


def test_the_study_page_shows_the_spend_beside_the_plan(staff):
    study = undercover_study(model_prices=PRICES, model_budget="5.00", places=4)
    played(study, 12, 1000)
    page = staff.get(reverse("admin:participants_study_change", args=[study.pk])).content.decode()
    assert 'id="study-spend"' in page and MODEL in page
    assert "0.2400" in page and "Planned calls" in page and "budget 5.00" in page
    monitor = staff.get(reverse("dashboard:tables") + f"?study={study.slug}").content.decode()
    assert 'id="spend-by-model"' in monitor and "0.2400" in monitor
    reached = datetime(2026, 3, 4, 5, 6, 7, tzinfo=UTC)
    Study.objects.filter(pk=study.pk).update(budget_reached_at=reached)
    monitor = staff.get(reverse("dashboard:tables") + f"?study={study.slug}").content.decode()
    assert "reached at <time datetime=" in monitor and ">2026-03-04 05:06</time>" in monitor


@pytest.mark.parametrize("value", ['"1e3"', '"-1"', '"0.001"', '"inf"', "12.5"])
def test_the_study_file_refuses_a_budget_that_is_not_an_amount(value):
    text = study_file(f"model_budget = {value}\n")
    with pytest.raises(Exception, match="model_budget"):
        apply_text(text)


def test_the_study_file_refuses_bad_prices_and_a_budget_over_an_unpriced_model():
    with pytest.raises(Exception, match="model_prices"):
        apply_text(study_file('model_prices = { "openai:gpt-4o-mini" = ["0.15"] }\n'))
    with pytest.raises(Exception, match="needs a price for every model"):
        apply_text(study_file('model_budget = "10.00"\n', "openai:unpriced"))


def test_the_study_file_keeps_the_budget_prices_and_behaviour(settings):
    out = apply_text(
        study_file(
            'model_budget = "25.00"\nover_budget = "stand-in"\n'
            'model_prices = { "openai:gpt-4o-mini" = ["0.15", "0.60"] }\n'
        )
    )
    assert "created" in out
    study = Study.objects.get(slug="budgeted")
    assert str(study.model_budget) == "25.00" and study.over_budget == "stand-in"
    assert study.model_prices == {"openai:gpt-4o-mini": ["0.15", "0.60"]}


def test_the_admin_refuses_a_budget_that_is_not_an_amount(staff):
    study = undercover_study(active=False)
    url = reverse("admin:participants_study_change", args=[study.pk])
    post = admin_post(study, model_budget="1e3", model_prices=json.dumps({}), over_budget="full")
    response = staff.post(url, post)
    assert response.status_code == 200 and "exponent" in response.content.decode()
    study.refresh_from_db()
    assert study.model_budget is None


def study_file(extra: str, spec: str = "offline:kb") -> str:
    agent = f'{{kind = "agent", spec = "{spec}"}}'
    return (
        'slug = "budgeted"\ntitle = "Budgeted"\ngame = "undercover"\n'
        'consent_text = "Your games are recorded for research."\nactive = false\n'
        + extra
        + f'[design]\nseats = [{{kind = "person"}}, {agent}, {agent}, {agent}]\n'
    )


def test_raising_the_budget_reopens_the_study_everywhere(staff):
    apply_text(study_file('model_budget = "0.03"\n'))
    reached = timezone.now()
    Study.objects.filter(slug="budgeted").update(budget_reached_at=reached)
    out = apply_text(study_file('model_budget = "1.00"\n'))
    assert "raising the budget reopens the study" in out
    study = Study.objects.get(slug="budgeted")
    assert study.budget_reached_at is None
    assert "model_budget:budgeted" not in budget.staff_notes()
    spent = io.StringIO()
    call_command("study", "spend", "budgeted", stdout=spent)
    assert "was reached" not in spent.getvalue()
    Study.objects.filter(slug="budgeted").update(budget_reached_at=reached)
    study.refresh_from_db()
    study.model_prices = {"openai:gpt-4o-mini": ["0.15", "0.60"]}
    study.save(update_fields=["model_prices"])
    assert Study.objects.get(slug="budgeted").budget_reached_at is None  # new prices: afresh
    Study.objects.filter(slug="budgeted").update(budget_reached_at=reached)
    study.refresh_from_db()
    study.title = "Renamed"
    study.save()
    assert Study.objects.get(slug="budgeted").budget_reached_at == reached  # nothing of the budget


def test_applying_a_change_to_a_drafted_study_says_to_check_prolific():
    apply_text(study_file(""))
    Study.objects.filter(slug="budgeted").update(prolific_study="p-123")
    path = tmp_file(study_file("").replace('"Budgeted"', '"Budgeted again"'))
    out, err = io.StringIO(), io.StringIO()
    call_command("study", "apply", str(path), stdout=out, stderr=err)
    assert "p-123" in err.getvalue() and "manage.py prolific check budgeted" in err.getvalue()
    err = io.StringIO()
    call_command("study", "apply", str(path), stdout=out, stderr=err)
    assert "prolific check" not in err.getvalue()  # nothing changed: nothing to check


def tmp_file(text: str) -> Path:
    path = Path(tempfile.mkdtemp()) / "study.toml"
    path.write_text(text)
    return path


def test_staff_see_a_reached_budget_on_healthz_and_others_do_not(staff, client):
    study = undercover_study(model_prices=PRICES, model_budget="0.40", over_budget="stand-in")
    played(study, 20, 1000)
    budget.seats_within(study, study_tables.seat_list(designs.effective(study)["design"]), {})
    shown = staff.get("/healthz").json()
    assert f"model_budget:{study.slug}" in shown["staff"]
    assert "staff" not in client.get("/healthz").json()


def test_the_export_writes_the_spend_per_model_beside_the_plan(tmp_path):
    study = undercover_study(model_prices=PRICES, places=2)
    played(study, 12, 1000)
    export_study(study, tmp_path)
    usage = pd.read_csv(tmp_path / "usage.csv", keep_default_na=False, dtype=object)
    rows = {row["model"]: row for row in usage.to_dict("records")}
    assert rows[MODEL]["calls"] == "12" and rows[MODEL]["cost"] == "0.2400"
    assert rows["total"]["calls"] == "12" and rows[MODEL]["planned_calls"] != ""


def test_the_admin_action_drafts_checks_and_publishes_on_prolific(staff, settings):
    study = undercover_study(places=10)
    url = reverse("admin:participants_study_changelist")
    with FakeProlific() as server:
        settings.PROLIFIC_API_TOKEN, settings.PROLIFIC_API_URL = server.token, server.url
        settings.SITE_URL = "https://games.example.org"
        for action in ("draft_on_prolific", "check_prolific_study", "publish_prolific_study"):
            staff.post(url, {"action": action, "_selected_action": [study.pk]})
    study.refresh_from_db()
    assert study.prolific_study and server.published == [study.prolific_study]
    assert server.studies[study.prolific_study]["total_available_places"] == 10
