"""Jobs end to end: the command, the task machinery, stale workers, cancel, and who may look."""

from __future__ import annotations

import json
from datetime import timedelta
from types import SimpleNamespace

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.db import connection
from django.utils import timezone

from studyapp.dashboard.records import table_records
from studyapp.pipelines.jobs import create_job, execute
from studyapp.pipelines.models import Job
from studyapp.pipelines.tasks import close_abandoned_jobs
from studyapp.tables.models import PolicyRecord, Table
from tests.fakes.game_responder import GameResponder
from tests.fakes.llm_server import prompt_text
from tests.studyapp.pipelines.synthetic import SyntheticJudge, make_cases

JUDGE = "openai-compatible:synthetic-judge"


def write_dataset(tmp_path, labels: str):
    path = tmp_path / "pairs.jsonl"
    path.write_text("\n".join(json.dumps(c.to_json()) for c in make_cases(labels)) + "\n")
    return path


@pytest.mark.django_db
def test_the_command_runs_a_selective_lwe_job_to_the_end(
    configured, tmp_path, capsys, client, staff
):
    configured.responder = SyntheticJudge(biased={2})
    dataset = write_dataset(tmp_path, "ABBA")
    call_command(
        "run_job",
        "selective-lwe",
        "--param", f"model={JUDGE}",
        "--param", f"dataset={dataset}",
        "--param", "orders=2",
        "--param", "cache=false",
        "--wait",
    )  # fmt: skip
    job = Job.objects.get()
    assert job.status == Job.Status.SUCCEEDED and job.progress == 1.0
    assert job.result["summary"]["consistency"] == {"mean": 0.75, "std": 0.0}
    assert {"verdicts.jsonl", "result.json", "meta_prompt_order0.txt"} <= set(job.artifacts)
    verdicts = (job.artifact_dir / "verdicts.jsonl").read_text().splitlines()
    assert len(verdicts) == 8  # 4 cases x 2 orders
    assert job.cost["total_chars"] > 0 and job.cost["method_chars"] < job.cost["total_chars"]
    assert any("pair accuracy" in line for line in job.log)
    assert f"job #{job.pk} succeeded" in capsys.readouterr().out
    print(json.dumps(job.result["summary"]))  # shown with -s: the figures of this run
    client.force_login(staff)
    page = client.get(f"/dashboard/jobs/{job.pk}/").content
    assert b"pair_accuracy" in page and b"verdicts.jsonl" in page and b"every 1s" not in page
    download = client.get(f"/dashboard/jobs/{job.pk}/files/verdicts.jsonl")
    assert b"".join(download.streaming_content).count(b"\n") == 8
    assert client.get(f"/dashboard/jobs/{job.pk}/files/../../settings.py").status_code == 404


@pytest.mark.django_db
def test_a_job_runs_with_its_own_prompt_files_and_records_them(configured, tmp_path):
    import hashlib

    from studyapp.pipelines.lwe.judging import PROMPTS_DIR, prompt_hashes

    configured.responder = SyntheticJudge()
    folder = tmp_path / "prompts"
    folder.mkdir()
    own = (PROMPTS_DIR / "vanilla.txt").read_text() + "\nJUDGE WITH CARE.\n"
    (folder / "vanilla.txt").write_text(own)
    dataset = write_dataset(tmp_path, "AB")
    job = create_job(
        "vanilla",
        {"model": JUDGE, "dataset": str(dataset), "prompts": str(folder), "cache": False},
    )
    job = execute(job.pk)
    assert job.status == Job.Status.SUCCEEDED, job.error
    assert job.result["prompts"]["vanilla"] == hashlib.sha256(own.strip().encode()).hexdigest()
    assert all("JUDGE WITH CARE." in prompt_text(r.body) for r in configured.requests)
    assert prompt_hashes()["vanilla"] != job.result["prompts"]["vanilla"]  # reset after the job

    (folder / "vanila.txt").write_text("a typo")
    bad = execute(
        create_job("vanilla", {"model": JUDGE, "dataset": str(dataset), "prompts": str(folder)}).pk
    )
    assert bad.status == Job.Status.FAILED and "vanila.txt" in bad.error


