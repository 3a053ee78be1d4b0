"""Think-time bounds fitted to people: what ``manage.py fit_think_times`` computes.

A blinded table's agent waits a think time drawn log-normal, its median the geometric mean of
the kind of move's ``[shortest, longest]`` bounds and the bounds two standard deviations out
(:mod:`studyapp.tables.think`). So bounds that make the agents' times people's are read off
people's own times in the log: for each kind of move, the centre is the median of the log of
their move times and the spread a robust standard deviation of it (the interquartile range over
1.349, which a few very slow moves do not inflate); the bounds are the centre two spreads either
way, cut to what a study may give (0 to :data:`studyapp.tables.think.LONGEST` seconds).

A person's move time is what the exports call ``duration_s``: from the move before it (the board
the person was shown) to their move's commit, from the table's start for the first move. A vote
is cast by everyone at once, so a person's ballot counts from the moment the vote opened (the last
move that was not a ballot), not from the ballot cast just before theirs. Only a person's own
moves count (``Turn.actor`` is the person): a move the table made for a person who missed the
deadline, or an agent's after a takeover, is not a person's think time.
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from studyapp.tables.think import LONGEST, MOVE_KINDS

MIN_MOVES = 10  # fewer moves of a kind than this: its bounds are not fitted (too few to tell)


@dataclass
class Fit:
    """The bounds fitted for one kind of move, from ``n`` people's moves."""

    kind: str
    n: int
    median_s: float
    bounds: list[float] | None  # None: too few moves to fit


def move_seconds(
    turns: Iterable[tuple[int, str, datetime, bool]], started_at: datetime | None
) -> dict[str, list[float]]:
    """People's move times of one table, by kind of move. ``turns``: the table's turns in order,
    each (seq, event type, commit time, whether it is a person's own move)."""
    found: dict[str, list[float]] = defaultdict(list)
    previous = started_at
    vote_opened = started_at
    for _, kind, at, person in turns:
        start = vote_opened if kind == "vote" else previous
        if person and kind in MOVE_KINDS and start is not None:
            seconds = (at - start).total_seconds()
            if 0 < seconds <= LONGEST:
                found[kind].append(seconds)
        previous = at
        if kind != "vote":
            vote_opened = at
    return found


def fit(seconds: list[float], kind: str, min_moves: int = MIN_MOVES) -> Fit:
    """The ``[shortest, longest]`` bounds whose log-normal draw (studyapp.tables.think) matches
    ``seconds``: median and robust spread of their logs, bounds two spreads out."""
    n = len(seconds)
    if n == 0:
        return Fit(kind, 0, math.nan, None)
    median = statistics.median(seconds)
    if n < min_moves:
        return Fit(kind, n, median, None)
    logs = sorted(math.log(s) for s in seconds)
    quarter, _, three = statistics.quantiles(logs, n=4, method="inclusive")
    spread = max((three - quarter) / 1.349, 0.05)
    centre = statistics.median(logs)
    low = max(0.0, math.exp(centre - 2 * spread))
    high = min(float(LONGEST), math.exp(centre + 2 * spread))
    return Fit(kind, n, median, [_round(low), _round(max(high, low))])


def _round(value: float) -> float:
    """To half a second: bounds people can read."""
    return round(value * 2) / 2
