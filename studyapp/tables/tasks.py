"""Celery tasks of the table driver: each loads ids and calls one driver function.

``acks_late`` with ``reject_on_worker_lost`` (settings) means a task whose worker dies is
delivered again; the driver's seq check and the unique turn key make the second delivery harmless.
"""

from __future__ import annotations

from celery import shared_task
from celery.signals import worker_ready

from studyapp.tables import driver


@shared_task(acks_late=True)
def take_agent_turn(table_id: int, seq: int) -> str:
    return driver.take_agent_turn(table_id, seq)


@shared_task(acks_late=True)
def check_deadline(table_id: int, seq: int) -> str:
    return driver.check_deadline(table_id, seq)


@shared_task(acks_late=True)
def check_lobby(table_id: int) -> str:
    return driver.check_lobby(table_id)


@shared_task
def resume_tables() -> list[int]:
    return driver.resume_unfinished()


TASKS = {
    "take_agent_turn": take_agent_turn,
    "check_deadline": check_deadline,
    "check_lobby": check_lobby,
}


@worker_ready.connect
def resume_on_worker_start(**_: object) -> None:
    """A worker that starts (or restarts after a crash) picks up every unfinished table."""
    resume_tables.delay()
