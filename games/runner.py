"""Plays one game to the end with agents in every seat: the loop shared by the CLI, experiments
and benchmarks (the web driver runs the same steps one turn at a time, with a database between).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from games.base import Agent, Config, Engine, Event, IllegalMove, NoMove

OnEvent = Callable[[Event, Any], Awaitable[None] | None]


# This many turns in a row withdrawn for a dead model end a game (see play_game).
MAX_FAILURES = 3
# How much of a model's reply a failure record keeps.
REPLY_CHARS = 500


@dataclass
class Move:
    """A seat's move and, when it is not the player's own (a fallback or a void), why not:
    ``error`` is the provider's error, the parser's or the engine's reason; ``reply`` the start of
    the model's last text, if it sent one. ``state`` is the state after the move when the engine
    has already judged it (:func:`choose` does), so a caller commits it without judging again."""

    event: Event
    error: str | None = None
    reply: str | None = None
    state: Any = None


async def choose(engine: Engine, state: Any, seat: int, agent: Agent, retries: int = 2) -> Move:
    """Ask ``agent`` for a legal move. A rejected move is shown back to the agent with the engine's
    reason (``observation["rejected"]``); after ``retries`` more tries, or when the agent cannot
    move at all (:class:`NoMove`), the engine's :meth:`~Engine.failed` move is made in its place
    and the move says why, so one confused player never stalls a table and no stand-in move goes
    unexplained."""
    observation = engine.observe(state, seat)
    reason = ""
    for _ in range(retries + 1):
        try:
            action = await agent.act(observation)
        except NoMove as err:
            reply = err.reply[:REPLY_CHARS] if err.reply else None
            return Move(engine.failed(state, seat, err.reason), err.reason, reply)
        event = {**action, "seat": seat}
        try:
            after = engine.apply(state, event)
        except IllegalMove as err:
            observation = {**observation, "rejected": {"action": action, "reason": err.reason}}
            reason = err.reason
            continue
        return Move(event, state=after)
    error = f"{retries + 1} moves refused, the last because: {reason}"
    return Move(engine.failed(state, seat, error), error, str(action)[:REPLY_CHARS])


async def next_event(
    engine: Engine, state: Any, seat: int, agent: Agent, retries: int = 2
) -> Event:
    """The event of :func:`choose`, for callers that need no explanation."""
    return (await choose(engine, state, seat, agent, retries)).event


async def play_game(
    engine: Engine,
    config: Config,
    agents: Mapping[int, Agent],
    *,
    retries: int = 2,
    on_event: OnEvent | None = None,
    failures: list[dict[str, Any]] | None = None,
    max_failures: int = MAX_FAILURES,
) -> tuple[Any, list[Event]]:
    """Run a game from its config to the end; return the final state and the event log.

    Each move is judged once: :func:`choose` judged it against the state it was chosen in, and
    that state is committed as is; only a move chosen beside others (a simultaneous vote) after
    one of them was committed, and a stand-in move, is judged here. Every move an agent did not
    make itself is appended to ``failures`` (when given) as ``{"index": position in the log,
    "seat", "error", "reply"}``. When the engine counts ``max_failures`` turns in a row withdrawn
    for a dead model (:meth:`~games.base.Engine.failures_in_a_row`; a withdrawn turn does not
    move the game on), or a seat's own moves fail ``max_failures`` times in a row, the game ends
    with an ``abort``: a dead model's game is voided, not scored as that model's loss."""
    state = engine.initial(config)
    events: list[Event] = []
    in_a_row: dict[int, int] = {}  # a seat's own failed moves in a row (a dead model at any seat)
    while not engine.is_over(state):
        seats = engine.to_move(state)
        chosen_in = state
        # Simultaneous moves (votes) are asked concurrently, each against the same visible state.
        moves = await asyncio.gather(
            *(choose(engine, state, seat, agents[seat], retries) for seat in seats)
        )
        for move in moves:
            event = move.event
            if move.state is not None and state is chosen_in:
                state = move.state
            else:
                try:
                    state = engine.apply(state, event)
                except IllegalMove as err:
                    move = Move(engine.fallback(state, event["seat"]), err.reason, None)
                    event = move.event
                    state = engine.apply(state, event)
            seat = event["seat"]
            if move.error and failures is not None:
                failures.append(
                    {"index": len(events), "seat": seat, "error": move.error, "reply": move.reply}
                )
            await _record(events, event, state, on_event)
            in_a_row[seat] = in_a_row.get(seat, 0) + 1 if move.error else 0
            streak = max(engine.failures_in_a_row(events), in_a_row[seat]) if move.error else 0
            if streak >= max_failures and not engine.is_over(state):
                event = {
                    "type": "abort",
                    "reason": f"seat {seat} failed {streak} times in a row: {move.error}",
                    "failed_seat": seat,
                }
                state = engine.apply(state, event)
                await _record(events, event, state, on_event)
            if engine.is_over(state):
                break
    return state, events


async def _record(events: list[Event], event: Event, state: Any, on_event: OnEvent | None) -> None:
    events.append(event)
    if on_event is not None:
        result = on_event(event, state)
        if asyncio.iscoroutine(result):
            await result