@pytest.mark.django_db
def test_a_job_whose_worker_stopped_is_marked_failed_and_resumable(
    configured, client, staff, django_capture_on_commit_callbacks
):
    job = create_job("policy", {"model": JUDGE, "mode": "rule", "name": "tq-rules"})
    assert job.claim("celery@gone-host")
    Job.objects.filter(pk=job.pk).update(heartbeat_at=timezone.now() - timedelta(hours=1))

    client.force_login(staff)
    assert client.get("/dashboard/jobs/").status_code == 200  # listing runs the stale check
    job.refresh_from_db()
    assert job.status == Job.Status.FAILED and job.resumable
    assert "stopped" in job.error

    # Resuming puts the same row back in the queue; with no broker it runs in-process.
    configured.responder = lambda body: "<answer>Ask about categories first.</answer>"
    with django_capture_on_commit_callbacks(execute=True):
        client.post(f"/dashboard/jobs/{job.pk}/resume/")
    job.refresh_from_db()
    assert job.status == Job.Status.SUCCEEDED
    assert PolicyRecord.latest("tq-rules").text == "Ask about categories first."


@pytest.mark.django_db
def test_a_restarted_worker_fails_the_jobs_it_was_running(configured):
    mine = create_job("policy", {"model": JUDGE, "mode": "rule"})
    other = create_job("policy", {"model": JUDGE, "mode": "rule"})
    mine.claim("celery@host-a")
    other.claim("celery@host-b")  # fresh heartbeat on another worker: left alone

    close_abandoned_jobs(sender=SimpleNamespace(hostname="celery@host-a"))

    mine.refresh_from_db()
    other.refresh_from_db()
    assert (mine.status, mine.resumable) == (Job.Status.FAILED, True)
    assert other.status == Job.Status.RUNNING


@pytest.mark.django_db(transaction=True)
def test_a_cancelled_job_stops_between_steps_and_keeps_its_verdicts(configured, tmp_path):
    judge = SyntheticJudge()
    job = create_job(
        "lwe",
        {"model": JUDGE, "dataset": str(write_dataset(tmp_path, "ABABABAB")), "orders": 1},
    )
    job.parameters["cache"] = False
    job.save()

    def cancel_after_three_cases(body):
        reply = judge(body)
        if judge.counts.get("feedback") == 3:  # a researcher presses Cancel mid-run
            Job.objects.filter(pk=job.pk).update(cancel_requested=True)
            connection.close()  # this server thread's own connection
        return reply

    configured.responder = cancel_after_three_cases
    execute(job.pk, "inline")
    job.refresh_from_db()
    assert job.status == Job.Status.CANCELLED
    assert job.result["partial"] is True
    reached = [r for run in job.result["runs"] for r in run.get("results", [])]
    assert "verdicts.jsonl" in job.artifacts
    lines = [json.loads(line) for line in (job.artifact_dir / "verdicts.jsonl").open()]
    assert len([line for line in lines if line["method"] == "vanilla"]) == 8  # the cost reference
    lwe_verdicts = [line for line in lines if line["method"] == "lwe"]
    assert 3 <= len(lwe_verdicts) < 8 and not reached  # verdicts kept as a file, not in the row
    assert judge.counts["build"] < 8


@pytest.mark.django_db
def test_a_failing_job_says_why_and_is_not_resumable(configured):
    job = create_job("lwe", {"model": JUDGE, "dataset": "does-not-exist.jsonl"})
    execute(job.pk, "inline")
    job.refresh_from_db()
    assert job.status == Job.Status.FAILED and not job.resumable
    assert "does-not-exist.jsonl" in job.error


