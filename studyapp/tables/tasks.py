"""Celery tasks of the tables: each names a table (and the ``seq`` it was scheduled for) and runs
one rule of the table under the job's lease (:func:`studyapp.tables.scheduling.under_lease`).
They are sent as task objects through :mod:`studyapp.dispatch`, to a worker or a thread of the
embedded server; the scheduler finds the three jobs by name in
:data:`studyapp.tables.scheduling.JOBS`, which this module fills (the scheduler cannot import it:
this module imports the scheduler).

Delivery: tasks are acknowledged late and rejected when their worker is lost (settings), so a task
whose worker dies is delivered again, after the broker's visibility timeout; long before that the
job's lease in the cache lapses and the periodic sweep (Celery beat) schedules it again. The
seq check and the unique ``(table, seq)`` key make every second delivery harmless.
"""

from __future__ import annotations

from celery import shared_task
from celery.signals import worker_ready

from studyapp import dispatch
from studyapp.tables import agent_turns, driver
from studyapp.tables.scheduling import JOBS, Lease, under_lease


@shared_task(acks_late=True)
def take_agent_turn(table_id: int, seq: int, lease: str = "") -> str:
    held = Lease(lease)
    return under_lease(held, lambda: agent_turns.take_agent_turn(table_id, seq, lease=held))


@shared_task(acks_late=True)
def check_deadline(table_id: int, seq: int, lease: str = "") -> str:
    return under_lease(Lease(lease), lambda: driver.check_deadline(table_id, seq))


@shared_task(acks_late=True)
def check_lobby(table_id: int, lease: str = "") -> str:
    return under_lease(Lease(lease), lambda: driver.check_lobby(table_id))


JOBS.update(take_agent_turn=take_agent_turn, check_deadline=check_deadline, check_lobby=check_lobby)


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
