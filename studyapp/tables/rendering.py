"""Renders a table as one seat sees it: the same partial the page includes and the socket pushes.

The context is built from ``engine.observe(state, seat)`` and nothing else about the game, so no
other seat's word or role can reach a template while the game runs; once it is over, the engine's
outcome (every seat's word and role, the reward) and the Twenty Questions answer are no secret and
every seat sees them. A study table with ``agents_disclosed`` False shows a player no seat's kind
(person or agent), in the lobby or at play. Spectators (staff) see the log, and only they see who plays each seat and the
words and roles during play: those facts are put into a context only when ``seat`` is None.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from django.conf import settings
from django.http import HttpRequest
from django.template import engines
from django.utils import timezone, translation
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext_noop

from games.twenty_questions.engine import NO_QUESTION
from studyapp.tables import dues, pace, timing
from studyapp.tables.hooks import hooks
from studyapp.tables.models import SKIP_SPEC, Seat, Table
from studyapp.tables.store import TableState

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


@cache
def word_options(words: tuple[str, ...]) -> SafeString:
    """The candidate words as ``<option>`` elements of the Guess control's datalist, built once
    per process for the same reason as :func:`word_list`."""
    return SafeString("".join(f'<option value="{escape(word)}">' for word in words))


def board_context(snap: TableState, seat: int | None, error: str | None = None) -> dict[str, Any]:
    table = snap.table
    viewer = None if seat is None else snap.seat(seat)
    # A study that does not disclose its agents: a player's view names no seat's kind (staff,
    # as spectators, still see everything).
    blinded = seat is not None and table.opts.blinded
    context: dict[str, Any] = {
        "table": table,
        "status": table.status,
        "lobby": table.status == Table.Status.LOBBY,
        "playing": table.status == Table.Status.PLAYING and not snap.is_over,
        "paused": table.status == Table.Status.PAUSED,
        "seat_index": seat,
        "spectator": seat is None,
        "replaced": viewer is not None and viewer.kind == Seat.Kind.AGENT,
        "error": error,
        "game_template": GAME_TEMPLATES[table.game],
        "blinded": blinded,
        "seats": [
            {
                "index": s.index,
                "kind": "player" if blinded else s.kind,
                "vacant": s.is_vacant,
                "connected": s.connected,
                "you": s.index == seat,
            }
            for s in snap.seats
        ],
        "exit_code": table.exit_code,
        "seq": shown_seq(snap, blinded),
        # Twenty Questions' fallback question, written as the table's language says it
        "no_question": NO_QUESTION,
        # A study that discloses its agents marks them on every board during play, and says on
        # the board when a seat changed hands (a takeover); a blinded one says neither.
        "disclosed": seat is not None and table.opts.disclosed,
        "takeovers": [] if blinded else takeovers(snap),
    }
    if context["lobby"]:
        context.update(lobby_facts(table, snap.seats))
        if blinded:
            context.update(arrived=None, places=None, agent_places=None)
    if snap.is_over and table.status != Table.Status.LOBBY:
        context["outcome"] = sorted(snap.engine.outcome(snap.state).items())
        context["revealed_word"] = revealed_word(table.config)  # Twenty Questions' answer
    if seat is None:
        context["events"] = snap.events
        context["public"] = snap.engine.observe(snap.state, 0)  # its rounds; staff see it all
        context["staff_seats"] = staff_seats(snap)
    else:
        context["obs"] = snap.engine.observe(snap.state, seat)
        if "candidates" in context["obs"]:
            context["candidate_list"] = word_list(tuple(context["obs"]["candidates"]))
            context["candidate_options"] = word_options(tuple(context["obs"]["candidates"]))
        context["your_turn"] = (
            context["playing"]
            and not context["replaced"]
            and (seat in snap.engine.to_move(snap.state))
        )
        due = dues.seat_due(snap, seat) if context["your_turn"] else None
        if due is not None:
            # The person sees the due time the driver applies (outages included), ticking down.
            context["turn_seconds_left"] = timing.seconds_left(due)
            context["dropout"] = table.opts.dropout
        # The idle policy, told truthfully: a missed deadline passes the turn and the person
        # keeps their seat; only so many missed in a row take them out (driver.miss_turn).
        context["missed_limit"] = timing.missed_turns_limit(table.opts)
        if context["playing"] and not context["replaced"]:
            context["missed_now"] = timing.missed_in_a_row(snap.events, seat)
        context["actions"] = {
            shape["type"]: shape for shape in snap.engine.legal_actions(snap.state, seat)
        }
        alive = context["obs"].get("alive")
        if alive is not None and seat not in alive:  # Undercover: voted out, now watching
            context["out_in_vote"] = next(
                (v["round"] for v in context["obs"]["votes"] if v["eliminated"] == seat), None
            )
        # A blinded table never says a seat is an agent, and a notice shown only while an agent
        # thinks would: there the agents' pace is a person's anyway (agent_think_seconds).
        if context["playing"] and not (context["replaced"] or context["your_turn"] or blinded):
            context["agent_wait"] = agent_wait(snap)
    if (
        context["paused"]
        and (limit := timing.paused_limit(table.opts)) is not None
        and snap.last_at
    ):
        waited = (timezone.now() - snap.last_at).total_seconds()
        context["paused_seconds_left"] = max(0, round(limit - waited))
    if table.status == Table.Status.ABORTED and snap.events:
        context["abort_reason"] = snap.events[-1].get("reason")
    return context


def shown_seq(snap: TableState, blinded: bool) -> int:
    """The board's ``data-seq``: how many turns the board stands for, which tells the page a
    push shows something new. Every move counts alike, whoever made it (a person's ballot as an
    agent's). A blinded board counts only what it shows: a takeover (a person's seat handed to an
    agent) is not announced there, and a count that jumped over it would tell that the seat was
    a person's."""
    if not blinded:
        return snap.next_seq
    return snap.next_seq - sum(1 for event in snap.events if event.get("type") == "takeover")


