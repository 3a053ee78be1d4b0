"""Plays one game to the end with agents in every seat: the loop shared by the CLI, experiments
and benchmarks (the web driver runs the same steps one turn at a time, with a database between).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from games.base import Agent, Config, Engine, Event, IllegalMove

OnEvent = Callable[[Event, Any], Awaitable[None] | None]


async def next_event(
    engine: Engine, state: Any, seat: int, agent: Agent, retries: int = 2
) -> Event:
    """Ask ``agent`` for a legal move. A rejected move is shown back to the agent with the engine's
    reason (``observation["rejected"]``); after ``retries`` more tries the seat's fallback is used,
    so one confused player never stalls a table."""
    observation = engine.observe(state, seat)
    for _ in range(retries + 1):
        action = await agent.act(observation)
        event = {**action, "seat": seat}
        try:
            engine.apply(state, event)
        except IllegalMove as err:
            observation = {**observation, "rejected": {"action": action, "reason": err.reason}}
            continue
        return event
    return engine.fallback(state, seat)


async def play_game(
    engine: Engine,
    config: Config,
    agents: Mapping[int, Agent],
    *,
    retries: int = 2,
    on_event: OnEvent | None = None,
) -> tuple[Any, list[Event]]:
    """Run a game from its config to the end; return the final state and the event log."""
    state = engine.initial(config)
    events: list[Event] = []
    while not engine.is_over(state):
        seats = engine.to_move(state)
        # Simultaneous moves (votes) are asked concurrently, each against the same visible state.
        proposed = await asyncio.gather(
            *(next_event(engine, state, seat, agents[seat], retries) for seat in seats)
        )
        for event in proposed:
            try:
                state = engine.apply(state, event)
            except IllegalMove:
                event = engine.fallback(state, event["seat"])
                state = engine.apply(state, event)
            events.append(event)
            if on_event is not None:
                result = on_event(event, state)
                if asyncio.iscoroutine(result):
                    await result
            if engine.is_over(state):
                break
    return state, events
