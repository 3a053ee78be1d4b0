"""The analysis pages' cache: one computed result per scope (a study, or the tables outside
studies), tagged with the version of the data it was computed from."""

from __future__ import annotations

from django.db import models
from django.utils import timezone


class AnalysisResult(models.Model):
    """What a page shows, computed off the request path (:mod:`studyapp.dashboard.analysis_job`).

    ``payload`` holds the page's tables and figure names for ``version``; ``wanted`` is the data
    version a computation is running (or queued) for. A page shows the last payload at once, with
    "updating" while ``wanted`` differs from ``version``, and progress while there is none yet.

    A computation is claimed as a pipeline ``Job`` is (:mod:`studyapp.claims`, rows): the claim
    stamps ``claimed_at`` (whose claim it is) and ``heartbeat_at``, which the computation's
    :class:`~studyapp.claims.Heartbeat` beats while it runs; a queued or running computation
    whose heartbeat is older than ``ANALYSIS_STALE_SECONDS`` lost its process and may be claimed
    again. ``updated_at`` is set by every write, ``update()`` included."""

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        DONE = "done"
        FAILED = "failed"

    scope = models.CharField(max_length=200, unique=True)
    version = models.CharField(max_length=200, blank=True)
    wanted = models.CharField(max_length=200, blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    progress = models.FloatField(default=0.0)
    message = models.CharField(max_length=500, blank=True)
    payload = models.JSONField(default=dict, blank=True)
    seconds = models.FloatField(null=True, blank=True)
    claimed_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(default=timezone.now)  # a new row is a sign of life
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"{self.scope} @ {self.version or '-'} ({self.status})"
