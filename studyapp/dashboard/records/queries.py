"""What records are read from: the ORM queries that choose a study's tables and people, and the
reads of tables, seats, rounds and turns behind each chunk of records.

The reads return plain rows (:class:`Row`, tuples, lists); :mod:`.shaping` turns them into
records and frames. Turns are read with plain SQL, and this is the one module that knows the
difference between PostgreSQL and SQLite (array parameters, JSON operators, time text).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterator
from datetime import UTC
from typing import Any

from django.db import connection
from django.db.models import Q, QuerySet
from django.db.models.expressions import RawSQL

from studyapp.participants import table_study
from studyapp.participants.models import Participant, Round, Study, StudyTable
from studyapp.pipelines.models import Job
from studyapp.tables.models import PolicyRecord, Seat, Table, Turn
from studyapp.tables.moves import storable

CHUNK = 5000  # tables per chunk

TABLE_FIELDS = ("pk", "game", "config", "seed", "status", "options", "started_at", "finished_at")
SEAT_FIELDS = (
    "table_id",
    "index",
    "kind",
    "agent_spec",
    "setting",
    "policy_id",
)
ROUND_FIELDS = ("table_id", "participant_id", "number", "reward", "seat")
PERSON_FIELDS = ("pk", "public_id", "condition", "is_pilot", "status")


def study_participants(study: Study, include_pilots: bool = False) -> QuerySet[Participant]:
    """The study's participants who started, less those who withdrew (and pilots unless asked)."""
    found = study.participants.exclude(status=Participant.Status.WITHDRAWN)
    if not include_pilots:
        found = found.exclude(is_pilot=True)
    return found


# Everyone who consented is in the files, whatever became of them (finished, screened, dropped,
# timed out in a lobby, failed the checks, turned away by a full study, still playing). Left out:
# visitors who never consented or declined (nothing of theirs is kept) and people who withdrew
# (they asked for their data to be deleted).
NOT_EXPORTED = (
    Participant.Status.VISITED,
    Participant.Status.DECLINED,
    Participant.Status.WITHDRAWN,
)


def started(study: Study, include_pilots: bool = False) -> QuerySet[Participant]:
    """The people of a study's export: everyone who consented, less those who withdrew."""
    chosen = study_participants(study, include_pilots).exclude(status__in=NOT_EXPORTED)
    return chosen.select_related("study").order_by("pk")


def left_out(study: Study, include_pilots: bool = False) -> dict[str, int]:
    """How many of the study's people an export leaves out, by status (the README says why)."""
    found = study.participants.filter(status__in=NOT_EXPORTED)
    if not include_pilots:
        found = found.exclude(is_pilot=True)
    counts: dict[str, int] = {}
    for status in found.values_list("status", flat=True):
        counts[status] = counts.get(status, 0) + 1
    return counts


def people_outside(study: Study, include_pilots: bool = False) -> dict[str, int]:
    """The people who played and whose games the study's frame does not hold at all, by reason:
    ``pilot`` (pilots, unless asked for) and ``withdrawn`` (their data deleted from the files);
    the analysis adds them to its left-out counts (:func:`analysis.summary.summarize`)."""
    played = study.participants.filter(round_set__isnull=False).distinct()
    counts = {
        "withdrawn": played.filter(status=Participant.Status.WITHDRAWN, is_pilot=False).count()
    }
    if not include_pilots:
        counts["pilot"] = played.filter(is_pilot=True).count()
    return {reason: n for reason, n in counts.items() if n}


def model_jobs(study: Study) -> QuerySet:
    """The experiment jobs attached to the study (its model arm)."""
    return Job.objects.filter(kind="experiment", parameters__study=study.slug)


def study_tables(study: Study, include_pilots: bool = False) -> QuerySet[Table]:
    """The study's round tables (less those of withdrawn participants and of pilots unless
    asked) and the games of the experiment jobs attached to it."""
    rounds = Round.objects.filter(participant__in=study_participants(study, include_pilots))
    jobs = list(model_jobs(study).values_list("pk", flat=True))
    return Table.objects.filter(Q(pk__in=rounds.values("table_id")) | Q(options__job__in=jobs))


def agent_tables() -> QuerySet[Table]:
    """Tables played outside any study (agents, demos, staff games, experiment jobs)."""
    return Table.objects.exclude(pk__in=Round.objects.values("table_id"))


