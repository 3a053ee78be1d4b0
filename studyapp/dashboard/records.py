"""Database rows as the records ``analysis`` reads: the experiment JSONL shape, pseudonymised.

The analysis package never sees Django; this module is the one place that turns tables, seats,
turns and study rounds into plain records, so the dashboard, the ``export_study`` command and an
experiment file all go through the same frames. A human is named only by the participant's public
id (through :mod:`studyapp.participants.pseudonyms`), never by a recruiter ID, a user or a session
key; a human seat outside any study gets a placeholder built from the table and seat.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import fields
from typing import Any

import pandas as pd
from django.db.models import QuerySet

from analysis.frames import GAME_COLUMNS, TURN_COLUMNS, games_frame, turns_frame, typed
from games import get_engine
from games.llm.usage import Usage
from studyapp.agents import seat_setting
from studyapp.participants.models import Participant, Round, Study
from studyapp.participants.pseudonyms import public_record
from studyapp.tables.models import Seat, Table, Turn

AGENT_TABLES = "tables"  # the experiment name of tables played outside any study
# The counters of ``Turn.usage`` that add up over a game.
USAGE_KEYS = tuple(field.name for field in fields(Usage))

PARTICIPANT_COLUMNS: dict[str, tuple[str, str]] = {
    "player": ("string", "pseudonymous participant id (the player column of games and turns)"),
    "study": ("string", "study slug"),
    "status": ("string", "consented, playing, finished, dropped, withdrawn, ..."),
    "consent_version": ("string", "version of the consent text agreed to"),
    "rounds_finished": ("Int64", "rounds played to the end"),
    "total_reward": ("float64", "sum of round rewards"),
    "policy": ("string", "the participant's written advice to a newcomer, if asked"),
    "time_spent_s": ("float64", "seconds from consent to the end (or to the last page seen)"),
}


def table_records(tables: QuerySet[Table], experiment: str = AGENT_TABLES) -> list[dict[str, Any]]:
    """One record per evaluated seat of every finished game among ``tables``: the questioner in
    Twenty Questions, every seat in Undercover. Games that were aborted or are still being played
    are left out: they have no reward to analyse."""
    tables = list(tables.prefetch_related("seats__policy").order_by("created_at", "pk"))
    logs, usages = _logs([table.pk for table in tables])
    rounds = {
        r.table_id: r
        for r in Round.objects.filter(table_id__in=logs.keys()).select_related("participant")
    }
    position: dict[tuple, int] = defaultdict(int)  # next round of an agent's sequence
    records = []
    for table in tables:
        events = logs.get(table.pk, [])
        engine = get_engine(table.game)
        state = engine.replay(table.config, events)
        if not engine.is_over(state) or any(e.get("type") == "abort" for e in events):
            continue
        outcome = engine.outcome(state)
        for seat in table.seats.all():
            if table.game == "twenty-questions" and seat.index != 0:
                continue
            who = _who(table, seat, rounds.get(table.pk), position)
            record = _record(table, seat.index, events, outcome, experiment, who)
            # Experiment jobs store a game's usage on its table (their log has no per-turn figures).
            record["usage"] = usages.get(table.pk) or table.options.get("usage")
            record["policy"] = seat.policy.text if seat.policy_id is not None else None
            records.append(record)
    return records


def _logs(
    table_ids: list[int],
) -> tuple[dict[int, list[dict[str, Any]]], dict[int, dict[str, float]]]:
    """Every table's events, and what its agents' model calls cost over the whole game (the
    experiment record's ``usage``: every seat's calls, as the experiment runner counts them).
    A table whose turns recorded no usage (humans, offline agents) has no entry."""
    logs: dict[int, list[dict[str, Any]]] = defaultdict(list)
    usages: dict[int, dict[str, float]] = {}
    turns = Turn.objects.filter(table_id__in=table_ids).order_by("table_id", "seq")
    for table_id, event, usage in turns.values_list("table_id", "event", "usage").iterator():
        logs[table_id].append(event)
        if usage:
            total = usages.setdefault(table_id, dict.fromkeys(USAGE_KEYS, 0))
            for key in USAGE_KEYS:
                total[key] += usage.get(key) or 0
    for total in usages.values():
        total["latency_s"] = round(total["latency_s"], 4)
    return logs, usages


def _who(table: Table, seat: Seat, round_: Round | None, position: dict) -> dict[str, Any]:
    """player, player_kind, setting, round and sample of one seat."""
    if seat.kind == Seat.Kind.HUMAN:
        if round_ is not None:
            player, setting, number = round_.participant.public_id, "cumulative", round_.number - 1
        else:
            player, setting, number = f"anon-{table.pk}-{seat.index}", "none", 0
        return {
            "player": player,
            "player_kind": "human",
            "setting": setting,
            "round": number,
            "sample": 0,
        }
    setting = table.options.get("setting") or seat_setting(seat)
    sample = int(table.options.get("sample", 0))
    key = (table.game, seat.agent_spec, setting, sample)
    number = table.options.get("round", position[key])
    position[key] = int(number) + 1
    kind = "offline" if seat.agent_spec.startswith("offline:") else "model"
    return {
        "player": seat.agent_spec,
        "player_kind": kind,
        "setting": setting,
        "round": int(number),
        "sample": sample,
    }


def _record(
    table: Table,
    seat: int,
    events: list[dict[str, Any]],
    outcome: dict[int, dict[str, Any]],
    experiment: str,
    who: dict[str, Any],
) -> dict[str, Any]:
    mine = outcome[seat]
    return {
        "experiment": table.options.get("experiment") or experiment,
        "game": table.game,
        "table": str(table.pk),
        **who,
        "model": who["player"] if who["player_kind"] != "human" else None,
        "case": table.options.get("case"),
        "seed": table.seed,
        "config": table.config,
        "events": events,
        "outcome": {str(k): v for k, v in outcome.items()},
        "evaluated_seat": seat,
        "role": mine.get("role"),
        "reward": float(mine["reward"]),
        "win": mine.get("win"),
        "questions": mine.get("questions"),
        "started_at": table.started_at.isoformat() if table.started_at else None,
        "finished_at": table.finished_at.isoformat() if table.finished_at else None,
    }


def study_tables(study: Study) -> QuerySet[Table]:
    """The study's round tables, less those of participants who withdrew."""
    rounds = Round.objects.filter(participant__study=study).exclude(
        participant__status=Participant.Status.WITHDRAWN
    )
    return Table.objects.filter(pk__in=rounds.values("table_id"))


