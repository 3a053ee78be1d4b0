"""Table pages: thin views over the services. The table page renders the same partial the socket
pushes, so a reload shows exactly what the seat saw; the move form also works as a plain POST."""

from __future__ import annotations

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import translation
from django.utils.html import escape
from django.views.decorators.http import require_POST

from games.base import IllegalMove
from studyapp import ratelimit
from studyapp.db import MOVE, working_on
from studyapp.tables import lobby, services
from studyapp.tables.hooks import hooks
from studyapp.tables.models import Seat, Table
from studyapp.tables.rendering import board_context, board_html
from studyapp.tables.socket_limits import TOO_FAST


def session_key(request: HttpRequest) -> str:
    """The key that identifies an anonymous player's browser (made on first use)."""
    if request.session.session_key is None:
        request.session.save()
    return request.session.session_key


def home(request: HttpRequest) -> HttpResponse:
    return render(request, "tables/home.html")


def too_many_games(request: HttpRequest) -> HttpResponse | None:
    """The home page's open games are limited per address like new participants at a study link
    (counted apart): each one is a table whose agents run on the workers, on the site's model."""
    if ratelimit.over_limit(request, "tables"):
        return render(request, "tables/429.html", status=429)
    return None


@require_POST
def play_twenty_questions(request: HttpRequest) -> HttpResponse:
    if refused := too_many_games(request):
        return refused
    table = lobby.start_twenty_questions(session_key(request), request.user)
    return redirect("tables:table", table.pk)


def play_undercover(request: HttpRequest) -> HttpResponse:
    if request.method != "POST":
        return render(request, "tables/undercover_join.html", {"players": lobby.UNDERCOVER_PLAYERS})
    if refused := too_many_games(request):
        return refused
    try:
        humans = int(request.POST.get("humans", "1"))
        seat = lobby.join_undercover(session_key(request), humans, request.user)
    except ValueError:
        return render(
            request,
            "tables/undercover_join.html",
            {"players": lobby.UNDERCOVER_PLAYERS, "error": "Choose 1 to 5 people."},
            status=400,
        )
    return redirect("tables:table", seat.table_id)


def seat_of(request: HttpRequest, table: Table) -> Seat | None:
    return services.find_seat(table.pk, request.session.session_key, request.user)


def table_page(request: HttpRequest, table_id: int) -> HttpResponse:
    table = get_object_or_404(Table, pk=table_id)
    seat = seat_of(request, table)
    if seat is None and not request.user.is_staff:
        raise Http404("You have no seat at this table.")
    with translation.override(table.language):
        context = board_context(services.table_state(table), seat.index if seat else None)
        if request.htmx:
            return HttpResponse(board_html(context, request))
        context["board"] = board_html(context, request)
        context["heartbeat_seconds"] = settings.HEARTBEAT_SECONDS
        parts = hooks().table_page(table, request) or {}
        context["page_title"], context["page_bar"] = parts.get("title"), parts.get("bar", "")
        return render(request, "tables/table.html", context)


@require_POST
def leave(request: HttpRequest, table_id: int) -> HttpResponse:
    """Leave a lobby before the game starts: the place is freed for someone else. A study's table
    sends the person back to their study (its Continue address), not to the open games. A
    browser with no seat there goes to the open games whether the table exists or not: walking
    table ids must not name their studies."""
    table = Table.objects.filter(pk=table_id).first()
    seat = seat_of(request, table) if table is not None else None
    if seat is None:
        return redirect("tables:home")
    if not lobby.leave(seat):
        return redirect("tables:table", table.pk)  # the game has started meanwhile
    return redirect(table.opts.return_url or "tables:home")


@require_POST
def move(request: HttpRequest, table_id: int) -> HttpResponse:
    """The no-JavaScript path of the move form (the socket is the usual one), a move's commit
    like a socket's: not limited to the pages' share of the pool (studyapp.db.working_on)."""
    with working_on(MOVE):
        return _move(request, table_id)


def _move(request: HttpRequest, table_id: int) -> HttpResponse:
    table = get_object_or_404(Table, pk=table_id)
    seat = seat_of(request, table)
    if seat is None:
        raise Http404("You have no seat at this table.")
    # The same allowance as a socket's (a burst, then SOCKET_MOVES_PER_SECOND), per seat, over
    # ten seconds: a flood of POSTs is refused before any game work.
    allowance = settings.SOCKET_MOVE_BURST + int(10 * settings.SOCKET_MOVES_PER_SECOND)
    if ratelimit.over_rate(f"moves:{seat.pk}", 10, allowance):
        with translation.override(table.language):
            back = reverse("tables:table", args=[table.pk])
            page = (
                f'<!doctype html><p role="alert">{escape(str(TOO_FAST))}</p><a href="{back}">⟵</a>'
            )
            return HttpResponse(page, status=429)
    try:
        services.submit(table.pk, seat.index, request.POST.dict())
    except IllegalMove as err:
        with translation.override(table.language):
            context = board_context(services.table_state(table), seat.index, err.reason)
            context["board"] = board_html(context, request)
            return render(request, "tables/table.html", context, status=400)
    return redirect("tables:table", table.pk)