def table_chunks(tables: QuerySet[Table], chunk: int = CHUNK) -> list[list[int]]:
    """The ids of ``tables`` in the order records are built, ``chunk`` at a time."""
    ids = list(tables.order_by("created_at", "pk").values_list("pk", flat=True))
    return [ids[start : start + chunk] for start in range(0, len(ids), chunk)]


def among(ids: list[int]) -> list[int] | RawSQL:
    """``ids`` for an ``__in`` lookup; on PostgreSQL one array parameter, since thousands of
    placeholders cost more to send and plan than the rows cost to read."""
    if connection.vendor == "postgresql":
        return RawSQL("SELECT unnest(%s::bigint[])", [ids])
    return ids


class Row:
    """A row read for records: the named fields of a model, as attributes, and nothing else."""

    def __repr__(self) -> str:
        return f"Row({self.__dict__})"


def read_rows(found: QuerySet, fields: tuple[str, ...]) -> list[Any]:
    """Rows of ``fields`` read as tuples (Django's dict per row cost more than the row)."""
    rows = []
    for values in found.values_list(*fields):
        row = Row()
        row.__dict__ = dict(zip(fields, values, strict=True))
        rows.append(row)
    return rows


def read_tables(
    ids: list[int],
) -> tuple[dict[int, Row], dict[int, list[Row]], dict[int, dict[int, Row]]]:
    """The tables ``ids`` by id (each with its ``study_part``), their seats in seat order (each with its ``policy`` row or
    None), and their study rounds by seat (each with its ``participant`` row)."""
    # Rows of only the fields records use: model instances were most of the cost at this size.
    by_id = {t.pk: t for t in read_rows(Table.objects.filter(pk__in=among(ids)), TABLE_FIELDS)}
    parts = table_study.of_tables(by_id)
    for pk, table in by_id.items():
        table.study_part = parts.get(pk) or StudyTable()  # study, condition, round, seat order
    seats: dict[int, list[Row]] = defaultdict(list)
    found = read_rows(Seat.objects.filter(table_id__in=among(ids)).order_by("index"), SEAT_FIELDS)
    policies = {p.pk: p for p in read_rows(_policies(found), ("pk", "kind", "text"))}
    for seat in found:
        seat.policy = policies.get(seat.policy_id)
        seats[seat.table_id].append(seat)
    rounds: dict[int, dict[int, Row]] = defaultdict(dict)
    found = read_rows(Round.objects.filter(table_id__in=among(ids)), ROUND_FIELDS)
    chosen = Participant.objects.filter(pk__in=among(list({r.participant_id for r in found})))
    people = {p.pk: p for p in read_rows(chosen, PERSON_FIELDS)}
    for r in found:
        r.participant = people[r.participant_id]  # one instance per person, not per round
        rounds[r.table_id][r.seat] = r
    return by_id, seats, rounds


def _policies(seats: list[Row]) -> QuerySet:
    """The policies of the seats that have one (few: a join for every seat costs more)."""
    chosen = list({seat.policy_id for seat in seats if seat.policy_id is not None})
    return PolicyRecord.objects.filter(pk__in=among(chosen))


def turn_counts(table_ids: list[int]) -> dict[int, tuple[int, int]]:
    """Turns and the questioner's questions per table, counted by the database."""
    kind = (
        "event ->> 'type'" if connection.vendor == "postgresql" else "json_extract(event, '$.type')"
    )
    counted = (
        f"table_id, count(*), sum(CASE WHEN seat = 0 AND {kind} = 'question' THEN 1 ELSE 0 END)"
    )
    return {
        table_id: (int(n), int(q))
        for rows in _turn_query(counted, table_ids, "GROUP BY table_id")
        for table_id, n, q in rows
    }


def _turn_query(select: str, table_ids: list[int], rest: str = "") -> Iterator[list[tuple]]:
    """The rows of ``SELECT <select>`` over the turns of ``table_ids`` (then ``rest``: more
    conditions, a grouping, an order), in batches. Plain SQL: the ORM's per-row converters cost
    more than the export's whole budget at a million turns. On PostgreSQL the ids are one array
    parameter: thousands of placeholders cost more to parse than to read, and an ``IN`` subquery
    let the planner scan every turn of the database for each chunk."""
    if not table_ids:
        return
    if connection.vendor == "postgresql":
        matching, params = "= ANY(%s)", [table_ids]
    else:
        matching, params = f"IN ({', '.join(['%s'] * len(table_ids))})", list(table_ids)
    sql = f"SELECT {select} FROM {Turn._meta.db_table} WHERE table_id {matching} {rest}"
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        while rows := cursor.fetchmany(20_000):
            yield rows


