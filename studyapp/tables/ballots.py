"""A vote's agent ballots, asked at once and each landing at its own time.

When a vote opens, one step (``cast_ballots``, named by the table and the vote's opening) asks
every waiting agent seat's model at the same moment, then commits each ballot when its own time
comes (:func:`studyapp.tables.pace.ballot_times`: at a blinded table its own draw of a person's
ballot time from the vote's opening), so no ballot waits for another's model call and none is
spaced from another by the model's latency. A ballot is asked once: when a person's ballot (or
another agent's) takes the turn number first, the ballot is judged again on the table as it now
is and committed at the next number, never asked of the model again. The step holds its lease
while it waits, so the commits in between (each of which schedules the table's next step) do not
start a second copy; a step redelivered after its executor died asks only the seats whose ballots
are not in the log yet.
"""

from __future__ import annotations

import asyncio
from datetime import datetime
from typing import Any

from django.db import DatabaseError, IntegrityError
from django.utils import timezone

from games.base import IllegalMove
from games.runner import Move
from studyapp import steps
from studyapp.background import run_async
from studyapp.retry import retry_async
from studyapp.tables import agent_turns, pace
from studyapp.tables.scheduling import Lease, under_lease
from studyapp.tables.store import caught_up

# Tries of one ballot's commit when other ballots keep taking its turn number (each try reads
# the table again; a vote has at most a table's seats of ballots).
COMMIT_TRIES = 10
COMMIT_PAUSES = (0.25, 0.5, 1.0, 2.0, 3.0)  # a database that fails the commit (as agent turns)

Ballots = tuple[list[agent_turns.AgentTurn], dict[int, datetime]]


def begin(table_id: int, opened: int) -> Ballots | str:
    """The agent turns of the vote that opened at event ``opened`` and when each ballot lands, or
    why there are none ("stale": the vote is over or has no agent left to vote)."""
    snap = caught_up(table_id)
    if not pace.in_a_vote(snap) or pace.vote_opened(snap) != opened:
        return "stale"
    times = pace.ballot_times(snap)
    turns = [agent_turns.seat_turn(snap, seat, opened) for seat in sorted(times, key=times.get)]
    return turns, times


def commit(table_id: int, opened: int, index: int, move: Move, usage: dict[str, Any]) -> str:
    """Record seat ``index``'s ballot in the vote that opened at ``opened``, judged on the table as
    it is now: at the next free turn number if another ballot took this one meanwhile."""
    for _ in range(COMMIT_TRIES):
        snap = caught_up(table_id)
        if pace.vote_opened(snap) != opened or index not in pace.waiting_agents(snap):
            return "stale"
        try:
            state = snap.engine.apply(snap.state, move.event)
        except IllegalMove:  # the vote is over (its last ballot resolved it) or changed
            return "stale"
        judged = Move(move.event, move.error, move.reply, state)
        result = agent_turns.finish_agent_turn(snap, judged, usage)
        if result != "duplicate":
            return result
    return "duplicate"


def summary(results: list[str]) -> str:
    """One word for the step: "moved" when any ballot was committed."""
    return "moved" if "moved" in results else (results[0] if results else "stale")


async def cast_ballots(table_id: int, opened: int, lease: str = "") -> str:
    """The executor's step: every ballot's model asked at once, each committed at its time."""
    held = Lease(lease)
    if not await steps.sync(held.claim):
        return steps.ELSEWHERE
    try:
        begun = await steps.sync(begin, table_id, opened)
        if isinstance(begun, str):
            return begun
        turns, times = begun
        committing = asyncio.Lock()  # one commit at a time: each takes the next turn number

        async def ballot(turn: agent_turns.AgentTurn) -> str:
            move, usage = await agent_turns.agent_move(turn)
            left = (times[turn.index] - timezone.now()).total_seconds()
            if left > 0:
                await asyncio.sleep(left)
            async with committing:
                return await retry_async(
                    lambda: steps.sync(commit, table_id, opened, turn.index, move, usage),
                    retry_on=DatabaseError,
                    give_up=lambda err: isinstance(err, IntegrityError),
                    pauses=COMMIT_PAUSES,
                )

        async def cast() -> list[str]:
            return list(await asyncio.gather(*(ballot(turn) for turn in turns)))

        return summary(await held.hold(cast()))
    finally:
        await steps.sync(held.release)


def cast_ballots_inline(table_id: int, opened: int, lease: str = "") -> str:
    """The sync twin (no loop: a command, a plain test): the models asked at once, the ballots
    committed one after another in the order they land, without waiting for their times (steps
    run here keep no time, as agent turns run here do not)."""
    held = Lease(lease)

    def job() -> str:
        begun = begin(table_id, opened)
        if isinstance(begun, str):
            return begun
        turns, _ = begun

        async def asked() -> list[tuple[Move, dict[str, Any]]]:
            return list(await asyncio.gather(*(agent_turns.agent_move(turn) for turn in turns)))

        moves = run_async(held.hold(asked()))
        results = [
            commit(table_id, opened, turn.index, *chosen)
            for turn, chosen in zip(turns, moves, strict=True)
        ]
        held.release()
        return summary(results)

    return under_lease(held, job)
