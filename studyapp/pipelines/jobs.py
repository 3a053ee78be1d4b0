"""Starting, running and ending jobs: the plain functions the task, the command and the pages
share, so each of those stays a few lines."""

from __future__ import annotations

import logging
import os
import socket
import traceback
from typing import Any

from django.conf import settings

from studyapp import claims, dispatch
from studyapp.pipelines.checks import missing_credentials, refusal
from studyapp.pipelines.kinds import get_kind
from studyapp.pipelines.models import Job, JobCancelled, beat
from studyapp.providers import site_provenance

logger = logging.getLogger(__name__)


class JobRefused(ValueError):
    """A job that cannot run as asked; its message is the whole reason, no traceback needed."""


def create_job(kind: str, parameters: dict[str, Any] | None = None, *, user=None, **fields) -> Job:
    """A queued job with the kind's defaults under the given parameters."""
    defaults = get_kind(kind).defaults
    return Job.objects.create(
        kind=kind, parameters={**defaults, **(parameters or {})}, started_by=user, **fields
    )


def enqueue(job: Job) -> None:
    """Run the job once it is committed, through the one dispatcher (:mod:`studyapp.dispatch`):
    on a Celery worker, or with the embedded default in a thread of the server, so the page that
    started it returns at once and shows its progress, or right here when no server runs (a
    command, a test), where nobody is waiting for a page."""
    from studyapp.pipelines.tasks import run_job  # it imports this module

    dispatch.send(run_job, (job.pk,), after_commit=True, own_thread=f"job-{job.pk}")


def start_job(kind: str, parameters: dict[str, Any] | None = None, *, user=None, **fields) -> Job:
    job = create_job(kind, parameters, user=user, **fields)
    enqueue(job)
    return job


def rerun(job: Job, *, user=None) -> Job:
    """A fresh job with the same kind and parameters."""
    return start_job(job.kind, job.parameters, user=user, rerun_of=job)


def resume(job: Job) -> bool:
    """Queue a job whose worker died again, on the same row: its artifacts stay where a runner
    that can pick up from them (the experiment runner) will find them. Never a job whose process
    still beats its heart (see :meth:`Job.requeue`); False when refused."""
    if job.status == Job.Status.FAILED and job.resumable and job.requeue():
        enqueue(job)
        return True
    return False


def heartbeat(job: Job) -> claims.Heartbeat:
    """Beats the job's heart (:func:`beat`) every ``JOB_HEARTBEAT_SECONDS`` while this process
    runs it, whatever the job does meanwhile: a TTRA evaluation silent in ``model.generate`` for
    an hour is alive, and only a job whose process is gone goes stale (``JOB_STALE_SECONDS``)."""
    job_id, started_at = job.pk, job.started_at
    return claims.Heartbeat(
        lambda: beat(job_id, started_at),
        settings.JOB_HEARTBEAT_SECONDS,
        name=f"job-{job_id}-heartbeat",
    )


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
        reason = refusal(job.kind, job.parameters) or missing_credentials(job.kind, job.parameters)
        if reason:
            raise JobRefused(reason)
        with heartbeat(job):
            result = get_kind(job.kind).load()(job)
    except JobCancelled:
        job.refresh_from_db(fields=["result", "cost", "artifacts", "log"])
        job.save_result(with_provenance(job, job.result))
        job.write_log("cancelled")
        job.finish(Job.Status.CANCELLED, message=f"cancelled at {job.progress:.0%}")
    except Exception as err:  # any failure of the job's own work ends it as failed, with why
        job.refresh_from_db(fields=["result", "cost", "artifacts", "log"])
        if job.result is not None:  # a partial result says what produced it too
            job.save_result(with_provenance(job, job.result))
        summary = "".join(traceback.format_exception(err, limit=-4))
        reason = failure_reason(err)
        job.write_log(f"failed: {reason}")
        job.finish(Job.Status.FAILED, error=summary[-4000:], message=reason)
    else:
        job.save_result(with_provenance(job, result))
        job.write_log("succeeded")
        job.finish(Job.Status.SUCCEEDED, message=final_message(job))
    return job


def job_provenance(job: Job) -> dict[str, Any]:
    """What produced this job's numbers (games.provenance): code, lock, packages, prompts, and
    each model of its parameters with the server this worker reaches it at. A kind whose model is
    loaded locally (TTRA) names it with the server "local"."""
    kind = get_kind(job.kind)
    specs = [job.parameters.get(name) for name in kind.models]
    block = site_provenance(spec for spec in specs if isinstance(spec, str))
    local = job.parameters.get("model")
    if not kind.models and isinstance(local, str):
        block["models"] = [{"spec": local, "server": "local"}]
    return block


def with_provenance(job: Job, result: Any) -> Any:
    """``result`` with its provenance under "provenance" (a result that is not a dict is left
    as it is: there is no place for it)."""
    if not isinstance(result, dict):
        return result
    try:
        block = job_provenance(job)
    except Exception as err:  # never let the record of a result stop the job from ending
        logger.warning("job #%s: no provenance", job.pk, exc_info=True)
        block = {"error": f"{type(err).__name__}: {err}"[:300]}
    return {**result, "provenance": block}


def final_message(job: Job) -> str:
    """The message of a job that succeeded: the runner's last progress line only when that line
    was its final one (one from part-way, "501/785 games", would read as stale)."""
    job.refresh_from_db(fields=["progress", "message"])
    if job.progress >= 1.0 and job.message:
        return f"finished · {job.message}"
    return "finished"


def failure_reason(err: BaseException) -> str:
    """One line for the job page: the reason itself for a refused job, else the first error
    inside any exception group (concurrent model calls fail as a group) with its type."""
    while isinstance(err, BaseExceptionGroup) and err.exceptions:
        err = err.exceptions[0]
    if isinstance(err, JobRefused):
        return str(err)[:300]
    lines = str(err).strip().splitlines()
    return f"{type(err).__name__}: {lines[0] if lines else 'no message'}"[:300]
