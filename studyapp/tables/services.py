"""The one API other apps use to create and drive tables.

Every move follows the same path whoever makes it (a socket, a Celery task, a deadline): rebuild
the table from its log, let the engine validate, commit the ``Turn`` under the unique
``(table, seq)`` key, and only then tell the seats (each gets its own rendered view) and let the
driver schedule whatever the table waits for next. Losing the race for a ``seq`` means someone else
moved first: validate again against the new state.

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

import logging
import threading
from collections import OrderedDict
from contextlib import nullcontext
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from channels.layers import get_channel_layer
from django.db import IntegrityError, connection, transaction
from django.db.models import Count, FilteredRelation, Q
from django.utils import timezone

from games import get_engine
from games.base import Config, Engine, Event, IllegalMove
from studyapp.background import call_async
from studyapp.tables import signals
from studyapp.tables.models import Seat, Table, Turn
from studyapp.tables.moves import clean_action, storable

log = logging.getLogger(__name__)

COMMIT_ATTEMPTS = 5
# Event types only the driver writes (the engine accepts them from anyone, so we must filter).
DRIVER_EVENTS = ("abort", "takeover", "void", "resume")
PAUSED_MESSAGE = (
    "The game is paused: the answering side is unavailable. The researchers have been told; "
    "please wait, your questions so far are kept."
)
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

    def waiting_for(self) -> list[int]:
        """Seats the table waits for now (none unless it is being played)."""
        if self.table.status != Table.Status.PLAYING or self.is_over:
            return []
        return self.engine.to_move(self.state)


def table_group(table_id: int) -> str:
    """Every socket at a table (seats and spectators): one channel-layer send per move."""
    return f"table-{table_id}"


def create_table(
    game: str,
    config: Config | None,
    seats: list[dict[str, Any]],
    *,
    seed: int = 0,
    lobby: bool = False,
    **options: Any,
) -> Table:
    """Create a table and start it (or open it as a lobby while human seats are empty).

    ``config`` None lets the engine draw one from ``seed``. Each entry of ``seats`` is a dict:
    ``{"kind": "agent", "agent_spec": "offline:kb", "setting": "none"}`` or
    ``{"kind": "human", "session_key": ..., "user": ...}`` (no holder = a lobby place). An agent
    seat may add ``"policy": PolicyRecord`` (its text is shown to the model; see studyapp.agents).
    ``options``: wait_seconds, lobby_timeout, turn_deadline_seconds, dropout, agent_delay_seconds,
    replacement_spec (see :meth:`Table.option`).
    """
    engine = get_engine(game)
    if config is None:
        config = engine.new_config(seed)
    roles = engine.seats(config)
    if len(seats) != len(roles):
        raise ValueError(f"{game} with this config has {len(roles)} seats, got {len(seats)}")
    if options.get("dropout", "replace") not in ("replace", "skip", "end"):
        raise ValueError("dropout must be replace, skip or end")
    with transaction.atomic():
        table = Table.objects.create(
            game=game,
            config=config,
            seed=seed,
            options=options,
            status=Table.Status.LOBBY if lobby else Table.Status.PLAYING,
            started_at=None if lobby else timezone.now(),
        )
        Seat.objects.bulk_create(
            Seat(
                table=table,
                index=index,
                kind=spec.get("kind", Seat.Kind.AGENT),
                user=spec.get("user"),
                session_key=spec.get("session_key") or "",
                agent_spec=spec.get("agent_spec", ""),
                setting=spec.get("setting", ""),
                policy=spec.get("policy"),
            )
            for index, spec in enumerate(seats)
        )
    with _recent_lock:
        _recent.pop(table.pk, None)  # an id used before (a rolled-back test) is a new table now
    transaction.on_commit(lambda: kick_off(table.pk))
    return table


def kick_off(table_id: int) -> None:
    """Schedule a new table's first step once it is committed (a task must find it)."""
    from studyapp.tables import driver

    table = Table.objects.get(pk=table_id)
    if table.status == Table.Status.LOBBY:
        wait = float(table.option("wait_seconds"))
        driver.schedule("check_lobby", (table_id,), wait, table=table)
    else:
        driver.advance(table_state(table))


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


