"""Renders a table as one seat sees it: the same partial the page includes and the socket pushes.

The context is built from ``engine.observe(state, seat)`` and nothing else about the game, so no
other seat's word or role can reach a template. Spectators (staff) see the public log instead.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from django.template.loader import render_to_string
from django.utils.html import escape
from django.utils.safestring import SafeString

from studyapp.tables.models import Seat, Table
from studyapp.tables.services import TableState

GAME_TEMPLATES = {
    "twenty-questions": "tables/twenty_questions/_board.html",
    "undercover": "tables/undercover/_board.html",
}


@cache
def word_list(words: tuple[str, ...]) -> SafeString:
    """Twenty Questions' candidate words, joined and escaped once per process: the same words
    are on every questioner's board at every move, and escaping them each time was two thirds
    of rendering that board."""
    return escape(", ".join(words))


def board_context(snap: TableState, seat: int | None, error: str | None = None) -> dict[str, Any]:
    table = snap.table
    viewer = None if seat is None else snap.seat(seat)
    context: dict[str, Any] = {
        "table": table,
        "status": table.status,
        "lobby": table.status == Table.Status.LOBBY,
        "playing": table.status == Table.Status.PLAYING and not snap.is_over,
        "seat_index": seat,
        "spectator": seat is None,
        "replaced": viewer is not None and viewer.kind == Seat.Kind.AGENT,
        "error": error,
        "game_template": GAME_TEMPLATES[table.game],
        "seats": [
            {
                "index": s.index,
                "kind": s.kind,
                "vacant": s.is_vacant,
                "connected": s.connected,
                "you": s.index == seat,
            }
            for s in snap.seats
        ],
        "exit_code": table.exit_code,
        "seq": snap.next_seq,
    }
    if seat is None:
        context["events"] = snap.events
        if snap.is_over and table.status != Table.Status.LOBBY:
            context["outcome"] = sorted(snap.engine.outcome(snap.state).items())
    else:
        context["obs"] = snap.engine.observe(snap.state, seat)
        if "candidates" in context["obs"]:
            context["candidate_list"] = word_list(tuple(context["obs"]["candidates"]))
        context["your_turn"] = (
            context["playing"]
            and not context["replaced"]
            and (seat in snap.engine.to_move(snap.state))
        )
        context["actions"] = {
            shape["type"]: shape for shape in snap.engine.legal_actions(snap.state, seat)
        }
    return context


def render_board(snap: TableState, seat: int | None, error: str | None = None) -> str:
    return render_to_string("tables/_board.html", board_context(snap, seat, error))
