"""The log store: a table's turns, and each process's fold of the tables being played.

:func:`commit` writes a turn (and what changes with it: a seat that changes hands, the end of the
game) and does nothing else; telling the seats and scheduling the next step follow it on the move
path (:mod:`studyapp.tables.services`).

A move does not replay the whole log: each process keeps the last fold it saw of each table being
played (:func:`recent_state`), and moves the fold on with the moves other processes broadcast (an
agent's turn committed on a worker; :func:`follow`). The log stays the source of truth. A fold
that is behind the log (a broadcast not yet arrived) commits at a ``seq`` that is taken, so the
unique key refuses it and the move is judged again on the fold caught up with the log (the turns
committed since, read in one query with the table's status: :func:`caught_up`); a rejection is
always judged on a caught-up fold too, and an agent's job, which must act on the latest state,
catches up the same way. This holds because a table being played changes only by turns (status
and seats change with a turn), and a fold only moves on by plain moves: a turn that changes a
seat or the table's status (a takeover, a pause, the end), or a status that is no longer
"playing", makes a rebuild from the whole log.
"""

from __future__ import annotations

import functools
import threading
from collections import OrderedDict
from contextlib import nullcontext
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import connection, transaction
from django.utils import timezone

from games import get_engine
from games.base import Engine, Event, IllegalMove
from studyapp.tables import timing
from studyapp.tables.models import PERSON_ACTOR, TABLE_EVENTS, Seat, Table, Turn
from studyapp.tables.moves import storable

# Event types only the driver writes (the engine accepts them from anyone, so we must filter).
DRIVER_EVENTS = ("abort", "takeover", "void", "resume")
# Folds of tables being played, per process: enough for every table a server holds sockets for.
RECENT_TABLES = 5000


@dataclass
class TableState:
    """A table rebuilt from its log: what every decision about the table is made from."""

    table: Table
    engine: Engine
    state: Any
    events: list[Event]
    seats: list[Seat]
    last_at: datetime | None = None
    last_turn: Turn | None = None  # the row just committed, when this state comes from a commit

    @property
    def next_seq(self) -> int:
        return len(self.events)

    @property
    def is_over(self) -> bool:
        return self.engine.is_over(self.state)

    def seat(self, index: int) -> Seat:
        return self.seats[index]

    def has_humans(self) -> bool:
        return any(seat.kind == Seat.Kind.HUMAN for seat in self.seats)

    def turn_deadline(self) -> float | None:
        """A person's turn deadline at this table as seated now, or None
        (:func:`studyapp.tables.timing.turn_deadline`: ``deadline_between_people`` included)."""
        return timing.turn_deadline(self.table.opts, (seat.kind for seat in self.seats))

    def committed_at(self, seq: int) -> datetime | None:
        """When the turn numbered ``seq`` was committed (one query; the last one is known)."""
        if seq == len(self.events) - 1:
            return self.last_at
        return (
            Turn.objects.filter(table_id=self.table.pk, seq=seq)
            .values_list("created_at", flat=True)
            .first()
        )

    def waiting_for(self) -> list[int]:
        """Seats the table waits for now (none unless it is being played)."""
        if self.table.status != Table.Status.PLAYING or self.is_over:
            return []
        return self.engine.to_move(self.state)


def table_state(table: Table | int) -> TableState:
    """Rebuild a table from its turns (fresh from the database, so it is never stale)."""
    table_id = table if isinstance(table, int) else table.pk
    table = Table.objects.get(pk=table_id)
    rows = list(
        Turn.objects.filter(table_id=table_id).order_by("seq").values("event", "created_at")
    )
    engine = get_engine(table.game)
    events = [storable(row["event"]) for row in rows]  # no old turn can break a page
    snap = TableState(
        table=table,
        engine=engine,
        state=engine.replay(table.config, events),
        events=events,
        seats=list(table.seats.order_by("index")),
        last_at=rows[-1]["created_at"] if rows else table.started_at,
    )
    remember(snap)
    return snap


_recent: OrderedDict[int, TableState] = OrderedDict()
_recent_lock = threading.Lock()


def remember(snap: TableState) -> None:
    """Keep the fold of a table being played for its next move in this process. The latest
    rebuild or commit wins; one that is already behind only costs a lost seq race."""
    table_id = snap.table.pk
    with _recent_lock:
        _recent.pop(table_id, None)
        if snap.table.status == Table.Status.PLAYING and not snap.is_over:
            _recent[table_id] = snap
        while len(_recent) > RECENT_TABLES:
            _recent.popitem(last=False)


def forget(table_id: int) -> None:
    """Drop this process's fold of a table (an id used before, by a rolled-back test, is a new
    table now)."""
    with _recent_lock:
        _recent.pop(table_id, None)


