"""Celery entry points: one task that runs a job, and the startup check that closes jobs a
previous run of this worker left behind."""

from __future__ import annotations

from typing import Any

from celery import shared_task
from celery.signals import worker_ready

from studyapp.pipelines.jobs import execute, worker_name
from studyapp.pipelines.models import fail_stale_jobs


@shared_task(bind=True, name="pipelines.run_job")
def run_job(self: Any, job_id: int) -> str:
    # The worker's node name (celery@host), so a restarted worker recognises its old jobs.
    return execute(job_id, self.request.hostname or worker_name()).status


@worker_ready.connect
def close_abandoned_jobs(sender: Any = None, **kwargs: Any) -> None:
    """A worker that has just started is running nothing yet: jobs still marked as running on it,
    and any job whose heartbeat went quiet, are failed (resumable), never left running."""
    fail_stale_jobs(worker=getattr(sender, "hostname", None))
