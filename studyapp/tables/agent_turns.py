"""An agent seat's turn: build the seat's agent, let it choose a move on the table as the log has
it, and record the move on the move path (:func:`studyapp.tables.services.record`). The engine
judges the move once, when the agent proposes it (:func:`games.runner.choose`); the state it
returns is the one committed. A task of :mod:`studyapp.tables.tasks` runs it, under its lease."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
from dataclasses import dataclass
from typing import Any

from django.db import IntegrityError, transaction

from games.base import Agent, IllegalMove
from games.runner import REPLY_CHARS, Move, choose
from games.undercover.wording import peoples_form
from studyapp.background import run_async
from studyapp.tables import pace, think
from studyapp.tables.models import SKIP_SPEC, Table
from studyapp.tables.scheduling import Lease
from studyapp.tables.seat_agents import agent_for_seat, turn_usage
from studyapp.tables.services import record
from studyapp.tables.store import TableState, caught_up
from studyapp.tables.timing import live_turn_seconds

log = logging.getLogger(__name__)


def agent_seed(table_seed: int, seat: int, seq: int) -> int:
    """A seed per (table, seat, turn): a redelivered agent turn proposes the same move."""
    return random.Random(f"{table_seed}:{seat}:{seq}").randrange(2**31)


@dataclass
class AgentTurn:
    """An agent seat's turn, ready to be played: ``agent`` is None when it could not be built
    (``error`` says why), and the turn is then the seat's fallback."""

    snap: TableState
    index: int
    agent: Agent | None
    error: str = ""
    skip: bool = False  # a seat whose person left under the "skip" policy: it only passes
    runs_out: bool = False  # a blinded agent letting this deadline pass, as people do (think.py)


def prepare_agent_turn(table_id: int, seq: int) -> AgentTurn | None:
    """The table, seat and agent for an agent turn at ``seq``; None if the table moved on.
    Runs in sync code: building the agent reads the seat's policy from the database. In a vote
    (whose ballots the scheduler casts together: :mod:`studyapp.tables.ballots`) the seat whose
    ballot lands first."""
    snap = caught_up(table_id)
    if snap.next_seq != seq:
        return None
    times = pace.ballot_times(snap) if pace.in_a_vote(snap) else {}
    agents = sorted(times, key=times.__getitem__) or pace.waiting_agents(snap)
    if not agents:
        return None
    return seat_turn(snap, agents[0], seq)


def seat_turn(snap: TableState, index: int, seq: int) -> AgentTurn:
    """Agent seat ``index``'s turn at the table as ``snap`` has it, its agent seeded by ``seq``
    (the turn's number; a vote's ballots all by the vote's opening, so a redelivered vote asks
    the same)."""
    seat = snap.seat(index)
    if seat.agent_spec == SKIP_SPEC:
        return AgentTurn(snap, index, None, skip=True)
    bounds = pace.blinded_bounds(snap)
    if bounds and pace.runs_out(snap, bounds):
        return AgentTurn(snap, index, None, runs_out=True)
    try:
        agent = agent_for_seat(
            seat,
            game=snap.table.game,
            role=snap.engine.seats(snap.table.config)[index],
            seed=agent_seed(snap.table.seed, index, seq),
            live=snap.has_humans(),
            language=snap.table.language,
        )
    except Exception as err:  # a bad spec, a missing extra, a folder with no model
        log.exception("table %s: cannot build the agent of seat %s", snap.table.pk, index)
        return AgentTurn(snap, index, None, f"{type(err).__name__}: {err}")
    return AgentTurn(snap, index, agent)


async def agent_move(turn: AgentTurn) -> tuple[Move, dict[str, Any]]:
    """The seat's move and what it cost. An agent that cannot move (it could not be built, its
    model call failed after the SDK's retries, its replies held no usable move) must neither stall
    the table nor cost anyone a turn: it is logged, the engine's ``failed`` move is made in its
    place (an oracle withdraws the question, other seats make the fallback move), and the turn's
    usage says why: ``error``, and ``reply``, the start of the model's last text, if it sent one."""
    snap, index = turn.snap, turn.index
    if turn.skip:
        return Move(snap.engine.fallback(snap.state, index)), {}
    if turn.runs_out:  # the same move, and mark, as a person's missed turn (driver.miss_turn)
        event = {**snap.engine.fallback(snap.state, index), "missed": True}
        share = think.timed_out_share(snap.table.opts.agent_think_seconds)
        why = (
            "a blinded agent let the turn deadline pass, as the study's people do "
            f"({share:.0%} of their turns): no model was asked"
        )
        return Move(event), {"timed_out": why}
    if turn.agent is None:
        move = Move(snap.engine.failed(snap.state, index, turn.error), turn.error)
    else:
        budget = live_turn_seconds() if snap.has_humans() else None
        try:
            move = await asyncio.wait_for(
                choose(snap.engine, snap.state, index, turn.agent), budget
            )
        except TimeoutError as err:  # people are waiting: the live budget is spent
            if budget is None:  # not ours: an agent's own timeout at a table of agents
                log.exception("table %s: the agent of seat %s failed", snap.table.pk, index)
                error = f"{type(err).__name__}: {err}"
            else:
                error = f"the model did not move within the live budget of {budget:g} s"
            move = Move(snap.engine.failed(snap.state, index, error), error)
        except Exception as err:  # a local model that raised, a bug in an agent
            log.exception("table %s: the agent of seat %s failed", snap.table.pk, index)
            error = f"{type(err).__name__}: {err}"
            move = Move(snap.engine.failed(snap.state, index, error), error)
    usage_extra: dict[str, Any] = {}
    if not move.error and snap.table.opts.model_clue_form and turn.agent is not None:
        move, usage_extra = in_form(snap, index, move)
    stood_in = False
    if move.error and snap.has_humans():
        kept = await kept_in_form(snap, index, move)
        stood_in, move = kept is not move, kept
    usage = {**turn_usage(turn.agent), **usage_extra}
    if stood_in:  # the move is the stand-in's: the exports credit it to the stand-in
        usage["stand_in"] = STAND_IN_SPEC
    if move.error:
        # The reason may quote the model's reply, and an oracle's reply may name the secret word:
        # it goes to the turn's usage (staff only); the log line at WARNING says only where.
        log.warning(
            "table %s: seat %s could not move (reason in the turn's usage)", snap.table.pk, index
        )
        log.debug("table %s: seat %s could not move: %s", snap.table.pk, index, move.error)
        usage["error"] = move.error
        if move.reply:
            usage["reply"] = move.reply[:REPLY_CHARS]
    return move, usage