def follow(table_id: int, seq: int, event: Event | None) -> None:
    """A move committed elsewhere was broadcast (``seq`` tables' turns now): move this process's
    fold of the table on by ``event``, if the fold was one turn behind. ``event`` is None for a
    turn that changed more than the log (see the module): the fold is then dropped."""
    with _recent_lock:
        snap = _recent.get(table_id)
        if snap is None or snap.next_seq >= seq:
            return
        del _recent[table_id]
    if event is None or snap.next_seq != seq - 1:
        return
    after = _moved_on(snap, [event], timezone.now())
    if after is not None:  # else the next move rebuilds
        remember(after)


def _moved_on(snap: TableState, events: list[Event], last_at: Any) -> TableState | None:
    """``snap`` moved on by ``events``, plain moves committed after it in this order; None when
    one of them changed more than the log (a driver event) or the engine refuses it (cannot
    happen for a committed move): the table must then be rebuilt from its log."""
    state = snap.state
    for event in events:
        if event.get("type") in DRIVER_EVENTS:
            return None
        try:
            state = snap.engine.apply(state, event)
        except IllegalMove:
            return None
    return TableState(
        table=snap.table,
        engine=snap.engine,
        state=state,
        events=[*snap.events, *events],
        seats=snap.seats,
        last_at=last_at,
    )


def is_followed(table_id: int) -> bool:
    """Whether this process keeps a fold of the table (it saw the table being played)."""
    with _recent_lock:
        return table_id in _recent


def recent_state(table_id: int) -> TableState:
    """The table as this process last saw it being played, else rebuilt from the log. It may be
    behind the log; :func:`studyapp.tables.services.submit` says why that is safe."""
    with _recent_lock:
        snap = _recent.get(table_id)
    return snap if snap is not None else table_state(table_id)


def caught_up(table_id: int) -> TableState:
    """The table as its log has it now, for whoever must act on the latest state (an agent's
    turn, a move that lost its ``seq`` race or was refused on a fold that may be behind): this
    process's fold moved on by the turns committed since, read in one query with the table's
    status, or a rebuild when there is no fold, the table is no longer being played, or a turn
    since changed more than the log (a driver event: a takeover, a withdrawn question, an abort;
    see the module for why plain turns are enough)."""
    with _recent_lock:
        snap = _recent.get(table_id)
    if snap is None:
        return table_state(table_id)
    rows = turns_since(table_id, snap.next_seq)
    if not rows or rows[0][0] != Table.Status.PLAYING:
        return table_state(table_id)
    turns = [row[1:] for row in rows if row[1] is not None]
    if not turns:
        return snap
    if [seq for seq, _, _ in turns] != list(range(snap.next_seq, snap.next_seq + len(turns))):
        return table_state(table_id)
    after = _moved_on(snap, [storable(event) for _, event, _ in turns], turns[-1][2])
    if after is None:
        return table_state(table_id)
    remember(after)
    return after


# Two reads on the move path, written out: caught_up's (every agent turn, every move judged again)
# and the seat a socket holds (asked before each move). The ORM's building of each cost more CPU
# than the database's answer (about 1 ms against 0.2 ms on the benchmark machine,
# benchmarks/ws_load.py --mode study). Names come from the models; values come back through the
# fields' own converters (:func:`converted`), as the ORM returns them.
TURNS_SINCE = """
    SELECT t.{table_status}, u.{turn_seq}, u.{turn_event}, u.{turn_created_at}
    FROM {table} t LEFT JOIN {turn} u ON u.{turn_table} = t.{table_id} AND u.{turn_seq} >= %s
    WHERE t.{table_id} = %s ORDER BY u.{turn_seq}
"""
SESSION_SEAT = """
    SELECT {seat_id} FROM {seat} WHERE {seat_table} = %s AND {seat_session_key} = %s
    ORDER BY {seat_index} LIMIT 1
"""


def plain_sql(template: str) -> str:
    """``template`` with the tables (``{turn}``) and columns (``{turn_seq}``) it names quoted
    for this database (written once per process and database)."""
    return _quoted(template, connection.vendor)


@functools.cache
def _quoted(template: str, vendor: str) -> str:
    models = {"table": Table, "seat": Seat, "turn": Turn}
    names = {name: model._meta.db_table for name, model in models.items()}
    for name, model in models.items():
        for field in model._meta.concrete_fields:
            names[f"{name}_{field.name}"] = field.column
    quote = connection.ops.quote_name
    return template.format(**{name: quote(value) for name, value in names.items()})


INSERT_FIELDS = ("table", "seq", "seat", "event", "usage", "actor", "created_at")
INSERT_TURN = (
    "INSERT INTO {turn} ("
    + ", ".join(f"{{turn_{name}}}" for name in INSERT_FIELDS)
    + ") VALUES ("
    + ", ".join(["%s"] * len(INSERT_FIELDS))
    + ")"
)


