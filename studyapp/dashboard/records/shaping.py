"""Records and frames from the rows :mod:`.queries` reads: one record per evaluated seat of a
finished game, in the experiment JSONL shape, and the games and turns frames built from them.

Rounds and samples come from what the game was: a study round is round ``number - 1`` of its
participant; a game of an experiment job carries its sample and round in the job's record key;
any other game (a visitor at a table, a staff game) is round 1 of its own sample, grouped by
experiment, model and setting, so games outside studies never become one curve per visitor game
nor a sequence of "rounds" in the order they happened to be played.

Records are built in chunks of tables (:func:`iter_records`), so a study of 100,000 games is read
with bounded memory.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from typing import Any

import numpy as np
import pandas as pd
from django.db.models import Count, QuerySet

from analysis.frames import (
    GAME_COLUMNS,
    TURN_KEYS,
    encode_event,
    games_frame,
    turn_keys,
    turns_frame,
    turns_from_log,
    typed,
)
from analysis.frames import USAGE_KEYS as COUNTERS
from analysis.frames import seat_slot as frames_seat_slot
from games import get_engine
from studyapp.dashboard.records.people import participants_frame
from studyapp.dashboard.records.queries import (
    CHUNK,
    Row,
    agent_tables,
    event_of,
    read_logs,
    read_tables,
    started,
    study_tables,
    table_chunks,
    turn_columns,
    turn_counts,
    turn_usages,
)
from studyapp.participants import table_study
from studyapp.participants.models import Participant, Round, Study, StudyTable
from studyapp.pipelines.record_keys import key_position
from studyapp.tables.models import PERSON_ACTOR, SKIP_SPEC, TABLE_EVENTS, Seat, Table
from studyapp.tables.options import TableOptions
from studyapp.tables.seat_agents import seat_setting

AGENT_TABLES = "tables"  # the experiment name of tables played outside any study
VISITORS = "visitors"  # the one player name of every human seat outside a study
# The counters of ``Turn.usage`` that add up over a game: the fields of games.llm.usage.Usage,
# named here because importing it loads the model SDKs (seconds an export does not need).
USAGE_KEYS = (*COUNTERS, "latency_s")
KEYS = [*TURN_KEYS, "evaluated", "log"]


def iter_records(
    tables: QuerySet[Table], experiment: str = AGENT_TABLES, chunk: int = CHUNK, events: bool = True
) -> Iterator[list[dict[str, Any]]]:
    """Lists of records, ``chunk`` tables at a time: one record per evaluated seat of every
    finished game (the questioner in Twenty Questions, every seat in Undercover). A study
    round's game that ended early (aborted, or its person dropped out) is kept with its end
    (``ended``) and no reward, so a dropped person's partial game is in the files; a game still
    being played, or one of agents that never finished, is left out.

    A finished Twenty Questions study round whose reward the flow recorded (``Round.reward``, the
    engine's outcome when the round ended) is not replayed. With ``events=False`` such a round's
    log is not read either (only counted): the records then serve the games frame, not turns."""
    visitors: dict[tuple, int] = defaultdict(int)  # next sample of a group outside studies
    for part in table_chunks(tables, chunk):
        yield _records(part, experiment, visitors, events)


def iter_games_and_turns(
    tables: QuerySet[Table], experiment: str = AGENT_TABLES, chunk: int = CHUNK
) -> Iterator[tuple[pd.DataFrame, pd.DataFrame]]:
    """The games and turns frames of :func:`iter_records`, ``chunk`` tables at a time, with the
    turns read as columns (:func:`turn_log`) rather than as an event object per turn: what lets an
    export stream a million turns."""
    visitors: dict[tuple, int] = defaultdict(int)
    for part in table_chunks(tables, chunk):
        yield games_and_turns(part, experiment, visitors)


def games_and_turns(
    part: list[int], experiment: str, visitors: dict
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The games and turns frames of one chunk (see :func:`games_and_keys`), its turns read once
    for both."""
    log = turn_log(part)
    games, keys = games_and_keys(part, experiment, visitors, log)
    return games, turns_from_log(keys, log)


def games_and_keys(
    part: list[int], experiment: str, visitors: dict, log: pd.DataFrame | None = None
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The games frame of the tables ``part`` (one chunk of :func:`table_chunks`, in order; the
    same ``visitors`` for every chunk of an export) and the keys that label their turns in
    :func:`analysis.frames.turns_from_log` (the log label is the table id). Given the chunk's
    ``log`` (:func:`turn_log`), counts and usage come from it; else the database counts them."""
    records = _records(part, experiment, visitors, with_events=False, log=log)
    keys = [turn_keys(record, i, log=int(record["table"])) for i, record in enumerate(records)]
    return games_frame(records), pd.DataFrame(keys, columns=KEYS)


def table_records(tables: QuerySet[Table], experiment: str = AGENT_TABLES) -> list[dict[str, Any]]:
    return [record for part in iter_records(tables, experiment) for record in part]


def _records(
    ids: list[int],
    experiment: str,
    visitors: dict,
    with_events: bool = True,
    log: pd.DataFrame | None = None,
) -> list[dict[str, Any]]:
    """Records of the tables ``ids``; given their ``log`` (:func:`turn_log`), the counts and the
    usage of the games whose events are not read come from it."""
    by_id, seats, rounds = read_tables(ids)
    known = {
        pk
        for pk in ids
        if by_id[pk].game == "twenty-questions"
        and by_id[pk].status == Table.Status.FINISHED
        and (r := rounds[pk].get(0)) is not None
        and r.reward is not None
    }
    logs = read_logs(ids if with_events else [pk for pk in ids if pk not in known])
    # The turn counts and model usage of the games whose events are not read (``known``): from
    # the chunk's log when given, else counted and summed by the database.
    if with_events:
        counts, spent = {}, {}
    elif log is not None:
        counts, spent = _log_counts(log), _log_usage(log)
    else:
        unread = [pk for pk in ids if pk in known]
        counts = turn_counts(unread)
        spent = {table: _game_usage(usages) for table, usages in turn_usages(unread).items()}
    records = []
    for pk in ids:
        table = by_id[pk]
        events, times, usages, actors = logs.get(pk, ([], [], [], []))
        if pk in known:
            turns, questions = counts.get(pk) or (
                len(events),
                sum(e.get("type") == "question" and e.get("seat") == 0 for e in events),
            )
            reward = rounds[pk][0].reward
            outcome = {0: {"role": "questioner", "reward": reward, "questions": questions}}
        else:
            turns = None
            engine = get_engine(table.game)
            state = engine.replay(table.config, events)
            if engine.is_over(state) and not any(e.get("type") == "abort" for e in events):
                outcome = engine.outcome(state)
            else:
                ended = _ended_early(table, rounds[pk], events)
                if ended is None:  # still being played, or an experiment's: no row yet
                    continue
                outcome = _partial_outcome(table, len(seats[pk]), events, ended)
        table_seats = seats[pk]
        oracle = next((s.agent_spec for s in table_seats if s.index == 1), None)
        for seat in table_seats:
            if table.game == "twenty-questions" and seat.index != 0:
                continue
            round_ = rounds[pk].get(seat.index)
            who = _who(table, seat, round_, visitors)
            if any(r.participant.is_pilot for r in rounds[pk].values()):
                who["pilot"] = True  # a pilot table: every seat's row, the agents' too
            record = _record(table, seat.index, events, outcome, experiment, who)
            record["oracle"] = oracle if table.game == "twenty-questions" else None
            record["taken_over"] = round_ is not None and seat.kind != Seat.Kind.HUMAN
            record["taken_over_by"] = seat.agent_spec if record["taken_over"] else None
            record["seat_slots"] = table.study_part.slots(len(table_seats))
            people = {i: r.participant.public_id for i, r in rounds[pk].items()}
            moves = list(zip(actors, events, _usages(usages, len(events)), strict=True))
            record["turn_actors"] = [
                actor_label(actor, event.get("seat"), people, usage)
                for actor, event, usage in moves
            ]
            record["turn_actor_kinds"] = [
                actor_kind(actor, event.get("type"), usage) for actor, event, usage in moves
            ]
            record["turn_stood_in_fors"] = [stood_in_for(actor, usage) for actor, _, usage in moves]
            record["stand_in_moves"] = sum(
                1
                for actor, event, usage in moves
                if event.get("seat") == seat.index and stood_in_for(actor, usage)
            )
            record["turn_times"] = times
            record["turn_usage"] = usages
            usage = spent[pk] if pk in spent else _game_usage(usages)
            record["usage"] = usage or _opts(table).usage
            record["policy"] = seat.policy.text if seat.policy_id is not None else None
            if turns is not None:
                record["turn_count"] = turns
            records.append(record)
    return records


def _usages(usages: list, n: int) -> list:
    """A game's turn usages, one per event (None where a turn has none)."""
    return (list(usages) + [None] * n)[:n]


def stood_in_for(actor: str | None, usage: Any) -> str | None:
    """The model a turn's move stood in for: its actor, when an offline stand-in made the move
    because the model failed (``usage["stand_in"]``, studyapp.tables.agent_turns); else None."""
    if actor and isinstance(usage, dict) and usage.get("stand_in"):
        return actor
    return None


def _ended_early(table: Row, rounds: dict[int, Row], events: list[dict]) -> str | None:
    """How a study round's game that has no result ended: ``aborted`` (the table stopped it,
    e.g. when the person left and the study's dropout rule ends the game) or ``unfinished`` (its
    person dropped out and it was never played to the end). None for a game still being played
    or one outside a study, which the exports leave out until it ends."""
    if not rounds:
        return None
    if table.status == Table.Status.ABORTED or any(e.get("type") == "abort" for e in events):
        return "aborted"
    if any(r.participant.status == Participant.Status.DROPPED for r in rounds.values()):
        return "unfinished"
    return None


def _partial_outcome(
    table: Row, players: int, events: list[dict], ended: str
) -> dict[int, dict[str, Any]]:
    """Every seat's outcome of a game that ended early: no reward and no win (the game has no
    result), the questions asked, and how it ended."""
    return {
        seat: {
            "reward": None,
            "win": None,
            "questions": sum(e.get("type") == "question" and e.get("seat") == seat for e in events),
            "ended": ended,
        }
        for seat in range(players)
    }


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


def _log_counts(log: pd.DataFrame) -> dict[int, tuple[int, int]]:
    """Turns and the questioner's questions per table of a :func:`turn_log`."""
    counted = log.groupby("log")["question"].agg(["size", "sum"])
    return {int(t): (int(n), int(q)) for t, n, q in counted.itertuples()}


def _log_usage(log: pd.DataFrame) -> dict[int, dict[str, float] | None]:
    """What the model calls of each table of a :func:`turn_log` cost (see :func:`_game_usage`)."""
    used: dict[int, list[dict]] = defaultdict(list)
    for table, usage in log.loc[log["usage"].notna(), ["log", "usage"]].itertuples(index=False):
        used[int(table)].append(usage)
    return {table: _game_usage(usages) for table, usages in used.items()}


def _game_usage(usages: list[dict | None]) -> dict[str, float] | None:
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


def _opts(table: Any) -> TableOptions:
    """A record row's table options, typed, read once per row."""
    found = table.__dict__.get("opts")
    if found is None:
        found = table.__dict__["opts"] = TableOptions.from_json(table.options)
    return found


def _job_position(table: Row) -> tuple[str, int, int] | None:
    """(setting, sample, round) of a game an experiment job stored, from its record key
    (:mod:`studyapp.pipelines.record_keys`)."""
    key = _opts(table).record
    if not key or _opts(table).job is None:
        return None
    return key_position(key)


def _who(table: Row, seat: Row, round_: Row | None, visitors: dict) -> dict[str, Any]:
    """player, player_kind, setting, round, sample, condition, pilot flag and (a person's in a
    study) participant status of one seat."""
    opts, part = _opts(table), table.study_part
    if seat.kind == Seat.Kind.HUMAN or round_ is not None:
        # A study round stays its participant's game even when an agent took the seat over
        # (the record is then flagged ``taken_over`` and left out of the people's scores).
        if round_ is not None:
            participant = round_.participant
            return {
                "player": participant.public_id,
                "player_kind": "human",
                # People play their games in a row, with no policy text from the system unless
                # the study showed them one (never a model's "cumulative" setting).
                "setting": "shown-policy" if part.shown_policy else "none",
                "round": round_.number - 1,
                "sample": 0,
                "condition": participant.condition or part.condition,
                "pilot": bool(participant.is_pilot),
                "participant_status": participant.status,
            }
        key = (table.game, VISITORS)
        sample = visitors[key]
        visitors[key] += 1
        return {
            "player": VISITORS,
            "player_kind": "human",
            "setting": "none",
            "round": 0,
            "sample": sample,
            "condition": None,
            "pilot": False,
        }
    kind = "offline" if seat.agent_spec.startswith("offline:") else "model"
    position = _job_position(table)
    if position is not None:
        setting, sample, number = position
    else:
        setting = opts.setting or seat_setting(seat)
        if part.round is not None and part.is_study:
            # A model seated in a study round plays that round, like the people.
            number, sample = part.round - 1, opts.sample or 0
        else:  # a game on its own: round 1 of its own sample
            key = (table.game, opts.experiment, seat.agent_spec, setting)
            number, sample = 0, visitors[key]
            visitors[key] += 1
    return {
        "player": seat.agent_spec,
        "player_kind": kind,
        "setting": setting,
        "round": int(number),
        "sample": int(sample),
        "condition": part.condition,
        "pilot": False,
    }


def _record(
    table: Row,
    seat: int,
    events: list[dict[str, Any]],
    outcome: dict[int, dict[str, Any]],
    experiment: str,
    who: dict[str, Any],
) -> dict[str, Any]:
    mine = outcome[seat]
    opts = _opts(table)
    job = opts.job
    return {
        "experiment": opts.experiment or (f"job-{job}" if job else experiment),
        "game": table.game,
        "table": str(table.pk),
        **who,
        "model": who["player"] if who["player_kind"] != "human" else None,
        "case": opts.case,
        "seed": table.seed,
        "config": table.config,
        "events": events,
        "outcome": {str(k): v for k, v in outcome.items()},
        "evaluated_seat": seat,
        "role": mine.get("role"),
        "reward": None if mine["reward"] is None else float(mine["reward"]),
        "win": mine.get("win"),
        "ended": mine.get("ended", "finished"),
        "questions": mine.get("questions"),
        "oracle_failed": bool(opts.oracle_failed),
        "started_at": table.started_at.isoformat() if table.started_at else None,
        "finished_at": table.finished_at.isoformat() if table.finished_at else None,
    }


def study_games(study: Study, include_pilots: bool = False) -> pd.DataFrame:
    """The games frame of a study, built chunk by chunk (no turn frame is kept)."""
    tables = study_tables(study, include_pilots)
    parts = [
        games_frame(records)
        for records in iter_records(tables, experiment=study.slug, events=False)
    ]
    return _concat(parts, GAME_COLUMNS)


def _concat(parts: list[pd.DataFrame], columns: dict) -> pd.DataFrame:
    parts = [p for p in parts if len(p)]
    if not parts:
        return games_frame([]) if columns is GAME_COLUMNS else turns_frame([])
    return typed(pd.concat(parts, ignore_index=True), columns)


def study_frames(study: Study, include_pilots: bool = False) -> dict[str, pd.DataFrame]:
    """games, turns and participants of a study, in memory (small studies, tests)."""
    records = table_records(study_tables(study, include_pilots), experiment=study.slug)
    return {
        "games": games_frame(records),
        "turns": turns_frame(records),
        "participants": participants_frame(started(study, include_pilots)),
    }


def agent_games() -> pd.DataFrame:
    parts = [games_frame(r) for r in iter_records(agent_tables(), events=False)]
    return _concat(parts, GAME_COLUMNS)


def agent_frames() -> dict[str, pd.DataFrame]:
    """games and turns of every table played outside a study."""
    records = table_records(agent_tables())
    return {"games": games_frame(records), "turns": turns_frame(records)}
