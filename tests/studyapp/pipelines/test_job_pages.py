"""What a researcher meets on the job pages: jobs that run in the background under the server,
refusals and failures said in one line, final messages, compact results and the start form."""

from __future__ import annotations

import asyncio
import json
import threading

import pytest
from asgiref.sync import sync_to_async
from django.core.management import CommandError, call_command
from django.db import connection, transaction

from studyapp.background import in_server
from studyapp.pipelines.jobs import create_job, execute, start_job
from studyapp.pipelines.models import Job
from studyapp.tables.models import PolicyRecord

JUDGE = "openai-compatible:synthetic-judge"


@pytest.mark.django_db(transaction=True)
def test_it_runs_a_job_in_a_server_thread_so_the_start_request_returns_at_once(configured):
    asked, release = threading.Event(), threading.Event()

    def slow_model(body):
        asked.set()
        release.wait(5)
        return "<answer>Ask about categories first.</answer>"

    configured.responder = slow_model
    parameters = {"model": JUDGE, "mode": "rule", "name": "in-thread", "cache": False}

    def start_request() -> int:  # what the Start view does, in the server's sync thread
        try:
            with transaction.atomic():
                return start_job("policy", parameters).pk
        finally:
            connection.close()

    async def server() -> int:  # stands in for daphne: views run in a thread beside its loop
        with in_server():  # as the site's ASGI application marks each request
            return await sync_to_async(start_request)()

    job_id = asyncio.run(server())
    assert asked.wait(5)  # the job reached its model while the request had already returned
    assert Job.objects.get(pk=job_id).is_active
    release.set()
    [thread] = [t for t in threading.enumerate() if t.name == f"job-{job_id}"]
    thread.join(10)
    job = Job.objects.get(pk=job_id)
    assert job.status == Job.Status.SUCCEEDED, job.error
    assert PolicyRecord.latest("in-thread").text == "Ask about categories first."


@pytest.mark.django_db
def test_it_refuses_an_offline_model_for_an_lwe_job(client, staff):
    client.force_login(staff)
    response = client.post(
        "/dashboard/jobs/new/",
        {"kind": "selective-lwe", "parameters": json.dumps({"model": "offline:kb"})},
    )
    assert response.status_code == 200 and not Job.objects.exists()
    page = response.content.decode()
    assert 'role="alert"' in page
    assert "offline:kb is a rule-based agent and cannot judge answers" in page


@pytest.mark.django_db
def test_the_command_refuses_an_offline_model_for_an_lwe_job():
    with pytest.raises(CommandError, match="offline:kb is a rule-based agent and cannot judge"):
        call_command("run_job", "lwe", "--param", "model=offline:kb", "--wait")
    assert not Job.objects.exists()


@pytest.mark.django_db
def test_it_says_in_one_line_that_no_openai_key_is_set(settings, client, staff):
    settings.OPENAI_API_KEY = ""
    job = execute(create_job("policy", {"mode": "rule"}).pk)  # the default model is openai:
    assert job.status == Job.Status.FAILED
    assert job.message.startswith("no OPENAI_API_KEY is set for openai:gpt-4.1; set it")
    client.force_login(staff)
    page = client.get(f"/dashboard/jobs/{job.pk}/").content.decode()
    assert f'<p class="error" role="alert">{job.message}</p>' in page
    assert "<details><summary>Details (traceback)</summary><pre>Traceback" in page


@pytest.mark.django_db
def test_a_finished_experiment_says_so_and_counts_its_tables(configured, client, staff):
    call_command(
        "run_job", "experiment",
        "--param", "model=offline:infogain", "--param", "cases=3", "--param", "samples=1",
        "--param", "cache=false", "--wait",
    )  # fmt: skip
    job = Job.objects.get()
    assert job.message == "finished · 3 games played"
    first, last = min(job.result["tables"]), max(job.result["tables"])
    client.force_login(staff)
    page = client.get(f"/dashboard/jobs/{job.pk}/").content.decode()
    assert f"3 games stored as tables #{first}–#{last}" in page
    assert "&quot;tables&quot;: &quot;3 tables (listed above)&quot;" in page


@pytest.mark.django_db
def test_changing_the_kind_swaps_in_its_default_parameters(client, staff):
    client.force_login(staff)
    page = client.get("/dashboard/jobs/new/").content.decode()
    assert 'hx-get="/dashboard/jobs/new/"' in page and 'hx-target="#id_parameters"' in page
    partial = client.get("/dashboard/jobs/new/?kind=policy", HTTP_HX_REQUEST="true")
    text = partial.content.decode().strip()
    assert text.startswith("<textarea") and 'id="id_parameters"' in text
    assert "&quot;mode&quot;: &quot;experience&quot;" in text and "<html" not in text
    # Without JavaScript the links give the whole page with those defaults.
    full = client.get("/dashboard/jobs/new/?kind=policy").content.decode()
    assert "<html" in full and "&quot;mode&quot;: &quot;experience&quot;" in full