def insert_turn(turn: Turn) -> Turn:
    """Save a new ``turn`` in one plain INSERT (IntegrityError if its seq is taken), each value
    prepared by its own field as the ORM would; the ORM's ``save`` cost as much CPU again as the
    round trip, on every move. Turns have no save signals to send. Returns ``turn``, saved."""
    fields = [Turn._meta.get_field(name) for name in INSERT_FIELDS]
    values = [field.get_db_prep_save(getattr(turn, field.attname), connection) for field in fields]
    returning = connection.features.can_return_columns_from_insert
    sql = plain_sql(INSERT_TURN) + (plain_sql(" RETURNING {turn_id}") if returning else "")
    with connection.cursor() as cursor:
        cursor.execute(sql, values)
        turn.pk = cursor.fetchone()[0] if returning else cursor.lastrowid
    turn._state.adding, turn._state.db = False, connection.alias
    return turn


def turns_since(table_id: int, seq: int) -> list[tuple[str, int | None, Event | None, Any]]:
    """The table's status, with each turn from ``seq`` on (``(status, seq, event, created_at)``;
    one row of ``(status, None, None, None)`` when there is none). One query."""
    with connection.cursor() as cursor:
        cursor.execute(plain_sql(TURNS_SINCE), [seq, table_id])
        rows = cursor.fetchall()
    event_field, at_field = Turn._meta.get_field("event"), Turn._meta.get_field("created_at")
    return [
        (status, seq, None, None)
        if seq is None
        else (status, seq, converted(event_field, event), converted(at_field, at))
        for status, seq, event, at in rows
    ]


def session_seat_id(table_id: int, session_key: str) -> int | None:
    """The id of the seat held by the browser session ``session_key`` at the table. One query."""
    with connection.cursor() as cursor:
        cursor.execute(plain_sql(SESSION_SEAT), [table_id, session_key])
        row = cursor.fetchone()
    return None if row is None else row[0]


def converted(field: Any, value: Any) -> Any:
    """A column's raw value as the ORM returns it for ``field`` (JSON parsed, a datetime made
    aware on SQLite): the backend's converters, then the field's."""
    if value is None:
        return None
    column = field.get_col(field.model._meta.db_table)
    for convert in connection.ops.get_db_converters(column) + column.get_db_converters(connection):
        value = convert(value, column, connection)
    return value


def actor_of(snap: TableState, event: Event) -> str:
    """Who makes ``event`` at the table ``snap``: ``"person"`` for a seat a person holds, the
    agent spec for an agent's seat (one that took over a person's seat included), empty for the
    table's own events."""
    index = event.get("seat")
    if event.get("type") in TABLE_EVENTS or not isinstance(index, int):
        return ""
    if not 0 <= index < len(snap.seats):
        return ""
    seat = snap.seats[index]
    return PERSON_ACTOR if seat.kind == Seat.Kind.HUMAN else seat.agent_spec


def commit(
    snap: TableState,
    event: Event,
    new_state: Any,
    *,
    usage: dict[str, Any] | None = None,
    actor: str | None = None,
    **seat_changes: Any,
) -> TableState:
    """Write ``event`` as the next turn (IntegrityError if that seq is taken) and mark the table
    finished when the game ends; returns the table after it, which this process remembers. Nothing
    else: the move path (:func:`studyapp.tables.services.record`) tells the seats and schedules.
    ``usage`` is what an agent's turn cost, stored with it (``Turn.usage``).
    ``seat_changes`` updates the event's seat in the same transaction (a takeover).
    ``actor`` (``Turn.actor``) is who made the move; by default the seat's holder before the
    move (:func:`actor_of`)."""
    clean = storable(event)
    if clean != event:  # a model's text that cannot be stored (a NUL): stored and played cleaned
        event, new_state = clean, snap.engine.apply(snap.state, clean)
    now = timezone.now()
    table = snap.table
    game_over = snap.engine.is_over(new_state)
    # A lone INSERT needs no transaction of its own (one round trip instead of three); inside
    # someone else's transaction a savepoint keeps a lost seq race from breaking it.
    several_writes = seat_changes or game_over or connection.in_atomic_block
    with transaction.atomic() if several_writes else nullcontext():
        turn = insert_turn(
            Turn(
                table_id=table.pk,
                seq=snap.next_seq,
                seat=event.get("seat"),
                event=event,
                usage=storable(usage or {}),  # a model's reply may hold a NUL
                actor=actor_of(snap, event) if actor is None else actor,
                created_at=now,
            )
        )
        if seat_changes:
            Seat.objects.filter(table_id=table.pk, index=event["seat"]).update(**seat_changes)
        if game_over:
            ended = Table.Status.ABORTED if event["type"] == "abort" else Table.Status.FINISHED
            Table.objects.filter(pk=table.pk).update(status=ended, finished_at=now)
            table.status, table.finished_at = ended, now
    seats = snap.seats
    if seat_changes:
        seats = list(Seat.objects.filter(table_id=table.pk).order_by("index"))
    after = TableState(
        table=table,
        engine=snap.engine,
        state=new_state,
        events=[*snap.events, event],
        seats=seats,
        last_at=now,
        last_turn=turn,
    )
    remember(after)
    return after
