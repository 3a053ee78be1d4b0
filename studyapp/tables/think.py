"""How long an agent at a blinded table thinks before a move, by the kind of move: the rules on
the values alone.

People take longer to write a clue or a question than to cast a vote or answer yes or no, so a
blinded table's agents draw their think time from bounds of the move's own kind. A study gives
the bounds as ``agent_think_seconds``: one ``[shortest, longest]`` pair for every kind of move,
or a table of pairs by kind, where a kind left out takes its default below. The rules on the
bounds (:func:`bounds_problem`, :func:`resolved`) and the draw itself (:func:`think_seconds`,
given a seed and the move) live here and read no table: the table's options validate with them,
and the table's pace (:mod:`studyapp.tables.pace`) reads a table's state and draws with them.
"""

from __future__ import annotations

import math
import random
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
# Beside the kinds, a table of bounds may say how often people let a turn deadline pass
# ("timed_out": a share of their moves made in turn, from a pilot: manage.py fit_think_times). A
# blinded agent then lets as many of its own such turns run to the deadline and passes them as a
# person's missed turn is passed, so a missed turn does not tell a person from an agent.
TIMED_OUT = "timed_out"
MOST_TIMED_OUT = 0.5
# A blinded study whose bounds do not say ``timed_out`` (no pilot fitted it) still has its agents
# let some turns run out, or only people's turns would ever be passed as missed: 3% of the moves
# made in turn, about one clue in a 5-seat game of 6 speaking rounds (people at a 60 s deadline
# miss a few in a hundred). A study that sets ``timed_out = 0`` says on purpose that none do.
DEFAULT_TIMED_OUT = 0.03


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
    share = value.get(TIMED_OUT, 0)
    if (
        not isinstance(share, int | float)
        or isinstance(share, bool)
        or not 0 <= share <= MOST_TIMED_OUT
    ):
        return f"{TIMED_OUT}: give the share of turns that run out, from 0 to {MOST_TIMED_OUT}."
    unknown = sorted(set(value) - set(MOVE_KINDS) - {TIMED_OUT})
    if unknown:
        return (
            f"Think times are given by kind of move ({', '.join(MOVE_KINDS)}), not "
            f"{', '.join(map(repr, unknown))}."
        )
    for kind, pair in value.items():
        if kind == TIMED_OUT:
            continue
        problem = _pair_problem(pair)
        if problem:
            return f"{kind}: {problem}"
    return ""


def resolved(value: Any) -> dict[str, list[float]]:
    """Every kind's bounds: a pair applies to all kinds, a table's missing kinds take the
    defaults (what a table records in its options), with the share of turns that run out."""
    found: dict[str, Any] = {kind: bounds_for(value, kind) for kind in MOVE_KINDS}
    found[TIMED_OUT] = timed_out_share(value)
    return found


def timed_out_share(value: Any) -> float:
    """The share of a blinded agent's turns (made in turn) that run to the deadline (0: none):
    the bounds' own ``timed_out``, else :data:`DEFAULT_TIMED_OUT`."""
    share = value.get(TIMED_OUT) if isinstance(value, dict) else None
    if isinstance(share, int | float) and not isinstance(share, bool):
        return float(share)
    return DEFAULT_TIMED_OUT


def bounds_for(value: Any, kind: str) -> list[float]:
    """The bounds of a move of ``kind`` under ``value`` (a pair, or a table by kind); an unknown
    kind takes a clue's, and a value that is neither (empty) the defaults."""
    if isinstance(value, list | tuple) and len(value) == 2:
        return [float(v) for v in value]
    table = value if isinstance(value, dict) else {}
    pair = table.get(kind) or DEFAULT_THINK_SECONDS.get(kind) or DEFAULT_THINK_SECONDS["clue"]
    return [float(v) for v in pair]


def think_seconds(seed: Any, seq: int | str, bounds: list[float]) -> float:
    """An agent's think time at a blinded table for the move at ``seq``: drawn from a
    log-normal distribution (people's move times are skewed: most moves quick, a few slow) whose
    median is the geometric mean of ``bounds`` [shortest, longest] and whose bounds lie two
    standard deviations out, cut to the bounds. The draw is seeded by ``seed``, the table's own
    (:func:`studyapp.tables.pace.think_seed`: its id and creation time for a table made without
    one), and the move, never
    by the game's seed, which the tables of a study round share: every table and move draws
    anew, and a redelivered turn waits as long. ``seq`` names the move (its number, or for a
    vote the vote and the seat: :func:`studyapp.tables.pace.ballot_times`)."""
    low, high = sorted(float(v) for v in bounds)
    if high <= 0 or high == low:
        return max(high, 0.0)
    low = max(low, min(0.5, high / 10))  # a log-normal needs a floor above 0
    rng = random.Random(f"{seed}:think:{seq}")
    centre = (math.log(low) + math.log(high)) / 2
    spread = (math.log(high) - math.log(low)) / 4
    return min(high, max(low, math.exp(rng.gauss(centre, spread))))
