"""The one interface both games share, so drivers, agents and analysis never special-case a game.

A game is a JSON config plus an ordered list of JSON events. State is a pure fold over the events:
``Engine.apply(state, event)`` returns a new state or raises :class:`IllegalMove` and leaves the old
state untouched. Everything that crosses a process boundary (configs, events, observations,
outcomes, serialised states) is plain JSON-compatible data.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from typing import Any, Generic, Protocol, TypeVar

Event = dict[str, Any]
Observation = dict[str, Any]
Config = dict[str, Any]

S = TypeVar("S")


class IllegalMove(ValueError):
    """An event the rules do not allow; ``reason`` is shown to the player as is."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class NoMove(Exception):
    """An agent that cannot produce a move at all: its model failed after the SDK's retries, or
    its reply held no usable answer after one corrective follow-up. ``reason`` says why and
    ``reply`` keeps the model's last text, so the move made in its place is always explained."""

    def __init__(self, reason: str, reply: str | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.reply = reply


class Engine(ABC, Generic[S]):
    """Rules of one game. Instances hold no game state, so one instance serves every table.

    Event shapes common to every game (the engine validates the game-specific ones):

    - ``{"type": "abort", "reason": str}``: ends the game with no winner (a table closed early).
    - ``{"type": "takeover", "seat": int, "by": str}``: a seat changes hands (a human replaced by
      an agent); recorded in the log, no effect on the rules.
    """

    name: str

    @abstractmethod
    def new_config(self, seed: int, **options: Any) -> Config:
        """Resolve every seeded choice (answer word, roles, word pair) into a JSON config."""

    @abstractmethod
    def initial(self, config: Config) -> S:
        """The state before any event."""

    @abstractmethod
    def apply(self, state: S, event: Event) -> S:
        """Return the state after ``event``; raise :class:`IllegalMove` if it breaks a rule."""

    @abstractmethod
    def seats(self, config: Config) -> list[str]:
        """The role label of every seat, by seat index (e.g. ``["questioner", "oracle"]``)."""

    @abstractmethod
    def to_move(self, state: S) -> list[int]:
        """Seats whose action the game waits for; several during a simultaneous vote."""

    @abstractmethod
    def legal_actions(self, state: S, seat: int) -> list[dict[str, Any]]:
        """Shapes of the actions ``seat`` may take now, e.g. ``[{"type": "vote", "targets": [..]}]``."""

    @abstractmethod
    def observe(self, state: S, seat: int) -> Observation:
        """What ``seat`` may see. Never contains another seat's secret word or role."""

    @abstractmethod
    def is_over(self, state: S) -> bool: ...

    @abstractmethod
    def outcome(self, state: S) -> dict[int, dict[str, Any]]:
        """Per seat: ``{"reward": float, "win": bool | None, ...}``; valid once the game is over."""

    @abstractmethod
    def fallback(self, state: S, seat: int) -> Event:
        """The legal do-nothing move for ``seat`` (an Invalid question, a passed clue, an abstained
        vote), used when a player cannot produce a usable move or misses a deadline."""

    def failed(self, state: S, seat: int, reason: str) -> Event:
        """The move made for an agent whose model could not move at all (``reason`` says why).
        The fallback by default; a game may instead withdraw the turn, so no player pays for a
        failure that is not theirs (Twenty Questions voids the pending question)."""
        return self.fallback(state, seat)

    def failures_in_a_row(self, events: Sequence[Event]) -> int:
        """How many turns in a row, at the end of ``events``, were withdrawn because an agent could
        not move (the :meth:`failed` moves that do not move the game on), since the game last moved
        on or staff resumed it: the one count of a game stalled by a dead model. The runner ends a
        game when it reaches its limit and a web table pauses. 0 by default: a game whose failed
        moves are ordinary moves (a fallback) always moves on."""
        return 0

    @abstractmethod
    def state_to_json(self, state: S) -> dict[str, Any]: ...

    @abstractmethod
    def state_from_json(self, data: dict[str, Any]) -> S: ...

    def replay(self, config: Config, events: Iterable[Event]) -> S:
        """Rebuild a game from its log: the fold every process uses to recover a table."""
        state = self.initial(config)
        for event in events:
            state = self.apply(state, event)
        return state


class Agent(Protocol):
    """Anything that fills a seat: an offline agent, an LLM agent, or a human behind a socket."""

    async def act(self, observation: Observation) -> Event:
        """Return the next action (an event without ``seat``; the driver adds it)."""
        ...
