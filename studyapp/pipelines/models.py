"""Background jobs.

A job row is the whole truth about a run: what was asked (kind, parameters), how far it got
(progress, log, heartbeat), what it made (result, artifact files, cost) and how it ended. Workers
write to it through the small methods below, so a page, a command or another worker can read a
job's state at any time, and a job whose worker vanished can be recognised by its stale heartbeat.
"""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import models, transaction
from django.db.models.signals import pre_delete
from django.dispatch import receiver
from django.utils import timezone

from studyapp import claims
from studyapp.tables.models import PolicyRecord

LOG_LIMIT = 2000  # lines kept per job; older ones are dropped first


class JobCancelled(Exception):
    """Raised between steps once a cancel was requested; the runner unwinds and keeps its work."""


def empty_list() -> list[Any]:
    return []


def empty_dict() -> dict[str, Any]:
    return {}


class Job(models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued", "queued"
        RUNNING = "running", "running"
        SUCCEEDED = "succeeded", "succeeded"
        FAILED = "failed", "failed"
        CANCELLED = "cancelled", "cancelled"

    kind = models.CharField(max_length=40)
    parameters = models.JSONField(default=empty_dict, blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    progress = models.FloatField(default=0.0)
    message = models.CharField(max_length=300, blank=True)
    log = models.JSONField(default=empty_list, blank=True)
    result = models.JSONField(null=True, blank=True)
    artifacts = models.JSONField(default=empty_list, blank=True)
    cost = models.JSONField(default=empty_dict, blank=True)
    error = models.TextField(blank=True)
    resumable = models.BooleanField(
        default=False, help_text="Failed because its worker stopped, not because of the job itself."
    )
    cancel_requested = models.BooleanField(default=False)
    started_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    rerun_of = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL)
    worker = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["status", "heartbeat_at"])]

    def __str__(self) -> str:
        return f"{self.kind} job #{self.pk} ({self.status})"

    @property
    def is_active(self) -> bool:
        return self.status in (self.Status.QUEUED, self.Status.RUNNING)

    @property
    def duration(self) -> timedelta | None:
        if self.started_at is None:
            return None
        return (self.finished_at or timezone.now()) - self.started_at

    # --- written by the worker -------------------------------------------------------------

    def write_log(self, line: str) -> None:
        """Append a timestamped line (and beat the heart: writing proves the worker is alive)."""
        stamp = timezone.now()
        self.log = [*self.log, f"{stamp:%H:%M:%S} {line}"][-LOG_LIMIT:]
        self.heartbeat_at = stamp
        self.save(update_fields=["log", "heartbeat_at"])

    def set_progress(self, fraction: float, message: str = "") -> None:
        """Record progress, beat the heart, and stop the run here if a cancel was requested."""
        self.progress = min(max(fraction, 0.0), 1.0)
        self.message = message[:300]
        self.heartbeat_at = timezone.now()
        self.save(update_fields=["progress", "message", "heartbeat_at"])
        self.raise_if_cancelled()

    def raise_if_cancelled(self) -> None:
        self.cancel_requested = (
            Job.objects.filter(pk=self.pk).values_list("cancel_requested", flat=True).first()
            or False
        )
        if self.cancel_requested:
            raise JobCancelled(f"job #{self.pk} was cancelled")

    def save_result(self, result: dict[str, Any], cost: dict[str, Any] | None = None) -> None:
        """Store the result so far; called as work completes, so a failure keeps it."""
        self.result = result
        if cost is not None:
            self.cost = cost
        self.save(update_fields=["result", "cost"])

    @property
    def artifact_dir(self) -> Path:
        return Path(settings.MEDIA_ROOT) / "jobs" / str(self.pk)

    def write_artifact(self, name: str, content: str | bytes | dict | list) -> Path:
        """Write a file under MEDIA_ROOT/jobs/<id>/ and list it on the job."""
        path = self.artifact_dir / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, dict | list):
            content = json.dumps(content, indent=2, ensure_ascii=False)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
        if name not in self.artifacts:
            self.artifacts = [*self.artifacts, name]
            self.save(update_fields=["artifacts"])
        return path

    # --- lifecycle ------------------------------------------------------------------------

    def claim(self, worker: str) -> bool:
        """Move a queued job to running for ``worker``; False if someone else got there first."""
        now = timezone.now()
        claimed = claims.claim_row(
            Job.objects.filter(pk=self.pk, status=self.Status.QUEUED),
            status=self.Status.RUNNING,
            worker=worker,
            started_at=now,
            heartbeat_at=now,
            error="",
        )
        self.refresh_from_db()
        return bool(claimed)

    def finish(
        self, status: str, *, error: str = "", resumable: bool = False, message: str = ""
    ) -> bool:
        """End the job; ``message`` replaces the last progress line, which would read as stale
        ("501/785 games" on a finished job), and for a failure says why in one line. Only the
        run that holds the job's current claim (its ``started_at``) may end it: a run whose claim
        was taken over (the job resumed elsewhere) leaves the status alone and gets False."""
        self.status = status
        self.error = error
        self.resumable = resumable
        self.message = message[:300]
        self.finished_at = timezone.now()
        if status == self.Status.SUCCEEDED:
            self.progress = 1.0
        fields = ["status", "error", "resumable", "message", "finished_at", "progress"]
        return bool(
            Job.objects.filter(pk=self.pk, started_at=self.started_at).update(
                **{name: getattr(self, name) for name in fields}
            )
        )

    def request_cancel(self) -> None:
        """A queued job is cancelled at once; a running one stops at its next step."""
        with transaction.atomic():
            Job.objects.filter(pk=self.pk, status=self.Status.QUEUED).update(
                status=self.Status.CANCELLED, finished_at=timezone.now(), cancel_requested=True
            )
            Job.objects.filter(pk=self.pk, status=self.Status.RUNNING).update(cancel_requested=True)
        self.refresh_from_db()

    def requeue(self) -> bool:
        """Put a job whose worker died back in the queue, keeping its log and partial result.
        Only a failed, resumable job whose heart has stopped beating: a job that a living process
        still runs (its heartbeat thread beats) is never queued a second time. False if refused."""
        silent = claims.silent("heartbeat_at", settings.JOB_STALE_SECONDS)
        queued = claims.claim_row(
            Job.objects.filter(silent, pk=self.pk, status=self.Status.FAILED, resumable=True),
            status=self.Status.QUEUED,
            resumable=False,
            cancel_requested=False,
            finished_at=None,
        )
        self.refresh_from_db()
        return bool(queued)


