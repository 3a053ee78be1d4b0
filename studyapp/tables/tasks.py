"""Celery tasks of the table driver: each names a table (and the ``seq`` it was scheduled for)
and calls one driver function.

Delivery: tasks are acknowledged late and rejected when their worker is lost (settings), so a task
whose worker dies is delivered again, after the broker's visibility timeout; long before that the
job's lease in the cache lapses and the periodic sweep (Celery beat) schedules it again. The
driver's seq check and the unique ``(table, seq)`` key make every second delivery harmless.
"""

from __future__ import annotations

from celery import shared_task
from celery.signals import worker_ready

from studyapp.tables import driver


@shared_task(acks_late=True)
def take_agent_turn(table_id: int, seq: int, lease: str = "") -> str:
    return driver.run_job("take_agent_turn", (table_id, seq), lease)


@shared_task(acks_late=True)
def check_deadline(table_id: int, seq: int, lease: str = "") -> str:
    return driver.run_job("check_deadline", (table_id, seq), lease)


@shared_task(acks_late=True)
def check_lobby(table_id: int, lease: str = "") -> str:
    return driver.run_job("check_lobby", (table_id,), lease)


@shared_task
def resume_tables() -> list[int]:
    return driver.resume_unfinished()


@shared_task(acks_late=False, ignore_result=True)
def sweep_tables() -> dict[str, int]:
    """Celery beat sends this every ``TABLE_SWEEP_SECONDS`` (a lost one is simply the next)."""
    return driver.sweep()


TASKS = {
    "take_agent_turn": take_agent_turn,
    "check_deadline": check_deadline,
    "check_lobby": check_lobby,
}


@worker_ready.connect
def resume_on_worker_start(**_: object) -> None:
    """A worker that starts (or restarts after a crash) picks up every unfinished table."""
    resume_tables.delay()
