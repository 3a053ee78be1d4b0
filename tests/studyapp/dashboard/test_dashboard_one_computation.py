"""One computation: the study page (its cached result), ``manage.py export_study`` and ``python -m
analysis report`` give the same numbers for the same games; the model arm started from the study
page lands in the study's figure next to the people."""

import json
import math

import pandas as pd
import pytest
from analysis_db_helpers import events_found_at
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from analysis.__main__ import main as analysis_main
from games import get_engine
from studyapp.dashboard import analysis_job
from studyapp.dashboard.models import AnalysisResult
from studyapp.participants.models import Participant, Round, Study
from studyapp.pipelines.models import Job
from studyapp.tables.models import Seat, Table, Turn
from tests.exports import export_checked

pytestmark = pytest.mark.django_db

FOUND_AT = {"a": [1, 3, 7], "b": [3, 3, 2], "c": [7, 1, 1]}


def people_study() -> tuple[Study, list[dict]]:
    """Three people, three rounds each, under the current rules; returns the study and the same
    games as experiment-file records."""
    study = Study.objects.create(slug="arm", title="Arm", rounds=3, consent_text="ok", seed=5)
    config = get_engine("twenty-questions").new_config(0, answer="Apple")
    records = []
    for name, ks in FOUND_AT.items():
        person = Participant.objects.create(study=study, status=Participant.Status.FINISHED)
        for number, k in enumerate(ks, start=1):
            table = Table.objects.create(
                game="twenty-questions", config=config, status=Table.Status.FINISHED
            )
            Seat.objects.create(table=table, index=0, kind="human", session_key=f"{name}{number}")
            Seat.objects.create(table=table, index=1, kind="agent", agent_spec="offline:kb")
            for seq, event in enumerate(events_found_at(k)):
                Turn.objects.create(table=table, seq=seq, seat=event.get("seat"), event=event)
            Round.objects.create(participant=person, number=number, table=table)
            records.append(
                {
                    "experiment": "arm",
                    "game": "twenty-questions",
                    "player": person.public_id,
                    "player_kind": "human",
                    "oracle": "offline:kb",
                    "setting": "none",
                    "round": number - 1,
                    "sample": 0,
                    "config": config,
                    "reward": 1 / math.log2(k + 1),
                }
            )
        # The record agrees with its games (export_study --check).
        person.rounds_finished = len(ks)
        person.total_reward = sum(1 / math.log2(k + 1) for k in ks)
        person.save()
    return study, records


@pytest.fixture
def staff() -> Client:
    client = Client()
    client.force_login(User.objects.create_user("researcher", password="pw", is_staff=True))
    return client


def run_model_arm(staff, study, django_capture_on_commit_callbacks):
    url = reverse("dashboard:analysis_study_model_arm", args=[study.slug])
    with django_capture_on_commit_callbacks(execute=True):
        response = staff.post(
            url, {"models": "offline:infogain", "settings": ["none", "cumulative"], "samples": "2"}
        )
    assert response.status_code == 302
    jobs = list(Job.objects.filter(kind="experiment", parameters__study=study.slug))
    assert len(jobs) == 2 and {j.status for j in jobs} == {"succeeded"}
    for job in jobs:
        assert job.parameters["seed"] == study.seed and job.parameters["rounds"] == study.rounds
        assert job.parameters["oracle"] == study.oracle_spec
    return jobs


def test_the_model_arm_joins_the_people_in_one_figure(staff, django_capture_on_commit_callbacks):
    study, _ = people_study()
    run_model_arm(staff, study, django_capture_on_commit_callbacks)
    page = staff.get(reverse("dashboard:analysis_study", args=[study.slug])).content.decode()
    assert "People by condition, and the model arm: Twenty Questions" in page
    # The game count keeps the people's 9 games apart from the model arm's.
    assert '<span id="people-games">9 with people</span>' in page
    assert "of agents only: the model arm" in page
    assert "not drawn together" not in page.lower()
    result = AnalysisResult.objects.get(scope="study:arm")
    drawn = pd.read_csv(
        analysis_job.result_dir(result.scope, result.version) / "study-twenty-questions.csv"
    )
    series = set(drawn["series"])
    assert "mean, 95% interval: all people" in series
    assert {k for k in drawn["kind"]} == {"thin", "mean", "normal", "reference"}
    assert drawn.loc[drawn["kind"] == "thin", "series"].str.startswith("participant ").all()
    assert {"offline:infogain, w/o Policy", "offline:infogain, w/ Cumulative Policy"} <= series
    # Model curves span the study's rounds (3), not rounds x samples.
    assert drawn[drawn["series"].str.startswith("offline:infogain")]["t"].max() == 3


