"""Starting, running and ending jobs: the plain functions the task, the command and the pages
share, so each of those stays a few lines."""

from __future__ import annotations

import os
import socket
import traceback
from typing import Any

from django.conf import settings
from django.db import transaction

from studyapp.pipelines.kinds import get_kind
from studyapp.pipelines.models import Job, JobCancelled


def create_job(kind: str, parameters: dict[str, Any] | None = None, *, user=None, **fields) -> Job:
    """A queued job with the kind's defaults under the given parameters."""
    defaults = get_kind(kind).defaults
    return Job.objects.create(
        kind=kind, parameters={**defaults, **(parameters or {})}, started_by=user, **fields
    )


def enqueue(job: Job) -> None:
    """Hand the job to a Celery worker once it is committed. With the embedded default (no broker,
    ``CELERY_TASK_ALWAYS_EAGER``) it runs in this process instead, as the table driver's jobs do."""
    if settings.CELERY_TASK_ALWAYS_EAGER:
        transaction.on_commit(lambda: execute(job.pk))
        return
    from studyapp.pipelines.tasks import run_job

    transaction.on_commit(lambda: run_job.delay(job.pk))


def start_job(kind: str, parameters: dict[str, Any] | None = None, *, user=None, **fields) -> Job:
    job = create_job(kind, parameters, user=user, **fields)
    enqueue(job)
    return job


def rerun(job: Job, *, user=None) -> Job:
    """A fresh job with the same kind and parameters."""
    return start_job(job.kind, job.parameters, user=user, rerun_of=job)


def resume(job: Job) -> None:
    """Queue a job whose worker died again, on the same row: its artifacts stay where a runner
    that can pick up from them (the experiment runner) will find them."""
    if job.status == Job.Status.FAILED and job.resumable:
        job.requeue()
        enqueue(job)


def worker_name() -> str:
    """Who runs a job outside Celery (the command's inline mode)."""
    return f"inline@{socket.gethostname()}:{os.getpid()}"


def execute(job_id: int, worker: str | None = None) -> Job:
    """Run one queued job to its end in this process. Never leaves it running: success, a
    cancellation or an error each end the job, and the error keeps what the runner saved."""
    job = Job.objects.get(pk=job_id)
    if not job.claim(worker or worker_name()):
        return job  # already taken, cancelled or finished
    job.write_log(f"started on {job.worker}")
    try:
        result = get_kind(job.kind).load()(job)
    except JobCancelled:
        job.refresh_from_db(fields=["result", "cost", "artifacts", "log"])
        job.write_log("cancelled")
        job.finish(Job.Status.CANCELLED)
    except Exception as err:  # any failure of the job's own work ends it as failed, with why
        job.refresh_from_db(fields=["result", "cost", "artifacts", "log"])
        summary = "".join(traceback.format_exception(err, limit=-4))
        job.write_log(f"failed: {type(err).__name__}: {err}")
        job.finish(Job.Status.FAILED, error=summary[-4000:])
    else:
        job.save_result(result)
        job.write_log("succeeded")
        job.finish(Job.Status.SUCCEEDED)
    return job
