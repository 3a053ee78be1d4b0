"""Fixtures for every test of the Django project."""

import pytest


@pytest.fixture(autouse=True)
def in_process_tasks(settings) -> None:
    """No Celery worker runs during tests, even when REDIS_URL configures a broker: table driver
    jobs and pipeline jobs run in-process (the worker path is exercised by
    benchmarks/worker_crash.py)."""
    settings.CELERY_TASK_ALWAYS_EAGER = True