def in_form(snap: TableState, index: int, move: Move) -> tuple[Move, dict[str, Any]]:
    """A model seat's clue in people's form, at a table whose study asks for it
    (``model_clue_form``, off by default: :func:`games.undercover.wording.peoples_form`): no fixed
    lead-in, the seat's own capitals and stops. The turn's usage records it per clue
    (``clue_form``: the rule and the model's own text); a clue the form would make illegal (a
    repeat once its lead-in is gone) or leave unchanged stays the model's."""
    event = move.event
    seat = snap.seat(index)
    text = event.get("text")
    if event.get("type") != "clue" or not text or seat.agent_spec.startswith("offline:"):
        return move, {}
    own = [
        e["text"]
        for e in snap.events
        if e.get("type") == "clue" and e.get("seat") == index and e.get("text")
    ]
    formed = peoples_form(text, own, agent_seed(snap.table.seed, index, snap.next_seq))
    if formed == text:
        return move, {}
    reworded = {**event, "text": formed}
    try:
        state = snap.engine.apply(snap.state, reworded)
    except IllegalMove:
        return move, {}
    return Move(reworded, state=state), {"clue_form": {"rule": "people", "model_text": text}}


# The agent whose move stands in for a failed model's at a table with people (:func:`kept_in_form`).
STAND_IN_SPEC = "offline:kb"


async def kept_in_form(snap: TableState, index: int, failed: Move) -> Move:
    """At a table with people, a seat whose agent could not move still moves as a person would:
    an Undercover clue is never a pass (a person's clue form cannot pass, and a pass would tell
    a blinded table which seat is an agent), so the offline agent's sentence stands in for it,
    in the table's language (at a table in German a German sentence: games.languages). The move
    keeps the failure's ``error`` (staff see it in the turn's usage), and :func:`agent_move`
    names the stand-in in the usage (``stand_in``: :data:`STAND_IN_SPEC`), so the exports credit
    the move to it, not to the model that failed. It words its clue as the seat wrote before
    (games.undercover.wording), so a blinded table sees no change of style."""
    if snap.table.game != "undercover" or failed.event.get("type") != "clue":
        return failed
    from games.agents import make_agent

    stand_in = make_agent(
        STAND_IN_SPEC,
        game="undercover",
        role="player",
        seed=agent_seed(snap.table.seed, index, snap.next_seq),
        sentences=True,
        language=snap.table.language,
    )
    move = await choose(snap.engine, snap.state, index, stand_in)
    if move.error or move.event.get("text") is None:
        return failed
    return Move(move.event, f"{failed.error} (an offline clue stood in)", failed.reply, move.state)


def finish_agent_turn(snap: TableState, move: Move, usage: dict[str, Any]) -> str:
    """Record an agent's move, with the state the engine judged it to lead to when it chose it
    (a stand-in move is judged here). A withdrawn question that makes ``max_oracle_failures`` in a
    row pauses the table in the same transaction, so nothing is scheduled after it; staff see it
    on the live monitor and resume it (:func:`studyapp.tables.driver.resume`)."""
    event = move.event
    new_state = move.state if move.state is not None else snap.engine.apply(snap.state, event)
    limit = int(snap.table.opts.max_oracle_failures)
    pause = (
        event["type"] == "void" and snap.engine.failures_in_a_row([*snap.events, event]) >= limit
    )
    playing = snap.table.status
    try:
        with transaction.atomic() if pause else contextlib.nullcontext():
            if pause:
                Table.objects.filter(pk=snap.table.pk).update(status=Table.Status.PAUSED)
                snap.table.status = Table.Status.PAUSED
            record(snap, event, new_state, usage=usage)
    except IntegrityError:
        snap.table.status = playing
        return "duplicate"
    if pause:
        log.error("table %s paused: %s questions in a row not answered", snap.table.pk, limit)
        return "paused"
    return "moved"


def take_agent_turn(table_id: int, seq: int, lease: Lease | None = None) -> str:
    """Let the first agent seat the table waits for move, if the table is still at ``seq``."""
    turn = prepare_agent_turn(table_id, seq)
    if turn is None:
        return "stale"
    move, usage = run_async((lease or Lease("")).hold(agent_move(turn)))
    return finish_agent_turn(turn.snap, move, usage)