def recent_state(table_id: int) -> TableState:
    """The table as this process last saw it being played, else rebuilt from the log. It may be
    behind the log; :func:`submit` says why that is safe."""
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
    since = FilteredRelation("turns", condition=Q(turns__seq__gte=snap.next_seq))
    rows = list(
        Table.objects.filter(pk=table_id)
        .annotate(since=since)
        .order_by("since__seq")
        .values_list("status", "since__seq", "since__event", "since__created_at")
    )
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


def validate(snap: TableState, seat: int, action: dict[str, Any]) -> tuple[Event, Any]:
    """The event ``seat`` would commit with ``action`` and the state after it, or IllegalMove."""
    status = snap.table.status
    if status == Table.Status.LOBBY:
        raise IllegalMove("The game has not started yet: waiting for players.")
    if status == Table.Status.PAUSED:
        raise IllegalMove(PAUSED_MESSAGE)
    if status != Table.Status.PLAYING or snap.is_over:
        raise IllegalMove("The game is over.")
    if snap.seat(seat).kind != Seat.Kind.HUMAN:
        if snap.seat(seat).session_key or snap.seat(seat).user_id:
            raise IllegalMove(
                "This seat is no longer yours: you left the study or missed the turn deadline, "
                "so it is played for you now."
            )
        raise IllegalMove("An agent plays this seat now.")
    if seat not in snap.engine.to_move(snap.state):
        raise IllegalMove("It is not your turn.")
    if action.get("type") in DRIVER_EVENTS:
        raise IllegalMove("Players cannot send that; make a move of the game.")
    event = {**action, "seat": seat}
    return event, snap.engine.apply(snap.state, event)