def agent_tables() -> QuerySet[Table]:
    """Tables played outside any study (agents, demos, staff games)."""
    return Table.objects.exclude(pk__in=Round.objects.values("table_id"))


def participants_frame(participants: Iterable[Participant]) -> pd.DataFrame:
    rows = []
    for participant in participants:
        row = public_record(participant)
        row["player"] = row.pop("public_id")
        rows.append(row)
    frame = pd.DataFrame(rows, columns=list(PARTICIPANT_COLUMNS))
    return typed(frame, PARTICIPANT_COLUMNS)


def study_frames(study: Study) -> dict[str, pd.DataFrame]:
    """games, turns and participants of a study, ready for analysis or export. Participants who
    withdrew are left out entirely."""
    records = table_records(study_tables(study), experiment=study.slug)
    started = study.participants.filter(status__in=Participant.STARTED).exclude(
        status=Participant.Status.WITHDRAWN
    )
    return {
        "games": games_frame(records),
        "turns": turns_frame(records),
        "participants": participants_frame(started.select_related("study").order_by("pk")),
    }


def agent_frames() -> dict[str, pd.DataFrame]:
    """games and turns of every table played outside a study."""
    records = table_records(agent_tables())
    return {"games": games_frame(records), "turns": turns_frame(records)}


def export_docs() -> dict[str, dict[str, tuple[str, str]]]:
    """Column descriptions for the README of an export."""
    return {"games": GAME_COLUMNS, "turns": TURN_COLUMNS, "participants": PARTICIPANT_COLUMNS}
