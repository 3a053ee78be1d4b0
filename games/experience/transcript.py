"""A finished game retold from one seat, for reflection, policy writing and the curator.

Built from the event log through the engine (replay, the seat's final observation, the outcome),
so a transcript shows only what the seat saw during play plus the result revealed at the end.
"""

from __future__ import annotations

from typing import Any

from games import get_engine
from games.base import Config, Event
from games.llm import render


def transcript(game: str, config: Config, events: list[Event], seat: int) -> str:
    """The game as ``seat`` saw it, ending with how it ended."""
    engine = get_engine(game)
    state = engine.replay(config, events)
    observation = engine.observe(state, seat)
    result = engine.outcome(state)[seat] if engine.is_over(state) else {}
    if game == "twenty-questions":
        return _twenty_questions(config, observation, result)
    return _undercover(config, observation, result)


def _twenty_questions(config: Config, observation: dict[str, Any], result: dict[str, Any]) -> str:
    lines = [render.question_history(observation)]
    asked = observation["questions_asked"]
    if result.get("found"):
        lines.append(f"The secret word was {config['answer']}, named at question {asked}.")
    else:
        lines.append(
            f"The secret word was {config['answer']}; it was not found in {asked} questions."
        )
    return "\n".join(lines)


def _undercover(config: Config, observation: dict[str, Any], result: dict[str, Any]) -> str:
    lines = [
        f'You were player {observation["seat"]}; your word was "{observation["word"]}".',
        render.clue_history(observation),
        render.vote_history(observation),
    ]
    if result:
        outcome = "won" if result["win"] else "lost"
        lines.append(f"Your role was {result['role']} and you {outcome} (end: {result['end']}).")
        lines.append(
            f'The normal word was "{config["normal_word"]}", the difference word '
            f'"{config["difference_word"]}" (player {config["difference_seat"]}).'
        )
    return "\n".join(lines)
