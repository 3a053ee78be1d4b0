"""How long an agent at a blinded table thinks before a move, by the kind of move.

People take longer to write a clue or a question than to cast a vote or answer yes or no, so a
blinded table's agents draw their think time from bounds of the move's own kind
(:func:`think_seconds` draws it per table and move). A study gives
the bounds as ``agent_think_seconds``: one ``[shortest, longest]`` pair for every kind of move,
or a table of pairs by kind, where a kind left out takes its default below. The rule lives
here, with the draws themselves (:func:`think_seconds`, :func:`next_ballot`,
:func:`blinded_delay`); the study's validation reads the bounds, and the table's pace
(:func:`studyapp.tables.timing.agent_delay`) the draws.
"""

from __future__ import annotations

import math
import random
from typing import TYPE_CHECKING, Any

from django.utils import timezone

if TYPE_CHECKING:
    from studyapp.tables.models import Table
    from studyapp.tables.store import TableState

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


# -- the draws at a table


def move_kind(snap: TableState, seat: int) -> str:
    """The kind of move ``seat`` is asked for now (clue, vote, question, answer; '' for none)."""
    actions = snap.engine.legal_actions(snap.state, seat)
    return str(actions[0]["type"]) if actions else ""


def vote_opened(snap: TableState) -> int:
    """The number of the event that opened the vote in progress (the first ballot's)."""
    opened = len(snap.events)
    while opened > 0 and snap.events[opened - 1].get("type") == "vote":
        opened -= 1
    return opened


def waiting_agents(snap: TableState) -> list[int]:
    """The agent seats among those the table waits for, in seat order."""
    return [i for i in snap.waiting_for() if snap.seat(i).kind == "agent"]


def next_ballot(snap: TableState, think: Any) -> tuple[int | None, float | None]:
    """The agent seat that moves next and, when it casts a ballot in a blinded vote (``think``:
    the table's bounds), that ballot's think time from the moment the vote opened (else None).
    In a blinded vote, where everyone votes at once, the agent whose own think time (drawn from
    when the vote opened) ends first moves first: agents' ballots land each at its own time, in no
    fixed seat order. Each waiting agent's ballot is drawn here, once, for the scheduler's choice
    of seat (:func:`studyapp.tables.scheduling.next_agent`) and :func:`blinded_delay` alike."""
    agents = waiting_agents(snap)
    if not agents or not think or move_kind(snap, agents[0]) != "vote":
        return (agents[0] if agents else None), None
    bounds = bounds_for(think, "vote")
    opened = vote_opened(snap)
    drawn, seat = min((think_seconds(snap.table, f"vote:{opened}:{s}", bounds), s) for s in agents)
    return seat, drawn


def blinded_delay(snap: TableState, think: Any) -> float:
    """The wait before a blinded table's next agent move, from the bounds of its kind of move
    (``think``: a pair for all kinds, or pairs by kind). A move made in turn (a clue) waits its
    think time from the move before it. Moves made at once (a vote: everyone still in votes
    together) are not made one think time after another, which would make agents' ballots trickle
    in long after the people's: each agent seat draws its own think time from the moment the
    vote opened, and waits only what is left of it (the first to end moves first:
    :func:`next_ballot`)."""
    seat, drawn = next_ballot(snap, think)
    if drawn is None:
        kind = move_kind(snap, seat) if seat is not None else ""
        return think_seconds(snap.table, snap.next_seq, bounds_for(think, kind))
    since = opened_at(snap, vote_opened(snap))
    if since is None:
        return drawn
    return max(0.0, drawn - (timezone.now() - since).total_seconds())


def opened_at(snap: TableState, opened: int) -> Any:
    """When the phase that began with event ``opened`` opened: the commit of the event before
    it (the table's start for the first)."""
    from studyapp.tables.models import Turn

    if opened == 0:
        return snap.table.started_at
    if opened == len(snap.events):
        return snap.last_at
    return (
        Turn.objects.filter(table_id=snap.table.pk, seq=opened - 1)
        .values_list("created_at", flat=True)
        .first()
    )


def think_seconds(table: Table, seq: int | str, bounds: list[float]) -> float:
    """An agent's think time at a blinded table for the move at ``seq``: drawn from a
    log-normal distribution (people's move times are skewed: most moves quick, a few slow) whose
    median is the geometric mean of ``bounds`` [shortest, longest] and whose bounds lie two
    standard deviations out, cut to the bounds. The draw is seeded by the table's own
    ``think_seed`` (its id and creation time for a table made without one) and the move, never
    by the game's seed, which the tables of a study round share: every table and move draws
    anew, and a redelivered turn waits as long. ``seq`` names the move (its number, or for a
    vote the vote and the seat: :func:`blinded_delay`)."""
    low, high = sorted(float(v) for v in bounds)
    if high <= 0 or high == low:
        return max(high, 0.0)
    low = max(low, min(0.5, high / 10))  # a log-normal needs a floor above 0
    seed = table.opts.think_seed
    if seed is None:
        seed = f"{table.pk}:{int(table.created_at.timestamp() * 1_000_000)}"
    rng = random.Random(f"{seed}:think:{seq}")
    centre = (math.log(low) + math.log(high)) / 2
    spread = (math.log(high) - math.log(low)) / 4
    return min(high, max(low, math.exp(rng.gauss(centre, spread))))
