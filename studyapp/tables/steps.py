"""The tables' real-time steps (:mod:`studyapp.steps`): an agent's turn, a vote's agent ballots
(:mod:`studyapp.tables.ballots`), a turn deadline and a lobby's wait limit, each naming its table (and the ``seq`` it was scheduled for) and run under its
job's lease (:class:`studyapp.tables.scheduling.Lease`). An executor awaits the async handler on
its event loop: the agent thinks (a model call) on that loop and the database work goes to one of
the executor's threads, so a thousand agents waiting on their models hold no process or thread.
With no loop at all (a command, a plain test) the sync twin runs instead.

Delivery is at least once: a step whose executor dies is claimed by another (or sent again by the
sweep once its lease lapses); the seq check and the unique ``(table, seq)`` key make a second
delivery harmless, and a turn already committed never calls its model again (its table is past
``seq``: the turn is stale before any agent is built).
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any

from django.db import DatabaseError, IntegrityError

from games.runner import Move
from studyapp import steps
from studyapp.retry import retry_async
from studyapp.tables import agent_turns, ballots, driver
from studyapp.tables.scheduling import Lease, under_lease

# A move the model made is committed again after these pauses when the database fails it (a
# restart, a killed backend), rather than thrown away and the model asked again (about 7 s in all,
# inside the lease it holds, which each try renews).
COMMIT_PAUSES = (0.25, 0.5, 1.0, 2.0, 3.0)


# --- the sync twins (no loop: a command, a plain test) -------------------------------------------


def agent_turn_inline(table_id: int, seq: int, lease: str = "") -> str:
    held = Lease(lease)
    return under_lease(held, lambda: agent_turns.take_agent_turn(table_id, seq, lease=held))


def deadline_inline(table_id: int, seq: int, lease: str = "") -> str:
    return under_lease(Lease(lease), lambda: driver.check_deadline(table_id, seq))


def lobby_inline(table_id: int, lease: str = "") -> str:
    return under_lease(Lease(lease), lambda: driver.check_lobby(table_id))


# --- the executor's ------------------------------------------------------------------------------


def begin_agent_turn(held: Lease, table_id: int, seq: int) -> agent_turns.AgentTurn | str:
    """Claim the turn's lease and read the table: the turn to play, or why there is none."""
    if not held.claim():
        return steps.ELSEWHERE
    try:
        turn = agent_turns.prepare_agent_turn(table_id, seq)
    except BaseException:
        held.release()
        raise
    if turn is None:
        held.release()
        return "stale"
    return turn


def commit_agent_turn(
    held: Lease, turn: agent_turns.AgentTurn, move: Move, usage: dict[str, Any], again: bool
) -> str:
    if again:  # a commit tried again after a pause: the lease must outlast it
        held.renew()
    return agent_turns.finish_agent_turn(turn.snap, move, usage)


async def agent_turn(table_id: int, seq: int, lease: str = "") -> str:
    held = Lease(lease)
    turn = await steps.sync(begin_agent_turn, held, table_id, seq)
    if isinstance(turn, str):
        return turn
    result = ""
    tries = 0

    def commit() -> Awaitable[str]:
        nonlocal tries
        tries += 1
        return steps.sync(commit_agent_turn, held, turn, move, usage, tries > 1)

    try:
        move, usage = await held.hold(agent_turns.agent_move(turn))
        result = await retry_async(
            commit,
            retry_on=DatabaseError,
            give_up=lambda err: isinstance(err, IntegrityError),
            pauses=COMMIT_PAUSES,
        )
        return result
    finally:
        if result != "moved":  # a turn that moved the table on leaves its lease to lapse
            await steps.sync(held.release)


async def deadline(table_id: int, seq: int, lease: str = "") -> str:
    return await steps.sync(deadline_inline, table_id, seq, lease)


async def lobby(table_id: int, lease: str = "") -> str:
    return await steps.sync(lobby_inline, table_id, lease)


steps.register("take_agent_turn", agent_turn, agent_turn_inline)
steps.register("cast_ballots", ballots.cast_ballots, ballots.cast_ballots_inline)
steps.register("check_deadline", deadline, deadline_inline)
steps.register("check_lobby", lobby, lobby_inline)
