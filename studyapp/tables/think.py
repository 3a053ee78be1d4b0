"""How long an agent at a blinded table thinks before a move, by the kind of move.

People take longer to write a clue or a question than to cast a vote or answer yes or no, so a
blinded table's agents draw their think time from bounds of the move's own kind
(:func:`studyapp.tables.scheduling.think_seconds` draws it per table and move). A study gives
the bounds as ``agent_think_seconds``: one ``[shortest, longest]`` pair for every kind of move,
or a table of pairs by kind, where a kind left out takes its default below. The rule lives
here; the study's validation and the table's scheduling both read it.
"""

from __future__ import annotations

from typing import Any

# The kinds of move an agent makes next to people (the engines' move types: Who is Undercover's
# clue and vote, Twenty Questions' question, a guess included, and answer), each with its default
# [shortest, longest] seconds. Log-normal draws: the median is the geometric mean of the bounds.
# A clue or a question is read, thought about and typed: 5 to 40 s (median about 14 s). A vote is
# a choice among the players after reading the round's clues: 3 to 20 s (median about 8 s). A
# yes/no answer is one click after reading a question: 2 to 15 s (median about 5.5 s).
DEFAULT_THINK_SECONDS: dict[str, list[float]] = {
    "clue": [5, 40],
    "vote": [3, 20],
    "question": [5, 40],
    "answer": [2, 15],
}
MOVE_KINDS = tuple(DEFAULT_THINK_SECONDS)
LONGEST = 300


def default_bounds() -> dict[str, list[float]]:
    """A fresh copy of the defaults (a study's default value)."""
    return {kind: list(pair) for kind, pair in DEFAULT_THINK_SECONDS.items()}


def _pair_problem(value: object) -> str:
    if (
        not isinstance(value, list | tuple)
        or len(value) != 2
        or not all(isinstance(v, int | float) and not isinstance(v, bool) for v in value)
    ):
        return "Give the think time as [shortest, longest] seconds, e.g. [4, 15]."
    low, high = value
    if not 0 <= low <= high <= LONGEST:
        return f"The think time must run from 0 to at most {LONGEST} seconds, shortest first."
    return ""


def bounds_problem(value: object) -> str:
    """Why ``value`` is not think-time bounds ('' when it is): a ``[shortest, longest]`` pair for
    every move, or a table of such pairs by kind of move (clue, vote, question, answer)."""
    if not isinstance(value, dict):
        return _pair_problem(value)
    unknown = sorted(set(value) - set(MOVE_KINDS))
    if unknown:
        return (
            f"Think times are given by kind of move ({', '.join(MOVE_KINDS)}), not "
            f"{', '.join(map(repr, unknown))}."
        )
    for kind, pair in value.items():
        problem = _pair_problem(pair)
        if problem:
            return f"{kind}: {problem}"
    return ""


def resolved(value: Any) -> dict[str, list[float]]:
    """Every kind's bounds: a pair applies to all kinds, a table's missing kinds take the
    defaults (what a table records in its options)."""
    return {kind: bounds_for(value, kind) for kind in MOVE_KINDS}


def bounds_for(value: Any, kind: str) -> list[float]:
    """The bounds of a move of ``kind`` under ``value`` (a pair, or a table by kind); an unknown
    kind takes a clue's, and a value that is neither (empty) the defaults."""
    if isinstance(value, list | tuple) and len(value) == 2:
        return [float(v) for v in value]
    table = value if isinstance(value, dict) else {}
    pair = table.get(kind) or DEFAULT_THINK_SECONDS.get(kind) or DEFAULT_THINK_SECONDS["clue"]
    return [float(v) for v in pair]
