"""When a person's turn at a table is due, read from the table's state: the table's deadline
(:func:`studyapp.tables.timing.turn_deadline`) from the turn's start, plus the site's outages
meanwhile and the seat's own cut-off socket (:mod:`studyapp.tables.outages`, read from the
cache), so nobody is charged for the site's downtime. Computed here once for the scheduler (when
to check), the driver (whether it passed) and the board (the countdown the person sees).
"""

from __future__ import annotations

from datetime import datetime

from django.utils import timezone

from studyapp.tables import outages, timing
from studyapp.tables.store import TableState


def waiting_people(snap: TableState) -> list[int]:
    """The seats held by people that the table waits for now."""
    return [i for i in snap.waiting_for() if snap.seat(i).kind == timing.HUMAN]


def seat_due(snap: TableState, index: int, now: datetime | None = None) -> datetime | None:
    """When the person at seat ``index`` is past the deadline of the turn the table waits for,
    the site's outages since the turn began (and the seat's own, a socket the server cut off)
    added (:func:`studyapp.tables.outages.paused_seconds`); None: no deadline."""
    deadline = snap.turn_deadline()
    if deadline is None or snap.last_at is None:
        return None
    now = now or timezone.now()
    key = outages.table_key(snap.table.pk, snap.table.created_at)
    paused = outages.paused_seconds(snap.last_at, now, table=key, seat=index)
    return timing.turn_due(snap.last_at, deadline, paused)


def deadline_due(snap: TableState, now: datetime | None = None) -> datetime | None:
    """The one due time of the turn the table waits for: the earliest of its waiting people's
    (:func:`seat_due`), or None when no person with a deadline is waited for. The scheduler
    checks the turn then, the driver judges it by it, and the board counts down to it."""
    now = now or timezone.now()
    dues = [seat_due(snap, i, now) for i in waiting_people(snap)]
    known = [due for due in dues if due is not None]
    return min(known) if known else None
