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

import pandas as pd
from django.db.models import QuerySet

from analysis.frames import (
    GAME_COLUMNS,
    TURN_KEYS,
    games_frame,
    turn_keys,
    turns_frame,
    turns_from_log,
    typed,
)
from games import get_engine
from games.experiment.seating import opponents_text
from studyapp.dashboard.records.moves import (
    VISITORS,
    actor_kind,
    actor_label,
    game_usage,
    log_counts,
    log_usage,
    stood_in_for,
    turn_log,
    usages_of,
)
from studyapp.dashboard.records.people import participants_frame
from studyapp.dashboard.records.queries import (
    CHUNK,
    Row,
    agent_tables,
    read_logs,
    read_tables,
    started,
    study_tables,
    table_chunks,
    turn_counts,
    turn_usages,
)
from studyapp.participants.models import Participant, Study
from studyapp.pipelines.record_keys import key_position
from studyapp.tables.models import Seat, Table
from studyapp.tables.options import TableOptions
from studyapp.tables.seat_agents import seat_setting

AGENT_TABLES = "tables"  # the experiment name of tables played outside any study
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
        counts, spent = log_counts(log), log_usage(log)
    else:
        unread = [pk for pk in ids if pk in known]
        counts = turn_counts(unread)
        spent = {table: game_usage(usages) for table, usages in turn_usages(unread).items()}
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
        scored_seat = _opts(table).other.get("evaluated_seat")
        for seat in table_seats:
            if table.game == "twenty-questions" and seat.index != 0:
                continue
            if isinstance(scored_seat, int) and seat.index != scored_seat:
                continue  # a model arm's game: its scored seat, not the design's agents
            round_ = rounds[pk].get(seat.index)
            who = _who(table, seat, round_, visitors)
            if any(r.participant.is_pilot for r in rounds[pk].values()):
                who["pilot"] = True  # a pilot table: every seat's row, the agents' too
            record = _record(table, seat.index, events, outcome, experiment, who)
            record["oracle"] = oracle if table.game == "twenty-questions" else None
            record.update(_table_marks(table, table_seats))
            record["taken_over"] = round_ is not None and seat.kind != Seat.Kind.HUMAN
            record["taken_over_by"] = seat.agent_spec if record["taken_over"] else None
            if _left_before_the_end(round_, record):
                record["ended"] = "unfinished"
            # a study's table: its study part; a model arm's twin: the slots its job stored
            record["seat_slots"] = table.study_part.slots(len(table_seats)) or list(
                _opts(table).other.get("seat_slots") or []
            )
            people = {i: r.participant.public_id for i, r in rounds[pk].items()}
            moves = list(zip(actors, events, usages_of(usages, len(events)), strict=True))
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
            usage = spent[pk] if pk in spent else game_usage(usages)
            record["usage"] = usage or _opts(table).usage
            record["policy"] = seat.policy.text if seat.policy_id is not None else None
            if turns is not None:
                record["turn_count"] = turns
            records.append(record)
    return records


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


def _table_marks(table: Row, seats: list[Row]) -> dict[str, Any]:
    """What a comparison of people and model arm reads of a game's table (analysis.comparability):
    its language, players, the agents at the seats that were neither a person's nor the arm's
    model's (Undercover), and how a model arm's scored seat was chosen."""
    opts = _opts(table)
    marks: dict[str, Any] = {"language": opts.language, "players": len(seats)}
    own = opts.other.get("model_seats") if opts.job is not None else opts.person_seats
    if table.game == "undercover" and (own or opts.job is not None):
        mine = set(own or [])
        marks["opponents"] = opponents_text(
            [seat.agent_spec for seat in seats if seat.index not in mine]
        )
    if opts.job is not None:
        marks["evaluated_role"] = opts.other.get("evaluated_role")
    return marks


def _left_before_the_end(round_: Row | None, record: dict[str, Any]) -> bool:
    """A person's game that was played to its end without them: an agent took their seat over,
    or they dropped out while it ran (their round was never booked: no reward). The game is
    theirs no more than an aborted one: ``unfinished``, in no score."""
    if round_ is None or record["ended"] != "finished":
        return False
    dropped = round_.participant.status == Participant.Status.DROPPED
    return record["taken_over"] or (dropped and round_.reward is None)


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
        # a study's table: its study part; a model arm's twin: the condition its job stored
        "condition": part.condition or opts.other.get("condition"),
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
