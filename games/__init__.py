"""Pure-Python game engines, agents and experiment tools; no Django, usable from a notebook."""

from __future__ import annotations

from games.base import Engine

GAME_NAMES = ("twenty-questions", "undercover")


def get_engine(game: str) -> Engine:
    """The engine for a game name (``twenty-questions`` or ``undercover``)."""
    if game == "twenty-questions":
        from games.twenty_questions.engine import ENGINE
    elif game == "undercover":
        from games.undercover.engine import ENGINE
    else:
        raise ValueError(f"unknown game {game!r}; choose one of {', '.join(GAME_NAMES)}")
    return ENGINE
