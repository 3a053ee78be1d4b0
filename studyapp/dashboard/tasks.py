"""Celery entry point of the analysis cache (see :mod:`studyapp.dashboard.analysis_job`)."""

from __future__ import annotations

from celery import shared_task

from studyapp.dashboard.analysis_job import compute


@shared_task(name="dashboard.compute_analysis")
def compute_analysis(scope: str, version: str) -> str:
    return compute(scope, version).status
