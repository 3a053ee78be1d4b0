"""Database rows as the records ``analysis`` reads: the experiment JSONL shape, pseudonymised.

The analysis package never sees Django; this module is the one place that turns tables, seats,
turns and study rounds into plain records, so the dashboard, the ``export_study`` command and an
experiment file all go through the same frames (:mod:`analysis.frames`) and the same summary
(:func:`analysis.summary.summarize`). A human is named only by the participant's public id
(through :mod:`studyapp.participants.pseudonyms`), never by a recruiter ID, a user or a session key.

Rounds and samples come from what the game was: a study round is round ``number - 1`` of its
participant; a game of an experiment job carries its sample and round in the job's record key;
any other game (a visitor at a table, a staff game) is round 1 of its own sample, grouped by
experiment, model and setting, so games outside studies never become one curve per visitor game
nor a sequence of "rounds" in the order they happened to be played.

Records are built in chunks of tables (:func:`iter_records`), so a study of 100,000 games is read
with bounded memory.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Iterator
from datetime import UTC
from typing import Any

import numpy as np
import pandas as pd
from django.db import connection
from django.db.models import Q, QuerySet
from django.db.models.expressions import RawSQL

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
from games import get_engine
from studyapp.participants import questionnaire
from studyapp.participants.models import Participant, Round, Study
from studyapp.participants.pseudonyms import public_record
from studyapp.pipelines.record_keys import key_position
from studyapp.tables.models import Seat, Table, Turn
from studyapp.tables.moves import storable

AGENT_TABLES = "tables"  # the experiment name of tables played outside any study
VISITORS = "visitors"  # the one player name of every human seat outside a study
CHUNK = 5000  # tables per chunk
# The counters of ``Turn.usage`` that add up over a game: the fields of games.llm.usage.Usage,
# named here because importing it loads the model SDKs (seconds an export does not need).
USAGE_KEYS = (*COUNTERS, "latency_s")

PARTICIPANT_COLUMNS: dict[str, tuple[str, str]] = {
    "player": ("string", "pseudonymous participant id (the player column of games and turns)"),
    "study": ("string", "study slug"),
    "condition": ("string", "the condition the participant was assigned to; empty in one arm"),
    "randomisation_unit": (
        "string",
        "what was randomised to the condition: person (on arrival) or group (formed in the "
        "first round's lobby of a group design); empty in one arm",
    ),
    "group": ("Int64", "the number of the participant's group in a group design, else empty"),
    "agents_disclosed": (
        "boolean",
        "whether the study showed people which seats were agents (false: blinded during play, "
        "disclosed at the end)",
    ),
    "status": (
        "string",
        "completion state: consented, playing, finished, dropped, failed_checks, ...",
    ),
    "consent_version": ("string", "version of the consent text agreed to"),
    "consented_at": ("string", "ISO-8601 time of consent"),
    "rounds": ("Int64", "rounds the study asks of each participant"),
    "rounds_finished": ("Int64", "rounds played to the end"),
    "total_reward": ("float64", "sum of round rewards"),
    "pilot": ("boolean", "a pilot bot, not a recruited person"),
    "policy": ("string", "the participant's written advice to a newcomer, if asked"),
    "time_spent_s": ("float64", "seconds from consent to the end (or to the last page seen)"),
    "payment_status": ("string", "owed, paid, not due, or pilot (a pilot is never paid)"),
    "base_pay": (
        "float64",
        "base pay settled when the person stopped (pro-rated for those who stopped early); "
        "empty for pilots and for people not settled yet",
    ),
    "bonus": ("float64", "performance bonus settled by the study's rule; empty as base_pay"),
    "bonus_due": (
        "float64",
        "what is paid as a bonus: the bonus plus the pro-rated base pay of someone who stopped "
        "early (paid as a bonus); 0 for pilots and people owed nothing",
    ),
    "currency": ("string", "currency of the amounts"),
    "paid": ("boolean", "recorded as paid (base and bonus settled)"),
    "attention_failed": (
        "string",
        "ids of the questionnaire's attention checks answered wrongly, joined by '; ' (empty: "
        "none failed, or no questionnaire reached)",
    ),
}
QUESTIONNAIRE_COLUMNS: dict[str, tuple[str, str]] = {
    "player": ("string", "pseudonymous participant id"),
    "item": ("string", "the questionnaire item's id ('policy': the policy question)"),
    "answer": ("string", "the answer as given; several choices joined by '; '"),
}


CONSENT_VERSION_COLUMNS: dict[str, tuple[str, str]] = {
    "study": ("string", "study slug"),
    "version": ("string", "consent version (the participants' consent_version)"),
    "text": ("string", "the consent text of this version, as people agreed to it"),
    "created_at": ("string", "ISO-8601 time the version was first saved"),
    "participants": ("Int64", "participants in this export who agreed to this version"),
}


def iter_records(
    tables: QuerySet[Table], experiment: str = AGENT_TABLES, chunk: int = CHUNK, events: bool = True
) -> Iterator[list[dict[str, Any]]]:
    """Lists of records, ``chunk`` tables at a time: one record per evaluated seat of every
    finished game (the questioner in Twenty Questions, every seat in Undercover). Games that were
    aborted or are still being played are left out: they have no reward to analyse.

    A finished Twenty Questions study round whose reward the flow recorded (``Round.reward``, the
    engine's outcome when the round ended) is not replayed. With ``events=False`` such a round's
    log is not read either (only counted): the records then serve the games frame, not turns."""
    ids = list(tables.order_by("created_at", "pk").values_list("pk", flat=True))
    visitors: dict[tuple, int] = defaultdict(int)  # next sample of a group outside studies
    for start in range(0, len(ids), chunk):
        part = ids[start : start + chunk]
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


def table_chunks(tables: QuerySet[Table], chunk: int = CHUNK) -> list[list[int]]:
    """The ids of ``tables`` in the order records are built, ``chunk`` at a time."""
    ids = list(tables.order_by("created_at", "pk").values_list("pk", flat=True))
    return [ids[start : start + chunk] for start in range(0, len(ids), chunk)]


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


KEYS = [*TURN_KEYS, "evaluated", "log"]


def table_records(tables: QuerySet[Table], experiment: str = AGENT_TABLES) -> list[dict[str, Any]]:
    return [record for part in iter_records(tables, experiment) for record in part]


def among(ids: list[int]) -> list[int] | RawSQL:
    """``ids`` for an ``__in`` lookup; on PostgreSQL one array parameter, since thousands of
    placeholders cost more to send and plan than the rows cost to read."""
    if connection.vendor == "postgresql":
        return RawSQL("SELECT unnest(%s::bigint[])", [ids])
    return ids


def _records(
    ids: list[int],
    experiment: str,
    visitors: dict,
    with_events: bool = True,
    log: pd.DataFrame | None = None,
) -> list[dict[str, Any]]:
    """Records of the tables ``ids``; given their ``log`` (:func:`turn_log`), the counts and the
    usage of the games whose events are not read come from it."""
    # Rows of only the fields records use: model instances were most of the cost at this size.
    by_id = {t.pk: t for t in _rows(Table.objects.filter(pk__in=among(ids)), TABLE_FIELDS)}
    seats: dict[int, list[Seat]] = defaultdict(list)
    found = _rows(Seat.objects.filter(table_id__in=among(ids)).order_by("index"), SEAT_FIELDS)
    policies = {p.pk: p for p in _rows(_policies(found), ("pk", "kind", "text"))}
    for seat in found:
        seat.policy = policies.get(seat.policy_id)
        seats[seat.table_id].append(seat)
    rounds: dict[int, dict[int, Round]] = defaultdict(dict)
    found = _rows(Round.objects.filter(table_id__in=among(ids)), ROUND_FIELDS)
    chosen = Participant.objects.filter(pk__in=among(list({r.participant_id for r in found})))
    people = {p.pk: p for p in _rows(chosen, PERSON_FIELDS)}
    for r in found:
        r.participant = people[r.participant_id]  # one instance per person, not per round
        rounds[r.table_id][r.seat] = r
    known = {
        pk
        for pk in ids
        if by_id[pk].game == "twenty-questions"
        and by_id[pk].status == Table.Status.FINISHED
        and (r := rounds[pk].get(0)) is not None
        and r.reward is not None
    }
    logs = _logs(ids if with_events else [pk for pk in ids if pk not in known])
    # The turn counts and model usage of the games whose events are not read (``known``): from
    # the chunk's log when given, else counted and summed by the database.
    if with_events:
        counts, spent = {}, {}
    elif log is not None:
        counts, spent = _log_counts(log), _log_usage(log)
    else:
        unread = [pk for pk in ids if pk in known]
        counts, spent = _counts(unread), _usages(unread)
    records = []
    for pk in ids:
        table = by_id[pk]
        events, times, usages = logs.get(pk, ([], [], []))
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
            if not engine.is_over(state) or any(e.get("type") == "abort" for e in events):
                continue
            outcome = engine.outcome(state)
        table_seats = seats[pk]
        oracle = next((s.agent_spec for s in table_seats if s.index == 1), None)
        for seat in table_seats:
            if table.game == "twenty-questions" and seat.index != 0:
                continue
            round_ = rounds[pk].get(seat.index)
            who = _who(table, seat, round_, visitors)
            record = _record(table, seat.index, events, outcome, experiment, who)
            record["oracle"] = oracle if table.game == "twenty-questions" else None
            record["taken_over"] = round_ is not None and seat.kind != Seat.Kind.HUMAN
            record["turn_times"] = times
            record["turn_usage"] = usages
            usage = spent[pk] if pk in spent else _game_usage(usages)
            record["usage"] = usage or table.options.get("usage")
            record["policy"] = seat.policy.text if seat.policy_id is not None else None
            if turns is not None:
                record["turn_count"] = turns
            records.append(record)
    return records


TABLE_FIELDS = ("pk", "game", "config", "seed", "status", "options", "started_at", "finished_at")
SEAT_FIELDS = (
    "table_id",
    "index",
    "kind",
    "agent_spec",
    "setting",
    "policy_id",
)
ROUND_FIELDS = ("table_id", "participant_id", "number", "reward", "seat")
PERSON_FIELDS = ("pk", "public_id", "condition", "is_pilot")


class Row:
    """A row read for records: the named fields of a model, as attributes, and nothing else."""

    def __repr__(self) -> str:
        return f"Row({self.__dict__})"


def _rows(found: QuerySet, fields: tuple[str, ...]) -> list[Any]:
    """Rows of ``fields`` read as tuples (Django's dict per row cost more than the row)."""
    rows = []
    for values in found.values_list(*fields):
        row = Row()
        row.__dict__ = dict(zip(fields, values, strict=True))
        rows.append(row)
    return rows


def _policies(seats: list[Row]) -> QuerySet:
    """The policies of the seats that have one (few: a join for every seat costs more)."""
    from studyapp.pipelines.models import PolicyRecord  # here, as in model_jobs

    chosen = list({seat.policy_id for seat in seats if seat.policy_id is not None})
    return PolicyRecord.objects.filter(pk__in=among(chosen))


def _counts(table_ids: list[int]) -> dict[int, tuple[int, int]]:
    """Turns and the questioner's questions per table, counted by the database."""
    kind = (
        "event ->> 'type'" if connection.vendor == "postgresql" else "json_extract(event, '$.type')"
    )
    counted = (
        f"table_id, count(*), sum(CASE WHEN seat = 0 AND {kind} = 'question' THEN 1 ELSE 0 END)"
    )
    return {
        table_id: (int(n), int(q))
        for rows in _turn_query(counted, table_ids, "GROUP BY table_id")
        for table_id, n, q in rows
    }


def _turn_query(select: str, table_ids: list[int], rest: str = "") -> Iterator[list[tuple]]:
    """The rows of ``SELECT <select>`` over the turns of ``table_ids`` (then ``rest``: more
    conditions, a grouping, an order), in batches. Plain SQL: the ORM's per-row converters cost
    more than the export's whole budget at a million turns. On PostgreSQL the ids are one array
    parameter: thousands of placeholders cost more to parse than to read, and an ``IN`` subquery
    let the planner scan every turn of the database for each chunk."""
    if not table_ids:
        return
    if connection.vendor == "postgresql":
        matching, params = "= ANY(%s)", [table_ids]
    else:
        matching, params = f"IN ({', '.join(['%s'] * len(table_ids))})", list(table_ids)
    sql = f"SELECT {select} FROM {Turn._meta.db_table} WHERE table_id {matching} {rest}"
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        while rows := cursor.fetchmany(20_000):
            yield rows


def _usages(table_ids: list[int]) -> dict[int, dict[str, float] | None]:
    """What the model calls of each of ``table_ids`` cost (see :func:`_game_usage`), from the
    turns that cost something (agents' turns), without reading the rest of the log."""
    used: dict[int, list[dict]] = defaultdict(list)
    cost = "usage::text" if connection.vendor == "postgresql" else "usage"
    for rows in _turn_query(
        f"table_id, {cost}", table_ids, f"AND {cost} <> '{{}}' ORDER BY table_id, seq"
    ):
        for table_id, text in rows:
            used[table_id].append(_usage_of(text))
    return {table: _game_usage(usages) for table, usages in used.items()}


def turn_log(table_ids: list[int]) -> pd.DataFrame:
    """The turns of ``table_ids`` as the log :func:`analysis.frames.turns_from_log` reads, labelled
    by table id, with ``question``: the event is a question of seat 0. Each distinct event text is
    parsed once, and turns are kept as columns, never as an object per turn."""
    found: dict[str, list] = {"log": [], "text": [], "created_at": [], "usage": []}
    for rows in _turn_rows(table_ids):
        for name, values in zip(found, zip(*rows, strict=True), strict=True):
            found[name].extend(values)
    if connection.vendor != "postgresql":
        found["created_at"] = [_iso(value) for value in found["created_at"]]
    found["usage"] = [_usage_of(cost) for cost in found["usage"]]
    codes, texts = pd.factorize(np.array(found.pop("text"), dtype=object))
    events = [_event_of(text) for text in texts]
    encoded = np.array([encode_event(event) for event in events], dtype=object)
    asks = [event.get("type") == "question" and event.get("seat") == 0 for event in events]
    # Object columns: text that pandas infers as its str dtype would be converted there and back.
    return pd.DataFrame(
        {
            "log": np.array(found["log"], dtype="int64"),
            "created_at": pd.Series(found["created_at"], dtype=object),
            "usage": pd.Series(found["usage"], dtype=object),
            "event": pd.Series(encoded[codes], dtype=object),
            "question": np.array(asks, dtype=bool)[codes],
        }
    )


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


def _turn_rows(table_ids: list[int]) -> Iterator[list[tuple]]:
    """(table id, event JSON text, commit time, usage JSON text) of every turn of ``table_ids``,
    in batches, each table's turns together and in order."""
    postgres = connection.vendor == "postgresql"
    when = "to_json(created_at) #>> '{}'" if postgres else "created_at"  # ISO-8601, as _iso
    event = "event::text" if postgres else "event"
    usage = "usage::text" if postgres else "usage"
    yield from _turn_query(
        f"table_id, {event}, {when}, {usage}", table_ids, "ORDER BY table_id, seq"
    )


def _logs(table_ids: list[int]) -> dict[int, tuple[list, list, list]]:
    """Every table's events, the time each was committed (ISO-8601) and what its model call cost.
    Each distinct event text is parsed once (answers repeat), so events are shared: read them
    only."""
    logs: dict[int, tuple[list, list, list]] = {}
    postgres = connection.vendor == "postgresql"
    parsed: dict[str, Any] = {}
    for rows in _turn_rows(table_ids):
        for table_id, text, created_at, cost in rows:
            events, times, usages = logs.setdefault(table_id, ([], [], []))
            value = parsed.get(text) if isinstance(text, str) else text
            if value is None:
                value = parsed[text] = _event_of(text)
            events.append(value)
            times.append(created_at if postgres else _iso(created_at))
            usages.append(_usage_of(cost))
    return logs


def _event_of(text: str) -> dict[str, Any]:
    """A turn's event from its JSON text; text that escapes an unstorable character goes through
    the tables app's :func:`storable`, as the ORM would."""
    event = json.loads(text)
    return storable(event) if "\\u" in text else event


def _usage_of(text: str | None) -> dict[str, Any] | None:
    """A turn's usage from its JSON text; None when the turn cost nothing (``{}``)."""
    return json.loads(text) or None if text and text != "{}" else None


def _iso(value: Any) -> str | None:
    """A database time as ISO-8601 with its offset: PostgreSQL's text ``2026-01-02
    03:04:05.6+00`` or SQLite's naive UTC text, alike."""
    if value is None:
        return None
    if not isinstance(value, str):  # SQLite's driver hands back naive UTC datetimes
        return (value if value.tzinfo else value.replace(tzinfo=UTC)).isoformat()
    text = value.replace(" ", "T", 1)
    if text.endswith(("+00", "-00")) or text[-3] in "+-" and text[-2:].isdigit():
        return text + ":00"
    if "+" not in text[10:] and "-" not in text[10:] and not text.endswith("Z"):
        return text + "+00:00"
    return text


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


def _job_position(table: Table) -> tuple[str, int, int] | None:
    """(setting, sample, round) of a game an experiment job stored, from its record key
    (:mod:`studyapp.pipelines.record_keys`)."""
    key = table.options.get("record")
    if not key or table.options.get("job") is None:
        return None
    return key_position(key)


def _who(table: Table, seat: Seat, round_: Round | None, visitors: dict) -> dict[str, Any]:
    """player, player_kind, setting, round, sample, condition and pilot flag of one seat."""
    options = table.options or {}
    if seat.kind == Seat.Kind.HUMAN or round_ is not None:
        # A study round stays its participant's game even when an agent took the seat over
        # (the record is then flagged ``taken_over`` and left out of the people's scores).
        if round_ is not None:
            participant = round_.participant
            return {
                "player": participant.public_id,
                "player_kind": "human",
                "setting": "cumulative",
                "round": round_.number - 1,
                "sample": 0,
                "condition": participant.condition or options.get("condition"),
                "pilot": bool(participant.is_pilot),
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
        from studyapp.agents import seat_setting  # here: it loads the model SDKs

        setting = options.get("setting") or seat_setting(seat)
        if "round" in options and "study" in options:
            # A model seated in a study round plays that round, like the people.
            number, sample = int(options["round"]) - 1, int(options.get("sample", 0))
        else:  # a game on its own: round 1 of its own sample
            key = (table.game, options.get("experiment"), seat.agent_spec, setting)
            number, sample = 0, visitors[key]
            visitors[key] += 1
    return {
        "player": seat.agent_spec,
        "player_kind": kind,
        "setting": setting,
        "round": int(number),
        "sample": int(sample),
        "condition": options.get("condition"),
        "pilot": False,
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
    options = table.options or {}
    job = options.get("job")
    return {
        "experiment": options.get("experiment") or (f"job-{job}" if job else experiment),
        "game": table.game,
        "table": str(table.pk),
        **who,
        "model": who["player"] if who["player_kind"] != "human" else None,
        "case": options.get("case"),
        "seed": table.seed,
        "config": table.config,
        "events": events,
        "outcome": {str(k): v for k, v in outcome.items()},
        "evaluated_seat": seat,
        "role": mine.get("role"),
        "reward": float(mine["reward"]),
        "win": mine.get("win"),
        "questions": mine.get("questions"),
        "oracle_failed": bool(options.get("oracle_failed")),
        "started_at": table.started_at.isoformat() if table.started_at else None,
        "finished_at": table.finished_at.isoformat() if table.finished_at else None,
    }


def study_participants(study: Study, include_pilots: bool = False) -> QuerySet[Participant]:
    """The study's participants who started, less those who withdrew (and pilots unless asked)."""
    found = study.participants.exclude(status=Participant.Status.WITHDRAWN)
    if not include_pilots:
        found = found.exclude(is_pilot=True)
    return found


def model_jobs(study: Study) -> QuerySet:
    """The experiment jobs attached to the study (its model arm)."""
    from studyapp.pipelines.models import Job

    return Job.objects.filter(kind="experiment", parameters__study=study.slug)


def study_tables(study: Study, include_pilots: bool = False) -> QuerySet[Table]:
    """The study's round tables (less those of withdrawn participants and of pilots unless
    asked) and the games of the experiment jobs attached to it."""
    rounds = Round.objects.filter(participant__in=study_participants(study, include_pilots))
    jobs = list(model_jobs(study).values_list("pk", flat=True))
    return Table.objects.filter(Q(pk__in=rounds.values("table_id")) | Q(options__job__in=jobs))


def agent_tables() -> QuerySet[Table]:
    """Tables played outside any study (agents, demos, staff games, experiment jobs)."""
    return Table.objects.exclude(pk__in=Round.objects.values("table_id"))


def participants_frame(participants: Iterable[Participant]) -> pd.DataFrame:
    rows = []
    for participant in participants:
        row = public_record(participant)
        row["player"] = row.pop("public_id")
        row["condition"] = participant.condition
        drawn = participant.assignment or {}
        # Arrivals drawn before groups existed carry no unit: a person was randomised.
        row["randomisation_unit"] = drawn.get("unit", "person") if drawn else ""
        row["group"] = drawn.get("group")
        row["agents_disclosed"] = bool(participant.study.agents_disclosed)
        row["pilot"] = bool(participant.is_pilot)
        row["rounds"] = participant.study.rounds
        consented = participant.consented_at
        row["consented_at"] = consented.isoformat() if consented else None
        row["attention_failed"] = "; ".join(participant.attention_failed or [])
        row |= _amounts(participant)
        rows.append(row)
    frame = pd.DataFrame(rows, columns=list(PARTICIPANT_COLUMNS))
    return typed(frame, PARTICIPANT_COLUMNS)


def consent_versions_frame(study: Study, include_pilots: bool = False) -> pd.DataFrame:
    """Every consent version of the study with its text (consent_versions.csv)."""
    agreed: dict[str, int] = defaultdict(int)
    for version in started(study, include_pilots).values_list("consent_version", flat=True):
        agreed[version] += 1
    rows = [
        {
            "study": study.slug,
            "version": v.version,
            "text": v.text,
            "created_at": v.created_at.isoformat(),
            "participants": agreed.get(v.version, 0),
        }
        for v in study.consent_versions.all()
    ]
    frame = pd.DataFrame(rows, columns=list(CONSENT_VERSION_COLUMNS))
    return typed(frame, CONSENT_VERSION_COLUMNS)


def questionnaire_frame(participants: Iterable[Participant]) -> pd.DataFrame:
    """One row per answered item of each participant, the policy question first (item
    ``policy``), then the questionnaire in the order it was asked."""
    rows = []
    for participant in participants:
        if participant.policy:
            rows.append(
                {"player": participant.public_id, "item": "policy", "answer": participant.policy}
            )
        order = [item["id"] for item in participant.study.questionnaire or []]
        answers = participant.questionnaire_answers or {}
        ordered = {k: answers[k] for k in order if k in answers}
        for row in questionnaire.export_rows(participant.public_id, ordered):
            rows.append(
                {"player": row["participant"], "item": row["item"], "answer": str(row["answer"])}
            )
    frame = pd.DataFrame(rows, columns=list(QUESTIONNAIRE_COLUMNS))
    return typed(frame, QUESTIONNAIRE_COLUMNS)


def _amounts(participant: Participant) -> dict[str, Any]:
    """What the participant is owed or was paid (nothing for a pilot)."""
    pilot = bool(participant.is_pilot)

    def money(value: Any) -> float | None:
        return None if pilot or value is None else float(value)

    return {
        "payment_status": participant.payment_status,
        "base_pay": money(participant.payment_amount),
        "bonus": money(participant.bonus),
        "bonus_due": float(participant.bonus_due),
        "currency": participant.study.currency,
        "paid": bool(participant.paid),
    }


def started(study: Study, include_pilots: bool = False) -> QuerySet[Participant]:
    chosen = study_participants(study, include_pilots).filter(status__in=Participant.STARTED)
    return chosen.select_related("study").order_by("pk")


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