def test_the_page_the_export_and_the_report_agree(
    staff, tmp_path, django_capture_on_commit_callbacks
):
    study, people = people_study()
    jobs = run_model_arm(staff, study, django_capture_on_commit_callbacks)
    # 1. the study page (its cached computation)
    staff.get(reverse("dashboard:analysis_study", args=[study.slug]))
    result = AnalysisResult.objects.get(scope="study:arm")
    page_dir = analysis_job.result_dir(result.scope, result.version)
    # 2. the export
    export_checked(study.slug, str(tmp_path / "export"))
    # 3. the report, from the experiment files the jobs wrote and the people's records
    files = [str(job.artifact_dir / "results.jsonl") for job in jobs]
    humans = tmp_path / "people.jsonl"
    humans.write_text("".join(json.dumps(r) + "\n" for r in people), encoding="utf-8")
    assert analysis_main(["report", *files, str(humans), "--out", str(tmp_path / "report")]) == 0

    for name, keys in [
        ("curves", ["player", "setting", "t"]),
        ("participants", ["player"]),
        ("human_mean", ["t"]),
        ("differences", ["player", "setting"]),
    ]:
        frames = [
            pd.read_csv(folder / f"{name}.csv").sort_values(keys).reset_index(drop=True)
            for folder in (page_dir, tmp_path / "export" / "analysis", tmp_path / "report")
        ]
        assert len(frames[0]) > 0, name
        for other in frames[1:]:
            pd.testing.assert_frame_equal(frames[0], other, check_exact=False, atol=1e-9, rtol=0)
    # The page shows those same numbers.
    shown = {row["player"]: row["R"] for row in result.payload["participants"]}
    report = pd.read_csv(tmp_path / "report" / "participants.csv")
    for player, final in zip(report["player"], report["R"], strict=True):
        assert shown[player] == pytest.approx(final, abs=1e-9)


def test_it_refuses_to_draw_people_and_models_under_different_rules(
    staff, django_capture_on_commit_callbacks
):
    study, _ = people_study()
    Table.objects.filter(pk__in=Round.objects.values("table_id")).update(
        config={"answer": "Apple", "max_questions": 20}  # no rules_version: rules 1
    )
    run_model_arm(staff, study, django_capture_on_commit_callbacks)
    page = staff.get(reverse("dashboard:analysis_study", args=[study.slug])).content.decode()
    assert "People and models not drawn together" in page
    assert "rules version 1 and the model arm with 2" in page
    result = AnalysisResult.objects.get(scope="study:arm")
    drawn = pd.read_csv(
        analysis_job.result_dir(result.scope, result.version) / "study-twenty-questions.csv"
    )
    assert not drawn["series"].str.startswith("offline:infogain").any()


def test_the_first_visit_shows_progress_while_a_server_computes(staff):
    study, _ = people_study()
    AnalysisResult.objects.create(
        scope="study:arm", status="running", wanted=analysis_job.data_version("study:arm")
    )
    page = staff.get(reverse("dashboard:analysis_study", args=[study.slug])).content.decode()
    assert "Computing the curves and tables for the first time" in page
    assert 'hx-trigger="every 1s"' in page


@pytest.mark.parametrize("samples", ["0", "11", "-3", "two", "2.5"])
def test_the_model_arm_refuses_a_number_of_samples_out_of_range(staff, samples):
    """Refused with the reason, and no job started: never quietly run another number than asked."""
    study, _ = people_study()
    url = reverse("dashboard:analysis_study_model_arm", args=[study.slug])
    response = staff.post(
        url, {"models": "offline:infogain", "settings": ["none"], "samples": samples}, follow=True
    )
    assert b"Samples must be a whole number from 1 to 10." in response.content
    assert not Job.objects.exists()


def test_a_figure_url_is_keyed_by_what_it_draws(staff, django_capture_on_commit_callbacks):
    """The page before and after the model arm names two different figure URLs, so no browser
    shows the figure without the models next to a table with them; each URL serves its bytes."""
    import re

    study, _ = people_study()
    url = reverse("dashboard:analysis_study", args=[study.slug])
    pattern = r'src="([^"]*study-twenty-questions\.png\?v=[0-9a-f]{16})"'
    before = re.search(pattern, staff.get(url).content.decode()).group(1)
    run_model_arm(staff, study, django_capture_on_commit_callbacks)
    page = staff.get(url).content.decode()
    after = re.search(pattern, page).group(1)
    assert before != after
    image = staff.get(after)
    assert image["Cache-Control"] == "private, max-age=31536000, immutable"
    assert staff.get(before)["Cache-Control"] == "no-cache"  # an old key: never kept
    data = after.replace(".png?", ".csv?").replace("&amp;", "&")
    drawn = b"".join(staff.get(data).streaming_content).decode()
    assert "offline:infogain, w/o Policy" in drawn


def test_the_model_arm_form_offers_only_agents_of_the_game_and_refuses_one_that_would_fail(staff):
    """An Undercover study: the form proposes the Undercover agent, and a Twenty Questions agent
    (which would fail at once in every job) is refused with the reason, starting no job."""
    study = Study.objects.create(
        slug="uc-arm", title="UC", game="undercover", rounds=2, consent_text="ok", seed=3
    )
    page = staff.get(reverse("dashboard:analysis_study", args=[study.slug])).content.decode()
    # The study's own agents (offline:kb by default), not another alias of the same agent.
    assert 'name="models" value="offline:kb"' in page
    assert "offline:infogain" not in page
    url = reverse("dashboard:analysis_study_model_arm", args=[study.slug])
    for model, reason in [
        ("offline:infogain", "offline:infogain cannot play this study&#x27;s game (undercover)"),
        ("gpt-4o", "a model is written provider:name"),
        ("acme:m", "unknown provider &#x27;acme&#x27;"),
    ]:
        response = staff.post(
            url, {"models": f"offline:descriptor {model}", "settings": ["none"]}, follow=True
        )
        assert reason in response.content.decode(), model
    assert not Job.objects.exists()