def beat(job_id: int, started_at: Any) -> None:
    """One heartbeat of the run that claimed job ``job_id`` at ``started_at`` (its process is
    alive). A run that was failed as stale meanwhile (its database or machine paused longer than
    the stale limit) is running after all: it is marked running again, unless it was resumed."""
    mine = Job.objects.filter(pk=job_id, started_at=started_at)
    if claims.beat_row(mine.filter(status=Job.Status.RUNNING)):
        return
    claims.beat_row(
        mine.filter(status=Job.Status.FAILED, resumable=True),
        status=Job.Status.RUNNING,
        resumable=False,
        finished_at=None,
        error="",
        message="running (its heartbeat came back)",
    )


def fail_stale_jobs(*, worker: str | None = None, now=None) -> list[int]:
    """Mark running jobs whose worker stopped as failed and resumable; return their ids.

    A running job is stale when its heartbeat is older than ``JOB_STALE_SECONDS``; with ``worker``
    (a worker that has just started) every job that worker was running is stale too, since a
    fresh process cannot be running anything yet.
    """
    now = now or timezone.now()
    stale = claims.silent("heartbeat_at", settings.JOB_STALE_SECONDS, now)
    if worker:
        stale |= models.Q(worker=worker)
    ids = list(Job.objects.filter(stale, status=Job.Status.RUNNING).values_list("pk", flat=True))
    for job_id in ids:
        Job.objects.filter(pk=job_id, status=Job.Status.RUNNING).update(
            status=Job.Status.FAILED,
            resumable=True,
            finished_at=now,
            message="its worker stopped (no heartbeat)",
            error="The worker running this job stopped (no heartbeat). "
            "Its log, partial result and artifacts are kept; resume or re-run it.",
        )
    return ids


@receiver(pre_delete, sender=Job, dispatch_uid="pipelines.forget_deleted_job")
def forget_deleted_job(sender: Any, instance: Job, **_: Any) -> None:
    """The policies a deleted job made stay, naming no job. (A policy record keeps its job's id
    as a plain number: it lives in the tables app, which may not point at the pipelines app.)"""
    PolicyRecord.objects.filter(job_id=instance.pk).update(job_id=None)
