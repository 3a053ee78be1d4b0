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


def rules_for_people(game: str, language: str = "en") -> str:
    """The rules of a game as a person reads them before playing (one paragraph), in
    ``language`` where the game has a translation, else in English."""
    rules = _rules(game)
    return rules.TRANSLATED_RULES_FOR_PEOPLE.get(language, rules.RULES_FOR_PEOPLE)


def default_checks(game: str, person: str, language: str = "en") -> list[dict]:
    """The comprehension checks a study without its own asks, for the person's seat (Twenty
    Questions' questioner or oracle; any seat in Undercover), in ``language`` where translated."""
    rules = _rules(game)
    checks = rules.TRANSLATED_DEFAULT_CHECKS.get(language, rules.DEFAULT_CHECKS)
    return list(checks[person] if isinstance(checks, dict) else checks)


def _rules(game: str):
    if game == "twenty-questions":
        from games.twenty_questions import rules
    elif game == "undercover":
        from games.undercover import rules
    else:
        raise ValueError(f"unknown game {game!r}; choose one of {', '.join(GAME_NAMES)}")
    return rules