def commit(
    snap: TableState,
    event: Event,
    new_state: Any,
    *,
    usage: dict[str, Any] | None = None,
    **seat_changes: Any,
) -> TableState:
    """Write ``event`` as the next turn (IntegrityError if that seq is taken), mark the table
    finished when the game ends, then broadcast and let the driver schedule the next step.
    ``usage`` is what an agent's turn cost, stored with it (``Turn.usage``).
    ``seat_changes`` updates the event's seat in the same transaction (a takeover)."""
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
        turn = Turn.objects.create(
            table_id=table.pk,
            seq=snap.next_seq,
            seat=event.get("seat"),
            event=event,
            usage=storable(usage or {}),  # a model's reply may hold a NUL
            created_at=now,
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
    if game_over:
        # Announced before the boards go out: a study books its rounds here, so a person's end
        # screen shows their running total with this game in it.
        signals.game_over.send(sender=Table, table=table)
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
    broadcast(after)
    from studyapp.tables import driver

    driver.advance(after)
    return after


def submit(table: Table | int, seat: int, action: dict[str, Any]) -> Turn:
    """A human seat's move: validate against the table, commit, broadcast.

    Raises IllegalMove with the reason (the door's, :mod:`studyapp.tables.moves`, or the
    engine's); a rejected move changes nothing. The move is judged on this process's recent fold
    of the table: if that fold is behind the log, the commit loses the race for its ``seq`` and
    the move is judged again on the fold caught up with the log (:func:`caught_up`), and a
    rejection is only given on a caught-up fold, so a stale fold can neither let a wrong move in
    nor turn a right one away."""
    table_id = table if isinstance(table, int) else table.pk
    action = clean_action(action)  # the door: typed fields and storable text, or a reason
    snap = recent_state(table_id)
    for _ in range(COMMIT_ATTEMPTS):
        try:
            event, new_state = validate(snap, seat, action)
        except IllegalMove:
            snap = caught_up(table_id)
            event, new_state = validate(snap, seat, action)
        try:
            return commit(snap, event, new_state).last_turn
        except IntegrityError:
            snap = caught_up(table_id)  # another writer took this seq: judge again
    raise IllegalMove("The table is busy; please try again.")


def start(table: Table) -> None:
    """Open a lobby table for play."""
    Table.objects.filter(pk=table.pk, status=Table.Status.LOBBY).update(
        status=Table.Status.PLAYING, started_at=timezone.now()
    )
    snap = table_state(table.pk)
    broadcast(snap)
    from studyapp.tables import driver

    driver.advance(snap)


def broadcast(snap: TableState) -> None:
    """Tell every socket at the table, in one channel-layer send: the message carries each
    listened-to seat's own rendered view, and each socket passes on only its seat's (the views
    stay inside the server; a browser never gets the full state or another seat's view).
    Spectators are rare: they get no view and re-render for themselves.

    It never raises: a publish that meets a broken Redis connection is sent again on a new one
    (the pool's retry, ``settings.redis_resilience``), and one that still fails is logged and
    left to the sockets' catch-up (:func:`table_version`)."""
    from studyapp.tables.rendering import render_board

    layer = get_channel_layer()
    if layer is None:
        return
    boards = [
        render_board(snap, seat.index)
        # nobody listens to an agent's seat, unless it took over from a person
        if seat.kind == Seat.Kind.HUMAN or seat.session_key or seat.user_id
        else None
        for seat in snap.seats
    ]
    message = {
        "type": "table.update",
        "seq": snap.next_seq,
        "status": snap.table.status,
        "boards": boards,
        "event": followable(snap),
    }
    try:
        call_async(layer.group_send, table_group(snap.table.pk), message)
    except Exception as err:  # Redis down even after the client's retries (settings.py)
        # The turn is committed and the driver must still schedule the next step: a broadcast
        # that cannot be sent is not an error of the move. Every socket compares the seq it
        # showed with the log's on its next heartbeat and sends its board then (consumers).
        log.warning(
            "table %s: the board at seq %s was not broadcast (%s: %s); sockets catch up on "
            "their next heartbeat",
            snap.table.pk,
            snap.next_seq,
            type(err).__name__,
            err,
        )


def followable(snap: TableState) -> Event | None:
    """The move just committed, when other processes may move their folds on by it (see
    :func:`follow`): a plain move at a table still being played. Events stay inside the server
    (the channel layer); sockets only pass on their seat's board."""
    if snap.last_turn is None or not snap.events or snap.next_seq != snap.last_turn.seq + 1:
        return None
    event = snap.events[-1]
    if event.get("type") in DRIVER_EVENTS or snap.table.status != Table.Status.PLAYING:
        return None
    return None if snap.is_over else event


def find_seat(table_id: int, session_key: str | None, user: Any) -> Seat | None:
    """The seat this browser holds at the table: by session (participants) or by user (staff)."""
    seats = Seat.objects.filter(table_id=table_id)
    if user is not None and user.is_authenticated:
        seat = seats.filter(user=user).first()
        if seat is not None:
            return seat
    if session_key:
        return seats.filter(session_key=session_key).first()
    return None


def touch_seat(seat_id: int, connected: bool) -> None:
    """Presence: the last time a seat's browser was heard from, and whether it is connected."""
    Seat.objects.filter(pk=seat_id).update(connected=connected, last_seen=timezone.now())


def table_version(table_id: int) -> tuple[int, str] | None:
    """What a socket compares with what it last showed, to find a broadcast it missed: the
    table's number of turns (the seq of its next turn, as in a broadcast) and its status (a lobby
    that started or closed changes no turn). One query; None if the table is gone."""
    row = (
        Table.objects.filter(pk=table_id)
        .annotate(turn_count=Count("turns"))
        .values_list("turn_count", "status")
        .first()
    )
    return None if row is None else (row[0], row[1])