def takeovers(snap: TableState) -> list[dict[str, Any]]:
    """The seats that changed hands, in order: ``{"seat", "skip", "filled"}`` (``skip``: the
    seat's turns are passed for it, the "skip" dropout policy; ``filled``: a person's place that
    the lobby gave to an agent when nobody came)."""
    changed = [
        {"seat": event.get("seat"), "skip": event.get("by") == SKIP_SPEC, "filled": False}
        for event in snap.events
        if event.get("type") == "takeover"
    ]
    # A person's place the lobby gave to an agent at its wait limit (a study's tables say which
    # places were meant for people): that agent, too, is announced as one.
    taken = {change["seat"] for change in changed}
    filled = [
        {"seat": index, "skip": False, "filled": True}
        for index in snap.table.opts.person_seats
        if index not in taken
        and 0 <= index < len(snap.seats)
        and snap.seats[index].kind == Seat.Kind.AGENT
    ]
    return filled + changed


def agent_wait(snap: TableState) -> dict[str, Any] | None:
    """What a person waiting on an agent is told once the agent is slow: the page reveals the
    notice ``show_after`` seconds after the board arrives (SLOW_AGENT_NOTICE_SECONDS after the
    last move; at once on a board rendered later), with the seconds left of the agent's live
    budget (its pause and LIVE_AGENT_TURN_SECONDS) and what happens when they run out (the
    engine's ``failed`` move: an oracle withdraws the question, any other seat passes)."""
    agents = [i for i in snap.waiting_for() if snap.seat(i).kind == Seat.Kind.AGENT]
    if not agents or snap.last_at is None:
        return None
    waited = (timezone.now() - snap.last_at).total_seconds()
    budget = pace.agent_delay(snap) + timing.live_turn_seconds()
    failed = snap.engine.failed(snap.state, agents[0], "")
    return {
        "show_after": max(0, round(settings.SLOW_AGENT_NOTICE_SECONDS - waited)),
        "seconds_left": max(0, round(budget - waited)),
        "withdraws": failed.get("type") == "void",
    }


def lobby_facts(table: Table, seats: list[Seat]) -> dict[str, Any]:
    """What someone waiting in a lobby needs to decide whether to stay: how many places are
    taken, when the wait ends (the same limit :func:`driver.check_lobby` applies) and what
    happens then."""
    deadline = timing.lobby_deadline(table)
    return {
        "arrived": sum(seat.kind == Seat.Kind.HUMAN and not seat.is_vacant for seat in seats),
        "places": sum(seat.kind == Seat.Kind.HUMAN for seat in seats),
        "agent_places": sum(seat.kind == Seat.Kind.AGENT for seat in seats),
        "deadline": deadline,
        "seconds_left": max(0, round((deadline - timezone.now()).total_seconds())),
        "on_timeout": table.opts.lobby_timeout,
    }


def staff_seats(snap: TableState) -> list[dict[str, Any]]:
    """Each seat as staff see it: who plays it and its role and word. Only for spectators (staff);
    a player's board never gets this."""
    config = snap.table.config
    roles = snap.engine.seats(config)
    rows = []
    for seat in snap.seats:
        row = {"seat": seat, "role": roles[seat.index], "word": ""}
        if snap.table.game == "undercover":
            row["role"] = snap.engine.role(config, seat.index)
            row["word"] = snap.engine.word(config, seat.index)
        elif roles[seat.index] == "oracle":
            row["word"] = config["answer"]
        rows.append(row)
    return rows


def board_html(context: dict[str, Any], request: HttpRequest | None = None) -> SafeString:
    """The board for ``context`` (:func:`board_context`), in the active language: the Jinja2
    template ``tables/_board.html`` (:mod:`studyapp.tables.jinja`; Jinja2 keeps it compiled, and
    under DEBUG reloads it when it changes). With a ``request`` (the page, an htmx refresh) its
    forms carry the CSRF token; a board pushed over the socket has none (the socket carries the
    move)."""
    template = engines["jinja2"].get_template("tables/_board.html")
    context = {**context, "language_code": translation.get_language()}
    return mark_safe(template.render(context, request))


def render_board(snap: TableState, seat: int | None, error: str | None = None) -> str:
    """The board a socket pushes. At a table whose game is over it carries what the hooks add for
    the seat too (``final_board``: a study's table, its bar's running total, swapped into the
    page by id like the board); a table outside any study gets "" from them."""
    table = snap.table
    with translation.override(table.language):
        html = board_html(board_context(snap, seat, error))
        over = snap.is_over and table.status != Table.Status.LOBBY  # the board shows the outcome
        if seat is not None and over:
            html += hooks().final_board(table, seat) or ""
    return html


# The oracle's answers and a clue's "passed" are shown through {% translate %} with a variable;
# listed here so that makemessages collects them.
SHOWN_WORDS = [gettext_noop("Yes"), gettext_noop("No"), gettext_noop("Invalid")]
# The reasons a table's abort turn gives people are shown the same way (studyapp.tables.reasons).


def revealed_word(config: dict) -> str | None:
    """Twenty Questions' answer as the table's language names it (None for other games)."""
    from games import languages

    answer = config.get("answer")
    if answer is None:
        return None
    return languages.candidate_names(config.get("language", "en")).get(answer, answer)
