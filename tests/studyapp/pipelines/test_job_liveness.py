"""A job's heart beats from a thread while its process runs it, however long the job itself stays
silent: the jobs pages never fail it and "Resume" never starts a second copy of it."""

from __future__ import annotations

import threading
import time
from datetime import timedelta

import pytest
from django.utils import timezone

from studyapp.pipelines.jobs import create_job, execute, resume
from studyapp.pipelines.models import Job, beat, fail_stale_jobs
from studyapp.tables.models import PolicyRecord

JUDGE = "openai-compatible:synthetic-judge"


@pytest.mark.django_db(transaction=True)
def test_a_job_silent_longer_than_the_stale_limit_keeps_running_and_succeeds_once(
    configured, client, staff, settings
):
    settings.JOB_STALE_SECONDS = 1
    settings.JOB_HEARTBEAT_SECONDS = 0.2
    # The job's one model call takes 3 s: three stale limits without a log line or any progress.
    configured.latency = 3.0
    configured.responder = lambda body: "<answer>Ask about size first.</answer>"
    job = create_job(
        "policy", {"model": JUDGE, "mode": "rule", "name": "tq-silent", "cache": False}
    )
    client.force_login(staff)
    assert client.get(f"/dashboard/jobs/{job.pk}/").status_code == 200  # pages loaded once
    runner = threading.Thread(target=execute, args=(job.pk, "celery@busy-host"))
    runner.start()
    try:
        while Job.objects.get(pk=job.pk).status == Job.Status.QUEUED:
            time.sleep(0.05)
        seen = []
        until = time.monotonic() + 2.5
        while time.monotonic() < until and runner.is_alive():
            # What a researcher does meanwhile: watch the pages (each poll runs the stale check)
            # and press Resume.
            assert client.get("/dashboard/jobs/").status_code == 200
            assert client.get(f"/dashboard/jobs/{job.pk}/").status_code == 200
            client.post(f"/dashboard/jobs/{job.pk}/resume/")
            seen.append(Job.objects.get(pk=job.pk).status)
            time.sleep(0.2)
    finally:
        runner.join(30)
    job.refresh_from_db()
    assert len(seen) >= 5 and set(seen) == {Job.Status.RUNNING}, (job.error, job.log)
    assert job.status == Job.Status.SUCCEEDED
    assert len(configured.requests) == 1  # run once: no second copy
    assert [p.text for p in PolicyRecord.objects.filter(name="tq-silent")] == [
        "Ask about size first."
    ]


@pytest.mark.django_db
def test_resume_refuses_a_job_whose_heart_still_beats(configured, settings):
    settings.JOB_STALE_SECONDS = 60
    job = create_job("policy", {"model": JUDGE, "mode": "rule"})
    job.claim("celery@host")
    Job.objects.filter(pk=job.pk).update(status=Job.Status.FAILED, resumable=True)
    job.refresh_from_db()
    assert not resume(job)  # failed by a stale check, but its heart beat a moment ago
    assert Job.objects.get(pk=job.pk).status == Job.Status.FAILED
    Job.objects.filter(pk=job.pk).update(heartbeat_at=timezone.now() - timedelta(minutes=5))
    job.refresh_from_db()
    assert job.requeue() and job.status == Job.Status.QUEUED


@pytest.mark.django_db
def test_a_run_failed_as_stale_is_running_again_at_its_next_beat(configured):
    job = create_job("policy", {"model": JUDGE, "mode": "rule"})
    job.claim("celery@host")
    Job.objects.filter(pk=job.pk).update(heartbeat_at=timezone.now() - timedelta(hours=1))
    assert fail_stale_jobs() == [job.pk]
    beat(job.pk, job.started_at)
    job.refresh_from_db()
    assert (job.status, job.resumable, job.finished_at) == (Job.Status.RUNNING, False, None)


@pytest.mark.django_db
def test_a_run_whose_claim_was_taken_over_leaves_the_status_alone(configured):
    job = create_job("policy", {"model": JUDGE, "mode": "rule"})
    job.claim("celery@first")
    first = Job.objects.get(pk=job.pk)
    Job.objects.filter(pk=job.pk).update(status=Job.Status.QUEUED)
    job.claim("celery@second")  # resumed elsewhere: a new claim
    assert not first.finish(Job.Status.FAILED, error="late")
    job.refresh_from_db()
    assert (job.status, job.worker, job.error) == (Job.Status.RUNNING, "celery@second", "")
