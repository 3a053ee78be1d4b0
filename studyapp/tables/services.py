"""The one API other apps use to create and drive tables, and the move path.

Every move follows the same path whoever makes it (a socket, a Celery task, a deadline):
:func:`record` commits the ``Turn`` under the unique ``(table, seq)`` key (the log store,
:mod:`studyapp.tables.store`, which only stores), then announces a game that ended
(``signals.game_over``), tells the seats (:mod:`studyapp.tables.broadcast`, each seat gets its
own rendered view) and schedules whatever the table waits for next
(:mod:`studyapp.tables.scheduling`). A person's move is judged first on this process's fold of
the table (:func:`submit`); losing the race for a ``seq`` means someone else moved first: judge
again against the new state.
"""

from __future__ import annotations

from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import Count
from django.utils import timezone

from games import get_engine, languages
from games.base import Config, Event, IllegalMove
from studyapp.tables import scheduling, signals, timing
from studyapp.tables.broadcast import broadcast
from studyapp.tables.models import Seat, Table, Turn
from studyapp.tables.moves import clean_action
from studyapp.tables.options import TableOptions
from studyapp.tables.store import (
    DRIVER_EVENTS,
    TableState,
    caught_up,
    commit,
    forget,
    recent_state,
    session_seat_id,
    table_state,
)

COMMIT_ATTEMPTS = 5
PAUSED_MESSAGE = (
    "The game is paused: the answering side is unavailable. The researchers have been told; "
    "please wait, your questions so far are kept."
)


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
    seat may add ``"policy": PolicyRecord`` (its text is shown to the model; see studyapp.tables.seat_agents).
    ``options``: wait_seconds, lobby_timeout, turn_deadline_seconds, dropout, agent_delay_seconds,
    replacement_spec, ... (every key: :class:`studyapp.tables.options.TableOptions`, which
    refuses a value that would not work with ValueError).
    """
    engine = get_engine(game)
    if config is None:
        config = engine.new_config(seed)
    roles = engine.seats(config)
    if len(seats) != len(roles):
        raise ValueError(f"{game} with this config has {len(roles)} seats, got {len(seats)}")
    opts = TableOptions.checked(options)  # ValueError: a bad dropout policy, a bad value
    specs = [s.get("agent_spec", "") for s in seats if s.get("kind", "agent") == "agent"]
    # The agent that would take a person's seat (a dropout replaced, a lobby place filled): the
    # table's replacement_spec, else the site's default (TableOptions, driver.replacement_spec).
    people = any(s.get("kind", "agent") == "human" for s in seats)
    if people and opts.hands_over(lobby):
        specs.append(opts.replacement_spec)
    for spec in specs:
        problem = languages.offline_problem(spec, opts.language)
        if problem:  # an English-only agent at a table in another language would tell
            raise ValueError(problem)
    with transaction.atomic():
        table = Table.objects.create(
            game=game,
            config=config,
            seed=seed,
            options=opts.to_json(),
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
    forget(table.pk)
    transaction.on_commit(lambda: kick_off(table.pk))
    return table


def kick_off(table_id: int) -> None:
    """Schedule a new table's first step once it is committed (a task must find it)."""
    table = Table.objects.get(pk=table_id)
    if table.status == Table.Status.LOBBY:
        # at its wait limit, or first when its hold ends (a blinded lobby's)
        wait = timing.lobby_check_seconds(table.opts)
        scheduling.schedule("check_lobby", (table_id,), wait, table=table)
    else:
        scheduling.advance(table_state(table))


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


def record(snap: TableState, event: Event, new_state: Any, **changes: Any) -> TableState:
    """The move path: commit ``event`` (IntegrityError if its seq is taken; ``changes`` as for
    :func:`~studyapp.tables.store.commit`), announce the end of the game (a study books its
    rounds here, before the boards go out, so a person's end screen shows their running total
    with this game in it), tell the seats and schedule the next step."""
    after = commit(snap, event, new_state, **changes)
    if after.is_over:
        signals.announce(signals.game_over, table=after.table, snap=after)
    broadcast(after)
    scheduling.advance(after)
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
            return record(snap, event, new_state).last_turn
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
    scheduling.advance(snap)


def find_seat(table_id: int, session_key: str | None, user: Any) -> Seat | None:
    """The seat this browser holds at the table: by session (participants) or by user (staff)."""
    seats = Seat.objects.filter(table_id=table_id).order_by("index")  # no join for Meta's order
    if user is not None and user.is_authenticated:
        seat = seats.filter(user=user).first()
        if seat is not None:
            return seat
    if session_key:
        return seats.filter(session_key=session_key).first()
    return None


def held_seat_id(table_id: int, session_key: str | None, user: Any) -> int | None:
    """The id of the seat :func:`find_seat` finds, in one plain query for a participant's
    session (a socket asks before each move: the ORM's building of the query cost more than the
    query, benchmarks/ws_load.py --mode study)."""
    if user is not None and user.is_authenticated:
        seat = find_seat(table_id, session_key, user)
        return None if seat is None else seat.pk
    return session_seat_id(table_id, session_key) if session_key else None


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
