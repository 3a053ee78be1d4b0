"""Fixtures for every test of the Django project."""

import pytest


@pytest.fixture(autouse=True)
def in_process_tasks(settings) -> None:
    """No Celery worker runs during tests, even when REDIS_URL configures a broker: table driver
    jobs and pipeline jobs run in-process (the worker path is exercised by
    benchmarks/worker_crash.py)."""
    settings.CELERY_TASK_ALWAYS_EAGER = True


@pytest.fixture(autouse=True)
def no_participant_rate_limit(settings) -> None:
    """Tests start many participants from one address in a second; the rate-limit tests set the
    limits they check."""
    settings.PARTICIPANT_RATE_BURST = settings.PARTICIPANT_RATE_PER_MINUTE = 100_000
    settings.PARTICIPANT_POSTS_PER_MINUTE = 100_000  # a test plays many rounds in a minute


@pytest.fixture(autouse=True)
def no_outage_carried_over() -> None:
    """The sweep records a long gap since its previous run as the site's outage, which pauses
    tables' clocks (studyapp.tables.outages); one test's sweep is not another's previous run."""
    from django.core.cache import cache

    from studyapp.tables import outages

    cache.delete_many([outages.LAST_SWEEP, outages.OUTAGES])
    outages._away_until = 0.0  # a test that made Redis unreachable does not hide the next one's


@pytest.fixture(scope="session", autouse=True)
def close_thread_connections(django_db_setup, django_db_blocker):
    """In-process table jobs and consumers use threads, and each thread keeps its own database
    connection, as a server's would. Before the test database is dropped, end those sessions so
    PostgreSQL can drop it."""
    yield
    from django.db import connection

    if connection.vendor != "postgresql":
        return
    with django_db_blocker.unblock(), connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
