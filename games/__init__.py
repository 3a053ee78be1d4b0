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


def rules_for_people(game: str) -> str:
    """The rules of a game as a person reads them before playing (one paragraph)."""
    return _rules(game).RULES_FOR_PEOPLE


def _rules(game: str):
    if game == "twenty-questions":
        from games.twenty_questions import rules
    elif game == "undercover":
        from games.undercover import rules
    else:
        raise ValueError(f"unknown game {game!r}; choose one of {', '.join(GAME_NAMES)}")
    return rules