def turn_usages(table_ids: list[int]) -> dict[int, list[dict]]:
    """The usage of every turn of ``table_ids`` that cost something (agents' turns), in order,
    without reading the rest of the log."""
    used: dict[int, list[dict]] = defaultdict(list)
    cost = "usage::text" if connection.vendor == "postgresql" else "usage"
    for rows in _turn_query(
        f"table_id, {cost}", table_ids, f"AND {cost} <> '{{}}' ORDER BY table_id, seq"
    ):
        for table_id, text in rows:
            used[table_id].append(usage_of(text))
    return used


def turn_columns(table_ids: list[int]) -> dict[str, list]:
    """Every turn of ``table_ids`` as columns: ``log`` (the table id), ``text`` (the event's JSON
    text), ``created_at`` (ISO-8601) and ``usage`` (parsed), each table's turns together and in
    order, and ``actor`` (``Turn.actor``: who made the move)."""
    found: dict[str, list] = {"log": [], "text": [], "created_at": [], "usage": [], "actor": []}
    for rows in _turn_rows(table_ids):
        for name, values in zip(found, zip(*rows, strict=True), strict=True):
            found[name].extend(values)
    if connection.vendor != "postgresql":
        found["created_at"] = [iso(value) for value in found["created_at"]]
    found["usage"] = [usage_of(cost) for cost in found["usage"]]
    return found


def _turn_rows(table_ids: list[int]) -> Iterator[list[tuple]]:
    """(table id, event JSON text, commit time, usage JSON text, actor) of every turn of
    ``table_ids``, in batches, each table's turns together and in order."""
    postgres = connection.vendor == "postgresql"
    when = "to_json(created_at) #>> '{}'" if postgres else "created_at"  # ISO-8601, as iso
    event = "event::text" if postgres else "event"
    usage = "usage::text" if postgres else "usage"
    yield from _turn_query(
        f"table_id, {event}, {when}, {usage}, actor", table_ids, "ORDER BY table_id, seq"
    )


def read_logs(table_ids: list[int]) -> dict[int, tuple[list, list, list, list]]:
    """Every table's events, the time each was committed (ISO-8601), what its model call cost
    and who made it (``Turn.actor``).
    Each distinct event text is parsed once (answers repeat), so events are shared: read them
    only."""
    logs: dict[int, tuple[list, list, list, list]] = {}
    postgres = connection.vendor == "postgresql"
    parsed: dict[str, Any] = {}
    for rows in _turn_rows(table_ids):
        for table_id, text, created_at, cost, actor in rows:
            events, times, usages, actors = logs.setdefault(table_id, ([], [], [], []))
            actors.append(actor)
            value = parsed.get(text) if isinstance(text, str) else text
            if value is None:
                value = parsed[text] = event_of(text)
            events.append(value)
            times.append(created_at if postgres else iso(created_at))
            usages.append(usage_of(cost))
    return logs


def event_of(text: str) -> dict[str, Any]:
    """A turn's event from its JSON text; text that escapes an unstorable character goes through
    the tables app's :func:`storable`, as the ORM would."""
    event = json.loads(text)
    return storable(event) if "\\u" in text else event


def usage_of(text: str | None) -> dict[str, Any] | None:
    """A turn's usage from its JSON text; None when the turn cost nothing (``{}``)."""
    return json.loads(text) or None if text and text != "{}" else None


def iso(value: Any) -> str | None:
    """A database time as ISO-8601 with its offset: PostgreSQL's text ``2026-01-02
    03:04:05.6+00`` or SQLite's naive UTC text, alike."""
    if value is None:
        return None
    if not isinstance(value, str):  # SQLite's driver hands back naive UTC datetimes
        return (value if value.tzinfo else value.replace(tzinfo=UTC)).isoformat()
    text = value.replace(" ", "T", 1)
    if text.endswith(("+00", "-00")) or text[-3] in "+-" and text[-2:].isdigit():
        return text + ":00"
    if "+" not in text[10:] and "-" not in text[10:] and not text.endswith("Z"):
        return text + "+00:00"
    return text
