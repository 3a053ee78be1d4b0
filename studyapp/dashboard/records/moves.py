"""A game's moves as the exports name them: who made each move (a person by pseudonym, an agent
by its spec, a stand-in for a failed model by the stand-in's), of what kind, and what the model
calls cost, read from the turn rows as columns (:func:`turn_log`) for the turns frame and the
games' usage."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np
import pandas as pd
from django.db.models import Count

from analysis.frames import USAGE_KEYS as COUNTERS
from analysis.frames import encode_event
from analysis.frames import seat_slot as frames_seat_slot
from studyapp.dashboard.records.queries import event_of, turn_columns
from studyapp.participants import table_study
from studyapp.participants.models import Round, StudyTable
from studyapp.tables.models import PERSON_ACTOR, SKIP_SPEC, TABLE_EVENTS, Table

VISITORS = "visitors"  # the one player name of every human seat outside a study
# The counters of ``Turn.usage`` that add up over a game: the fields of games.llm.usage.Usage,
# named here because importing it loads the model SDKs (seconds an export does not need).
USAGE_KEYS = (*COUNTERS, "latency_s")


def usages_of(usages: list, n: int) -> list:
    """A game's turn usages, one per event (None where a turn has none)."""
    return (list(usages) + [None] * n)[:n]


def stood_in_for(actor: str | None, usage: Any) -> str | None:
    """The model a turn's move stood in for: its actor, when an offline stand-in made the move
    because the model failed (``usage["stand_in"]``, studyapp.tables.agent_turns); else None."""
    if actor and isinstance(usage, dict) and usage.get("stand_in"):
        return actor
    return None


def actor_label(
    actor: str | None, seat: Any, people: dict[int, str], usage: Any = None
) -> str | None:
    """Who made a move, as the exports name them: a person by the participant's pseudonym (the
    participant whose round sits at ``seat``; ``visitors`` outside studies), an agent by its
    spec, a stand-in for a failed model by the stand-in's spec (``usage``: the turn's); None for
    the table's own events and turns that recorded no actor."""
    if not actor:
        return None
    if stood_in_for(actor, usage):
        return str(usage["stand_in"])
    if actor == PERSON_ACTOR:
        return people.get(seat, VISITORS) if isinstance(seat, int) else VISITORS
    return actor


def actor_kind(actor: str | None, event_type: Any = None, usage: Any = None) -> str | None:
    """``human``, ``offline``, ``model`` or ``table`` for a turn's ``Turn.actor``; None where the
    turn recorded none: an empty actor is the table's only for the table's own events (a seat's
    move with none was committed before turns recorded their actor). A move a stand-in made for
    a failed model (``usage``: the turn's) is the stand-in's kind."""
    if actor is None:
        return None
    if stood_in_for(actor, usage):
        return "offline" if str(usage["stand_in"]).startswith("offline:") else "model"
    if actor == PERSON_ACTOR:
        return "human"
    if actor == SKIP_SPEC or (not actor and event_type in TABLE_EVENTS):
        return "table"
    if not actor:
        return None
    return "offline" if actor.startswith("offline:") else "model"


def turn_log(table_ids: list[int]) -> pd.DataFrame:
    """The turns of ``table_ids`` as the log :func:`analysis.frames.turns_from_log` reads, labelled
    by table id, with ``question``: the event is a question of seat 0, ``actor`` and
    ``actor_kind``: who made the move (:func:`actor_label`, :func:`actor_kind`; a stand-in's
    move is the stand-in's, ``stood_in_for`` the failed model), and
    ``seat_slot``: the mover's design slot. Each distinct event text is parsed once, and turns are
    kept as columns, never as an object per turn."""
    found = turn_columns(table_ids)
    codes, texts = pd.factorize(np.array(found.pop("text"), dtype=object))
    events = [event_of(text) for text in texts]
    encoded = np.array([encode_event(event) for event in events], dtype=object)
    asks = [event.get("type") == "question" and event.get("seat") == 0 for event in events]
    movers = np.array([event.get("seat") for event in events], dtype=object)[codes]
    kinds_of = np.array([event.get("type") for event in events], dtype=object)[codes]
    people, slots = table_people(table_ids)
    raw = found.pop("actor")
    usages = found["usage"]
    labels = [
        actor_label(actor, seat, people.get(table, {}), usage)
        for actor, seat, table, usage in zip(raw, movers, found["log"], usages, strict=True)
    ]
    slot_of = [
        frames_seat_slot(slots.get(table, []), seat)
        for seat, table in zip(movers, found["log"], strict=True)
    ]
    # Object columns: text that pandas infers as its str dtype would be converted there and back.
    return pd.DataFrame(
        {
            "log": np.array(found["log"], dtype="int64"),
            "created_at": pd.Series(found["created_at"], dtype=object),
            "usage": pd.Series(found["usage"], dtype=object),
            "event": pd.Series(encoded[codes], dtype=object),
            "question": np.array(asks, dtype=bool)[codes],
            "actor": pd.Series(labels, dtype=object),
            "actor_kind": pd.Series(
                [
                    actor_kind(actor, kind, usage)
                    for actor, kind, usage in zip(raw, kinds_of, usages, strict=True)
                ],
                dtype=object,
            ),
            "stood_in_for": pd.Series(
                [stood_in_for(actor, usage) for actor, usage in zip(raw, usages, strict=True)],
                dtype=object,
            ),
            "seat_slot": pd.Series(slot_of, dtype=object),
        }
    )


def table_people(table_ids: list[int]) -> tuple[dict[int, dict[int, str]], dict[int, list[int]]]:
    """Per table of ``table_ids``: the pseudonym of the participant whose round sits at each
    seat, and the design slot of each seat (:meth:`StudyTable.slots`)."""
    people: dict[int, dict[int, str]] = defaultdict(dict)
    for table_id, seat, public_id in Round.objects.filter(table_id__in=table_ids).values_list(
        "table_id", "seat", "participant__public_id"
    ):
        people[table_id][seat] = public_id
    found = Table.objects.filter(pk__in=table_ids).annotate(n=Count("seats"))
    parts = table_study.of_tables(table_ids)
    slots = {pk: (parts.get(pk) or StudyTable()).slots(n) for pk, n in found.values_list("pk", "n")}
    return people, slots


def log_counts(log: pd.DataFrame) -> dict[int, tuple[int, int]]:
    """Turns and the questioner's questions per table of a :func:`turn_log`."""
    counted = log.groupby("log")["question"].agg(["size", "sum"])
    return {int(t): (int(n), int(q)) for t, n, q in counted.itertuples()}


def log_usage(log: pd.DataFrame) -> dict[int, dict[str, float] | None]:
    """What the model calls of each table of a :func:`turn_log` cost (see :func:`_game_usage`)."""
    used: dict[int, list[dict]] = defaultdict(list)
    for table, usage in log.loc[log["usage"].notna(), ["log", "usage"]].itertuples(index=False):
        used[int(table)].append(usage)
    return {table: game_usage(usages) for table, usages in used.items()}


def game_usage(usages: list[dict | None]) -> dict[str, float] | None:
    """What the agents' model calls of a game cost in all (the experiment record's ``usage``)."""
    total: dict[str, float] | None = None
    for usage in usages:
        if not usage:
            continue
        total = total or dict.fromkeys(USAGE_KEYS, 0)
        for key in USAGE_KEYS:
            value = usage.get(key) or 0
            total[key] += value if isinstance(value, (int, float)) else 0
    if total is not None and "latency_s" in total:
        total["latency_s"] = round(total["latency_s"], 4)
    return total
