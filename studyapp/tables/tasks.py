"""Celery tasks of the tables: the batch work that keeps tables honest (the periodic sweep, and
every unfinished table picked up when a worker starts). A table's own steps (an agent's turn, a
deadline, a lobby's wait) are not Celery tasks: they run on an event loop
(:mod:`studyapp.tables.steps`). The three tasks of that name remain so that a site upgraded
with such tasks still queued runs them once, harmlessly (the seq check), under their leases.
"""

from __future__ import annotations

from celery import shared_task
from celery.signals import worker_ready

from studyapp import dispatch
from studyapp.tables import driver
from studyapp.tables import steps as table_steps


@shared_task(acks_late=True)
def take_agent_turn(table_id: int, seq: int, lease: str = "") -> str:
    return table_steps.agent_turn_inline(table_id, seq, lease)


@shared_task(acks_late=True)
def check_deadline(table_id: int, seq: int, lease: str = "") -> str:
    return table_steps.deadline_inline(table_id, seq, lease)


@shared_task(acks_late=True)
def check_lobby(table_id: int, lease: str = "") -> str:
    return table_steps.lobby_inline(table_id, lease)


@shared_task
def resume_tables() -> list[int]:
    return driver.resume_unfinished()


@shared_task(acks_late=False, ignore_result=True)
def sweep_tables() -> dict[str, int]:
    """Celery beat sends this every ``TABLE_SWEEP_SECONDS`` (a lost one is simply the next)."""
    return driver.sweep()


@worker_ready.connect
def resume_on_worker_start(**_: object) -> None:
    """A worker that starts (or restarts after a crash) picks up every unfinished table."""
    dispatch.send(resume_tables)
