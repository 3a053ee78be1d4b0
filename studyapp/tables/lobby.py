"""Where tables come from for visitors: a solo Twenty Questions game against the offline oracle,
and mixed Undercover tables that form as humans arrive (filled by agents at the wait limit)."""

from __future__ import annotations

import random
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from studyapp.tables import services, signals, timing
from studyapp.tables.hooks import hooks
from studyapp.tables.models import Seat, Table

UNDERCOVER_PLAYERS = 5


def start_twenty_questions(session_key: str, user: Any = None, **options: Any) -> Table:
    """A new game for this browser: the human asks, an offline oracle answers. A visitor who
    walks away ends their game at the turn deadline: nobody else sits there, so an agent
    playing it out (with a model, at a cost) would serve no one."""
    options.setdefault("dropout", "end")
    seed = random.randrange(2**31)
    return services.create_table(
        "twenty-questions",
        None,
        [
            {"kind": "human", "session_key": session_key, "user": _user(user)},
            {"kind": "agent", "agent_spec": settings.DEFAULT_AGENT_SPEC},
        ],
        seed=seed,
        **options,
    )


def join_undercover(session_key: str, humans: int, user: Any = None, **options: Any) -> Seat:
    """A seat at an open Undercover lobby that waits for ``humans`` people (1 to 5); the rest of
    the five seats are agents. Returns the seat this browser already holds at an open table of the
    same kind, so a second click or tab does not take two seats."""
    if not 1 <= humans <= UNDERCOVER_PLAYERS:
        raise ValueError(f"humans must be 1 to {UNDERCOVER_PLAYERS}")
    # As for Twenty Questions, a lone visitor's table ends when they leave; with other people at
    # it, an agent takes the seat so their game goes on.
    options.setdefault("dropout", "end" if humans == 1 else "replace")
    kind = f"undercover:{UNDERCOVER_PLAYERS}:{humans}"
    open_tables = Table.objects.filter(
        game="undercover",
        options__lobby_kind=kind,
        status__in=[Table.Status.LOBBY, Table.Status.PLAYING],
    )
    held = Seat.objects.filter(table__in=open_tables, session_key=session_key).first()
    if held is not None:
        return held
    with transaction.atomic():
        seat = open_place(open_tables.filter(status=Table.Status.LOBBY))
        if seat is None:
            seed = random.randrange(2**31)
            seats = [{"kind": "human"}] * humans + [
                {"kind": "agent", "agent_spec": settings.DEFAULT_AGENT_SPEC}
            ] * (UNDERCOVER_PLAYERS - humans)
            table = services.create_table(
                "undercover", None, seats, seed=seed, lobby=True, lobby_kind=kind, **options
            )
            seat = table.seats.get(index=0)
        full = take_place(seat, session_key, _user(user))
    start_if_full(seat.table_id, full)
    return seat


def open_place(lobbies: Any) -> Seat | None:
    """The first empty human place at one of ``lobbies`` (a queryset of lobby tables), locked
    until the transaction ends so two people never take the same place. Call in a transaction."""
    return (
        Seat.objects.select_for_update()
        .filter(table__in=lobbies, kind=Seat.Kind.HUMAN, session_key="", user__isnull=True)
        .order_by("table_id", "index")
        .first()
    )


def take_place(seat: Seat, session_key: str, user: Any = None) -> bool:
    """Seat a person at a lobby place; whether the lobby is now full. Call in the transaction of
    :func:`open_place`, then :func:`start_if_full` once it is committed."""
    seat.session_key = session_key
    seat.user = user
    seat.save(update_fields=["session_key", "user"])
    return not Seat.objects.filter(
        table_id=seat.table_id, kind=Seat.Kind.HUMAN, session_key="", user__isnull=True
    ).exists()


def start_if_full(table_id: int, full: bool) -> None:
    """A full lobby starts (a study's group lobby forms its group instead, see
    :func:`form_group`); otherwise everyone waiting sees one more person arrived."""
    table = Table.objects.get(pk=table_id)
    hold = timing.start_hold(table)
    if full and table.opts.group_lobby:
        form_group(table_id)
    elif full and (hold is None or hold <= timezone.now()):
        services.start(table)
    else:  # still waiting for people, or a blinded lobby's hold (its check_lobby starts it)
        services.broadcast(services.table_state(table_id))


def form_group(table_id: int) -> str:
    """A study's group lobby is never played: whoever runs the study (the participants app,
    through the tables' hooks, :meth:`~studyapp.tables.hooks.TablesHooks.form_group`) draws the
    group's condition and seats its people at tables of that condition. Returns what it did."""
    return hooks().form_group(table_id) or "nobody forms groups"


def leave(seat: Seat) -> bool:
    """Give a lobby place back so someone else can take it (a study's round at that place goes
    with it); False once the game has started
    (a seat in play is left by closing the page: the turn deadline then hands it to an agent)."""
    with transaction.atomic():
        table = Table.objects.select_for_update().get(pk=seat.table_id)
        if table.status != Table.Status.LOBBY:
            return False
        Seat.objects.filter(pk=seat.pk).update(session_key="", user=None, connected=False)
        # Whoever runs a study on this table forgets what waited at the place (a study's round).
        signals.lobby_place_left.send(sender=Table, table_id=table.pk, seat=seat.index)
    services.broadcast(services.table_state(table.pk))
    return True


def _user(user: Any) -> Any:
    return user if user is not None and user.is_authenticated else None