@pytest.mark.django_db
def test_an_experiment_job_stores_its_games_as_tables_and_feeds_a_policy_job(configured):
    call_command(
        "run_job", "experiment",
        "--param", "model=offline:infogain", "--param", "cases=2", "--param", "samples=1",
        "--param", "cache=false", "--wait",
    )  # fmt: skip
    experiment = Job.objects.get(kind="experiment")
    tables = Table.objects.filter(options__job=experiment.pk).order_by("pk")
    assert experiment.status == Job.Status.SUCCEEDED
    assert len(tables) == 2 and all(t.turns.exists() for t in tables)
    assert experiment.result["tables"] == [t.pk for t in tables]
    assert tables[0].seats.get(index=0).agent_spec == "offline:infogain"

    configured.responder = lambda body: "Thinking.<answer>Split the candidates in half.</answer>"
    ids = ",".join(str(t.pk) for t in tables)
    call_command(
        "run_job", "policy",
        "--param", f"model={JUDGE}", "--param", "mode=experience",
        "--param", f"tables=[{ids}]", "--param", "name=tq-exp", "--param", "cache=false", "--wait",
    )  # fmt: skip
    first = PolicyRecord.latest("tq-exp")
    assert (first.version, first.kind, first.text) == (
        1,
        "experience",
        "Split the candidates in half.",
    )
    # Two reflections, then the policy itself.
    assert len(configured.requests) == 3
    # Each result says what produced it: the lock, the prompt set, each model and its server.
    policy = Job.objects.get(kind="policy")
    for job, models in (
        (experiment, [{"spec": "offline:infogain", "server": None}]),
        (policy, [{"spec": JUDGE, "server": configured.openai_base_url}]),
    ):
        block = job.result["provenance"]
        assert block["models"] == models
        assert len(block["lock"]["requirements/lock.txt"]) == 64
        assert len(block["prompts"]["sha256"]) == 64


@pytest.mark.django_db
def test_an_experiment_jobs_tables_carry_the_usage_of_their_model_calls(configured):
    configured.responder = GameResponder()
    call_command(
        "run_job", "experiment",
        "--param", f"model={JUDGE}", "--param", "cases=1", "--param", "samples=1",
        "--param", "cache=false", "--wait",
    )  # fmt: skip
    table = Table.objects.get(options__job=Job.objects.get(kind="experiment").pk)
    (record,) = table_records(Table.objects.filter(pk=table.pk))
    # Every character the server received in a message (the system text included).
    sent = sum(len(m["content"]) for r in configured.requests for m in r.body["messages"])
    assert record["usage"]["calls"] == len(configured.requests) > 0
    assert record["usage"]["input_chars"] == sent


@pytest.mark.django_db
def test_only_staff_can_see_job_pages(client, staff):
    job = create_job("vanilla", {"model": JUDGE})
    pages = ["/dashboard/jobs/", "/dashboard/jobs/new/", f"/dashboard/jobs/{job.pk}/"]
    participant = get_user_model().objects.create_user("participant", password="x")
    client.force_login(participant)
    for page in pages:
        response = client.get(page)
        assert response.status_code == 302 and "/admin/login/" in response["Location"]
    assert client.post(f"/dashboard/jobs/{job.pk}/cancel/").status_code == 302
    job.refresh_from_db()
    assert not job.cancel_requested

    client.force_login(staff)
    for page in pages:
        assert client.get(page).status_code == 200
    progress = client.get(f"/dashboard/jobs/{job.pk}/", headers={"HX-Request": "true"})
    assert b'hx-trigger="every 1s"' in progress.content and b"<html" not in progress.content


@pytest.mark.django_db
def test_an_uploaded_dataset_with_a_bad_line_is_refused_naming_the_line(
    client, staff, settings, tmp_path
):
    settings.MEDIA_ROOT = tmp_path
    client.force_login(staff)
    good = json.dumps(make_cases("A")[0].to_json())
    upload = tmp_path / "upload.jsonl"
    upload.write_text(good + "\n" + '{"prompt": "x"}\n')
    with upload.open("rb") as handle:
        response = client.post(
            "/dashboard/jobs/new/",
            {"kind": "vanilla", "parameters": "{}", "dataset": handle},
        )
    assert response.status_code == 200
    assert b"line 2: missing field(s) response_a, response_b, label" in response.content
    assert not Job.objects.exists()
