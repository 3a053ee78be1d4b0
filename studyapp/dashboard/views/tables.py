"""Live tables: the researcher's monitor of every open table (and the recent ones), each row
saying where in a study the table is, who sits at it, when it last moved, what went wrong, and
whether it is stuck or paused; a paused table is resumed from here."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.contrib.admin.views.decorators import staff_member_required
from django.db.models import Count, Max, Q
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_POST

from games.twenty_questions.engine import NO_QUESTION
from studyapp import slots, steps
from studyapp.participants import budget, table_study
from studyapp.participants.models import Study
from studyapp.participants.pseudonyms import public_ids_by_seat
from studyapp.tables import driver, pace, timing
from studyapp.tables.models import Seat, Table
from studyapp.tables.services import TableState, caught_up

RECENT = 50
OPEN = (Table.Status.LOBBY, Table.Status.PLAYING, Table.Status.PAUSED)
# Stand-in moves: an offline agent's move made for a failed model (its usage names the stand-in),
# the same count as the exports' stand_in_moves. Passes and abstentions (a withdrawn question, an
# Invalid question, a passed clue, an abstained vote) are counted apart: people make them too (a
# missed deadline), so they tell nothing of failed models.
STAND_INS = Q(turns__usage__has_key="stand_in")
PASSES = (
    Q(turns__event__type="void")
    | Q(turns__event__type="question", turns__event__text=NO_QUESTION)
    | Q(turns__event__type="clue", turns__event__text=None)
    | Q(turns__event__type="vote", turns__event__target=None)
) & ~STAND_INS


@dataclass
class Row:
    """One table as the monitor shows it."""

    table: Table
    seats: list[dict[str, Any]] = field(default_factory=list)
    last_activity: datetime | None = None
    errors: int = 0
    stand_ins: int = 0
    passes: int = 0  # passes and abstentions, whoever made them
    waiting_for: str = ""
    stuck: bool = False

    @property
    def study(self) -> str:
        return table_study.of(self.table).study

    @property
    def condition(self) -> str:
        return table_study.of(self.table).condition or ""

    @property
    def round(self) -> Any:
        number = table_study.of(self.table).round
        return "" if number is None else number

    @property
    def paused(self) -> bool:
        return self.table.status == Table.Status.PAUSED


def expected_turn_seconds(snap: TableState, kind: str) -> float | None:
    """How long a turn of a seat of ``kind`` (agent, human) may take before the table counts as
    stuck (:func:`studyapp.tables.timing.stuck_after`): at a blinded table an agent's is read
    from the think time of the move it is asked for."""
    movers = [i for i in snap.waiting_for() if snap.seat(i).kind == kind]
    move = pace.move_kind(snap, movers[0]) if movers and kind == Seat.Kind.AGENT else ""
    seat_kinds = [seat.kind for seat in snap.seats]
    return timing.stuck_after(snap.table.opts, seat_kinds, kind, move)


def build_rows(tables: list[Table], now: datetime) -> list[Row]:
    ids = [table.pk for table in tables]
    people = public_ids_by_seat(ids)
    counts = {
        row["pk"]: row
        for row in Table.objects.filter(pk__in=ids)
        .values("pk")
        .annotate(
            last=Max("turns__created_at"),
            errors=Count("turns", filter=Q(turns__usage__has_key="error")),
            stand_ins=Count("turns", filter=STAND_INS),
            passes=Count("turns", filter=PASSES),
        )
    }
    rows = []
    for table in tables:
        found = counts.get(table.pk, {})
        row = Row(
            table=table,
            last_activity=found.get("last") or table.started_at or table.created_at,
            errors=found.get("errors", 0),
            stand_ins=found.get("stand_ins", 0),
            passes=found.get("passes", 0),
        )
        for seat in table.seats.all():
            row.seats.append(
                {
                    "index": seat.index,
                    "kind": seat.kind,
                    "who": seat_label(seat, people.get((table.pk, seat.index))),
                    "connected": seat.connected,
                }
            )
        if table.status == Table.Status.PLAYING:
            mark_waiting(row, now)
        rows.append(row)
    return rows


def seat_label(seat: Seat, public_id: str | None) -> str:
    """A seat as staff may see it here: the model spec of an agent, the pseudonym of a study
    participant, never a session key."""
    if seat.kind == Seat.Kind.AGENT:
        return seat.agent_spec
    if seat.is_vacant:
        return "empty"
    if public_id:
        return public_id
    return f"staff {seat.user}" if seat.user_id else "person (not in a study)"


def mark_waiting(row: Row, now: datetime) -> None:
    """Whom the table waits for, and whether it has waited longer than a turn should take.

    Read from the table's recent state, not a replay of its log: this process's fold of the
    table moved on by the turns committed since it (one query; the tables' ``caught_up``), so a
    refresh every few seconds costs each table in play a query, not a rebuild. Only a table this
    process holds no fold of (or one a driver event changed) is rebuilt, once."""
    snap = caught_up(row.table.pk)
    movers = snap.waiting_for()
    if not movers:
        return
    kinds = {snap.seat(index).kind for index in movers}
    row.waiting_for = ", ".join(f"seat {index}" for index in movers)
    limits = [expected_turn_seconds(snap, kind) for kind in kinds]
    limits = [limit for limit in limits if limit is not None]
    since = snap.last_at or row.last_activity
    if limits and since is not None:
        row.stuck = now - since > timedelta(seconds=min(limits))


@staff_member_required
def table_list(request: HttpRequest) -> HttpResponse:
    """Open tables (filtered by study and status) and the most recent closed ones."""
    studies = table_study.study_slugs(Table.objects.all())
    study = request.GET.get("study", "")
    status = request.GET.get("status", "")
    shown = Table.objects.prefetch_related("seats").select_related("study_part")
    if study:
        shown = shown.filter(table_study.in_study(study))
    if status in Table.Status.values:
        open_tables = shown.filter(status=status) if status in OPEN else shown.none()
        recent = shown.none() if status in OPEN else shown.filter(status=status)[:RECENT]
    else:
        open_tables = shown.filter(status__in=OPEN)
        recent = shown.exclude(status__in=OPEN)[:RECENT]
    now = timezone.now()
    rows = build_rows(list(open_tables), now)
    context = {
        "rows": rows,
        "recent": build_rows(list(recent), now),
        "studies": studies,
        "statuses": Table.Status.choices,
        "study": study,
        "status": status,
        "stuck": sum(row.stuck for row in rows),
        "paused": sum(row.paused for row in rows),
        "agents": agents_at_work(),
    }
    shown_study = Study.objects.filter(slug=study).first() if study else None
    if shown_study is not None:  # the study's model spend beside its plan and budget
        context.update(budget.page_context(shown_study))
    template = "dashboard/_table_rows.html" if request.htmx else "dashboard/tables.html"
    return render(request, template, context)


def agents_at_work() -> dict[str, Any]:
    """What the steps' executors hold now and how long each model takes (:func:`steps.status`),
    with each model's site-wide call limit and the slots held of it: a study whose agents wait on
    their models, or on the limit, says so while it runs."""
    found = steps.status()
    for spec, figures in found["models"].items():
        figures["limit"] = slots.limit_for(spec) or None
        figures["held"] = slots.held(spec) if figures["limit"] else None
    found["models"] = dict(sorted(found["models"].items()))
    return found


@staff_member_required
def watch(request: HttpRequest, table_id: int) -> HttpResponse:
    """Staff watch a table on its own page, which renders the spectator view for them."""
    return redirect("tables:table", table_id)


@staff_member_required
@require_POST
def resume(request: HttpRequest, table_id: int) -> HttpResponse:
    """Resume a table paused because its answering model kept failing."""
    driver.resume(table_id)
    return redirect("dashboard:tables")
