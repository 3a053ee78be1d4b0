"""When an agent at a table moves, read from the table's state: the pause beside people, a blinded
table's think time for the kind of move (drawn with :mod:`studyapp.tables.think`), the turns a
blinded agent lets run out, and a vote's ballots, each landing at its own time.

A move made in turn (a clue, a question, an answer) waits its think time from the move before
it. A vote is made at once by everyone still in: its agents' models are all asked the moment the
vote opens (:mod:`studyapp.tables.ballots`), and each ballot lands at its own draw of a person's
ballot time counted from that moment (:func:`ballot_times`), never chained to another ballot or
to how long the model took (a model slower than the draw lands when it answers).

Above the log store (it reads :class:`~studyapp.tables.store.TableState`), below scheduling and
the agents' turns; :mod:`studyapp.tables.timing` keeps the rules on options alone.
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from typing import Any

from django.utils import timezone

from studyapp.tables import think, timing
from studyapp.tables.models import Table
from studyapp.tables.store import TableState


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
    return [i for i in snap.waiting_for() if snap.seat(i).kind == timing.AGENT]


def in_a_vote(snap: TableState) -> bool:
    """Whether the table waits for agents' ballots (a vote: everyone still in votes at once)."""
    agents = waiting_agents(snap)
    return bool(agents) and move_kind(snap, agents[0]) == "vote"


def opened_at(snap: TableState, opened: int) -> datetime | None:
    """When the phase that began with event ``opened`` opened: the commit of the event before
    it (the table's start for the first), as the log has it."""
    if opened == 0:
        return snap.table.started_at
    return snap.committed_at(opened - 1)


def think_seed(table: Table) -> Any:
    """The seed of a table's think-time draws: its own ``think_seed``, else its id and creation
    time."""
    seed = table.opts.think_seed
    if seed is None:
        seed = f"{table.pk}:{int(table.created_at.timestamp() * 1_000_000)}"
    return seed


def blinded_bounds(snap: TableState) -> Any:
    """The think-time bounds of this table's agents (:func:`studyapp.tables.timing.blinded_think`),
    or None where they keep the site's short pause."""
    return timing.blinded_think(snap.table.opts, snap.has_humans())


def runs_out(snap: TableState, bounds: Any) -> bool:
    """Whether the blinded agent that moves next lets this turn's deadline pass, as people do at
    the share :func:`studyapp.tables.think.timed_out_share` gives (fitted from a pilot, else the
    default): drawn per table and move (seeded as the think times are, so a redelivered turn draws
    the same), only for a move made in turn (a clue, a question, an answer: a missed ballot is an
    abstention no board shows apart) at a table with a deadline."""
    share = think.timed_out_share(bounds)
    if not share or not snap.turn_deadline() or in_a_vote(snap):
        return False
    if not waiting_agents(snap):
        return False
    return random.Random(f"{think_seed(snap.table)}:timed-out:{snap.next_seq}").random() < share


def ballot_times(snap: TableState, now: datetime | None = None) -> dict[int, datetime]:
    """When each waiting agent's ballot of the vote in progress lands: at a blinded table its own
    draw of a person's ballot time (the bounds of a vote) counted from the moment the vote opened;
    beside people otherwise the pause after it; among agents alone at once. Drawn per table, vote
    and seat, so a redelivered vote lands alike."""
    now = now or timezone.now()
    opened = vote_opened(snap)
    since = opened_at(snap, opened) or now
    bounds = blinded_bounds(snap)
    times = {}
    for seat in waiting_agents(snap):
        if bounds:
            wait = think.think_seconds(
                think_seed(snap.table), f"vote:{opened}:{seat}", think.bounds_for(bounds, "vote")
            )
        elif snap.has_humans():
            wait = timing.agent_pause(snap.table.opts)
        else:
            wait = 0.0
        times[seat] = since + timedelta(seconds=wait)
    return times


def agent_delay(snap: TableState) -> float:
    """How long the table's next agent move is away: nothing among agents alone; next to people,
    the pause (``agent_delay_seconds``) so they can follow, or at a table that does not disclose
    its agents a person's think time for the kind of move (drawn per table and move), or the
    whole deadline for a turn the agent lets run out. In a vote: until its first ballot lands
    (:func:`ballot_times`; the ballots' step itself starts at once, its models asked meanwhile)."""
    if in_a_vote(snap):
        first = min(ballot_times(snap).values())
        return max(0.0, (first - timezone.now()).total_seconds())
    if not snap.has_humans():
        return 0.0
    bounds = blinded_bounds(snap)
    if bounds and runs_out(snap, bounds):  # as a person who let the deadline pass
        return float(snap.turn_deadline() or 0)
    if bounds:
        agents = waiting_agents(snap)
        kind = move_kind(snap, agents[0]) if agents else ""
        return think.think_seconds(
            think_seed(snap.table), snap.next_seq, think.bounds_for(bounds, kind)
        )
    return timing.agent_pause(snap.table.opts)
