"""Games and turns as two long tables, built from records of finished games.

A record is one finished game seen from its evaluated seat, in the shape ``python -m games
experiment`` writes as a JSONL line (docs/architecture.md). The web platform builds the same shape
from its database and adds ``table``, ``player`` (a pseudonymous participant id for a human) and
``player_kind``. Everything downstream reads the frames, never the records, so experiment files and
the database go through the same code.

Column names, dtypes and descriptions live in one place (:mod:`analysis.columns`) so the export
README and the CSV reader cannot drift from the frames.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from analysis.columns import GAME_COLUMNS, TURN_COLUMNS
from games.experiment.summary import oracle_failed
from games.twenty_questions.names import question_text

Record = dict[str, Any]

DEFAULT_RULES = "1"  # the rules version of a game whose config names none
REQUIRED = ("game", "setting", "round", "sample", "reward")
TWENTY_QUESTIONS_ROLES = ("questioner", "oracle")
encode_event = json.JSONEncoder(ensure_ascii=False).encode
USAGE_KEYS = ("calls", "input_tokens", "output_tokens", "input_chars", "output_chars", "retries")


class RecordError(ValueError):
    """A record that cannot be analysed; the message names the line or record."""


def read_jsonl(path: str | Path) -> list[Record]:
    """Read an experiment file; a bad line raises :class:`RecordError` naming its line number."""
    records = []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as err:
                raise RecordError(f"{path}, line {number}: not valid JSON ({err.msg})") from err
            problem = check_record(record)
            if problem:
                raise RecordError(f"{path}, line {number}: {problem}")
            record.setdefault("table", f"{record.get('experiment', '')}#{number}")
            records.append(record)
    return records


def check_record(record: Any) -> str:
    """What is wrong with a record, or an empty string when it can be analysed."""
    if not isinstance(record, dict):
        return "a record must be a JSON object"
    # a game that ended early (``ended``: aborted, unfinished) has no reward
    early = record.get("ended") not in (None, "finished")
    missing = [
        key for key in REQUIRED if record.get(key) is None and not (early and key == "reward")
    ]
    if missing:
        return f"missing {', '.join(missing)}"
    if not (record.get("player") or record.get("model")):
        return "missing model (or player)"
    return ""


def games_frame(records: Iterable[Record]) -> pd.DataFrame:
    """One row per record: the evaluated seat's game with its reward, win and usage."""
    rows = []
    for index, record in enumerate(records):
        problem = check_record(record)
        if problem:
            raise RecordError(f"record {index}: {problem}")
        rows.append(_game_row(record, index))
    return typed(pd.DataFrame(rows, columns=list(GAME_COLUMNS)), GAME_COLUMNS)


def turns_frame(records: Iterable[Record]) -> pd.DataFrame:
    """One row per event of every game's log, keyed to its game by ``table``: a game seen from
    several evaluated seats (Undercover) gives its events once (see :func:`turns_from_log`)."""
    keys: list[dict[str, Any]] = []
    log: dict[str, list] = {
        "log": [],
        "event": [],
        "created_at": [],
        "usage": [],
        "actor": [],
        "actor_kind": [],
        "stood_in_for": [],
        "seat_slot": [],
    }
    logged: dict[str, int] = {}  # table -> the label of its log
    for index, record in enumerate(records):
        events = record.get("events") or []
        n = len(events)
        if not n:
            continue
        table = _table(record, index)
        if table in logged:
            keys.append(turn_keys(record, index, log=logged[table]))
            continue
        logged[table] = index
        keys.append(turn_keys(record, index, log=index))
        times = list(record.get("turn_times") or [])
        usages = list(record.get("turn_usage") or [])
        log["log"].extend([index] * n)
        log["event"].extend([encode_event(event) for event in events])
        log["created_at"].extend((times + [None] * n)[:n])
        log["usage"].extend((usages + [None] * n)[:n])
        for name in ("actor", "actor_kind", "stood_in_for"):
            given = list(record.get(f"turn_{name}s") or [])
            log[name].extend((given + [None] * n)[:n])
        slots = record.get("seat_slots") or []
        log["seat_slot"].extend(seat_slot(slots, event.get("seat")) for event in events)
    columns = [*TURN_KEYS, "evaluated", "log"]
    return turns_from_log(pd.DataFrame(keys, columns=columns), pd.DataFrame(log))


TURN_KEYS = ("experiment", "game", "table", "player", "setting", "round", "sample", "started_at")


def turn_keys(record: Record, index: int, log: Any) -> dict[str, Any]:
    """What every turn of a record's game repeats, with ``log``: the label of its events in the
    log :func:`turns_from_log` reads."""
    return {
        "experiment": record.get("experiment"),
        "game": record["game"],
        "table": _table(record, index),
        "player": _player(record),
        "setting": record["setting"],
        "round": record["round"],
        "sample": record["sample"],
        "started_at": record.get("started_at"),
        "evaluated": int(record.get("evaluated_seat") or 0),
        "log": log,
    }


def turns_from_log(keys: pd.DataFrame, log: pd.DataFrame) -> pd.DataFrame:
    """The turns frame from columns, with no Python object per turn: ``keys`` has one row per
    game (:func:`turn_keys`), ``log`` one row per event, each game's events together and in order:
    ``log`` (the label a game's keys name), ``event`` (the event as JSON), ``created_at`` (ISO-8601
    or missing) and ``usage`` (the model call's usage, a dict, or missing). A game's keys may name
    one log several times (Undercover: a row per evaluated seat); each distinct event is decoded
    once.

    Each event is one row, however many of ``keys``' rows name its log: a game seen from several
    evaluated seats (Undercover) is written once, and each move carries the keys (player,
    setting, round, sample) of the seat that made it when that seat was evaluated, else (the
    answering seat, events of the game itself) those of the game's first evaluated seat."""
    found, first, count = np.unique(log["log"].to_numpy(), return_index=True, return_counts=True)
    span = dict(zip(found.tolist(), zip(first.tolist(), count.tolist(), strict=True), strict=True))
    every = keys[keys["log"].isin(list(span))]
    keys = every.drop_duplicates("log")
    start, n = np.array([span[label] for label in keys["log"]], dtype="int64").reshape(-1, 2).T
    game = np.repeat(np.arange(len(keys)), n)  # the keys row of each turn
    seq = np.arange(len(game)) - np.repeat(np.cumsum(n) - n, n)
    rows = start[game] + seq  # the log row of each turn
    # Each column as (values, which value each turn takes): values are typed once, then repeated.
    frame = {name: (keys[name].to_numpy(), game) for name in TURN_KEYS[:-1]}
    frame["seq"] = (seq, None)
    codes, texts = pd.factorize(log["event"].to_numpy()[rows])
    events = [json.loads(text) for text in texts]
    for name in ("seat", "type", "answer", "target"):
        frame[name] = (_objects([event.get(name) for event in events]), codes)
    said = [turn_text(event) for event in events]
    frame["text"] = (_objects(said), codes)
    lengths = [len(t) if isinstance(t, str) else 0 for t in said]
    frame["chars"] = (np.array(lengths, dtype="int64"), codes)
    for name in ("seat_slot", "actor_kind", "stood_in_for"):
        values = log[name].to_numpy()[rows] if name in log else np.full(len(rows), None)
        frame[name] = (values, None)
    frame["created_at"] = (log["created_at"].to_numpy()[rows], None)
    times = _instants(log["created_at"].to_numpy())
    began = np.where(seq == 0, _instants(keys["started_at"].to_numpy())[game], times[rows - 1])
    frame["duration_s"] = ((times[rows] - began) / np.timedelta64(1, "s"), None)
    usages = log["usage"].to_numpy()[rows]
    used = [i for i in np.flatnonzero(pd.notna(usages)) if usages[i]]  # few rows: the agents'
    for name, key in TURN_USAGE.items():
        values = np.full(len(rows), None, dtype=object)
        values[used] = [usages[i].get(key) for i in used]
        frame[name] = (values, None)
    frame["event"] = (_objects(list(texts)), codes)
    turns = pd.DataFrame(
        {name: _typed_take(*frame[name], dtype) for name, (dtype, _) in TURN_COLUMNS.items()}
    )
    if len(every) > len(keys) and "evaluated" in every:
        _movers_keys(turns, every, keys["log"].to_numpy()[game])
    if "actor" in log:  # the move's maker, where the log records one, names the move
        actors = pd.Series(log["actor"].to_numpy()[rows], dtype=object)
        known = (actors.notna() & actors.astype(bool)).to_numpy()
        if known.any():
            column = turns["player"].copy()
            column[known] = pd.array(actors[known].to_numpy(), dtype=column.dtype)
            turns["player"] = column
    return turns


MOVER_KEYS = ("player", "setting", "round", "sample")


def _movers_keys(turns: pd.DataFrame, keys: pd.DataFrame, labels: np.ndarray) -> None:
    """Give each move of ``turns`` (whose logs are ``labels``) the keys of the evaluated seat
    that made it, where ``keys`` has a row for that seat."""
    seats = keys.drop_duplicates(["log", "evaluated"]).set_index(["log", "evaluated"])
    movers = pd.MultiIndex.from_arrays([labels, turns["seat"].fillna(-1).astype("int64")])
    found = seats.index.get_indexer(movers)
    hit = found >= 0
    if not hit.any():
        return
    for name in MOVER_KEYS:
        values = seats[name].to_numpy()[found[hit]]
        column = turns[name].copy()
        column[hit] = pd.array(values, dtype=column.dtype)
        turns[name] = column


def seat_slot(slots: list[int], seat: Any) -> int | None:
    """The design slot of ``seat`` at a table whose seats hold ``slots`` (empty: not a study's)."""
    if isinstance(seat, int) and 0 <= seat < len(slots):
        return int(slots[seat])
    return None


def turn_text(event: dict[str, Any]) -> Any:
    """What a move said: its text, and for an explicit Twenty Questions guess (a ``question``
    with a ``guess`` and no text) the question that stands for it, as transcripts show it."""
    if event.get("type") == "question" and event.get("guess") is not None:
        return question_text(event)
    return event.get("text")


def _typed_take(values: np.ndarray, taken: np.ndarray | None, dtype: str) -> pd.Series:
    """``values`` as ``dtype`` (:func:`typed`'s conversion), then in the order ``taken`` picks them
    (all of them when None). No text inferred as pandas' str dtype on the way."""
    converted = pd.Series(values, dtype=values.dtype).astype(dtype).array
    return pd.Series(converted if taken is None else converted.take(taken))


def _objects(values: list[Any]) -> np.ndarray:
    """``values`` as a one-dimensional object array (lists stay cells, not a second dimension)."""
    array = np.empty(len(values), dtype=object)
    array[:] = values
    return array


TURN_USAGE = {
    "calls": "calls",
    "input_tokens": "input_tokens",
    "output_tokens": "output_tokens",
    "latency_s": "latency_s",
    "usage_error": "error",
}


def _instants(times: np.ndarray) -> np.ndarray:
    """ISO-8601 texts as UTC instants (``datetime64[ns]``), NaT where missing or empty."""
    known = pd.Series(times, dtype=object).where(lambda t: t.astype(bool), None)
    return pd.to_datetime(known, format="ISO8601", utc=True).to_numpy("datetime64[ns]")


def typed(frame: pd.DataFrame, columns: dict[str, tuple[str, str]]) -> pd.DataFrame:
    """Give every known column its declared dtype, so frames from any source compare equal."""
    return frame.astype({name: columns[name][0] for name in frame.columns if name in columns})


def _game_row(record: Record, index: int) -> dict[str, Any]:
    seat = int(record.get("evaluated_seat") or 0)
    usage = record.get("usage") or {}
    taken = bool(record.get("taken_over", False))
    counts = {key: usage.get(key) for key in USAGE_KEYS}
    return {
        "experiment": record.get("experiment"),
        "game": record["game"],
        "table": _table(record, index),
        "seat": seat,
        "seat_slot": seat_slot(record.get("seat_slots") or [], seat),
        "role": _role(record, seat),
        "player_kind": record.get("player_kind") or _kind(_player(record)),
        "player": _player(record),
        "setting": record["setting"],
        "round": record["round"],
        "sample": record["sample"],
        "case": record.get("case"),
        "seed": record.get("seed"),
        "word": word_of(record.get("config") or {}),
        "condition": record.get("condition"),
        "oracle": oracle_of(record),
        "rules_version": str((record.get("config") or {}).get("rules_version") or DEFAULT_RULES),
        "language": record.get("language") or (record.get("config") or {}).get("language") or "en",
        "players": record.get("players") or _players(record),
        "opponents": record.get("opponents") or None,
        "evaluated_role": record.get("evaluated_role") or None,
        "pilot": bool(record.get("pilot", False)),
        "participant_status": record.get("participant_status"),
        "oracle_failed": oracle_failed(record),
        "taken_over": taken,
        "taken_over_by": record.get("taken_over_by") if taken else None,
        "stand_in_moves": record.get("stand_in_moves", 0),
        "ended": record.get("ended") or "finished",
        "reward": None if taken or record["reward"] is None else float(record["reward"]),
        "win": None if taken else record.get("win"),
        "questions": record.get("questions", _questions(record, seat)),
        "turns": record.get("turn_count", len(record.get("events") or [])),
        **counts,
        "tokens": _total(counts["input_tokens"], counts["output_tokens"]),
        "chars": _total(counts["input_chars"], counts["output_chars"]),
        "latency_s": usage.get("latency_s"),
        "started_at": record.get("started_at"),
        "finished_at": record.get("finished_at"),
    }


def word_of(config: dict[str, Any]) -> str | None:
    """What a game was about: the Twenty Questions answer, or the Undercover pair."""
    if "answer" in config:
        return str(config["answer"])
    if "normal_word" in config:
        return f"{config['normal_word']} / {config.get('difference_word')}"
    return None


def oracle_of(record: Record) -> str | None:
    """The answering seat's spec. Web tables state it; an experiment line does not, and the
    experiment runner's rule applies: the model itself, or ``offline:kb`` for an offline model."""
    if record["game"] != "twenty-questions":
        return None
    if record.get("oracle"):
        return str(record["oracle"])
    model = record.get("model")
    if not model:
        return None
    return "offline:kb" if str(model).startswith("offline:") else str(model)


def _table(record: Record, index: int) -> str:
    return str(record.get("table") or f"{record.get('experiment', '')}#{index}")


def _player(record: Record) -> str:
    return str(record.get("player") or record["model"])


def _kind(player: str) -> str:
    return "offline" if player.startswith("offline:") else "model"


def _role(record: Record, seat: int) -> str | None:
    """The evaluated seat's role: stated by the record or its outcome, else read from the config."""
    if record.get("role"):
        return record["role"]
    outcome = (record.get("outcome") or {}).get(str(seat)) or {}
    if outcome.get("role"):
        return outcome["role"]
    roles = (record.get("config") or {}).get("roles")
    if isinstance(roles, list) and seat < len(roles):
        return roles[seat]
    if record["game"] == "twenty-questions" and seat < len(TWENTY_QUESTIONS_ROLES):
        return TWENTY_QUESTIONS_ROLES[seat]
    return None


def _players(record: Record) -> int | None:
    """Seats at the game's table: Undercover's config says, Twenty Questions has two."""
    if record["game"] == "twenty-questions":
        return 2
    return (record.get("config") or {}).get("players")


def _questions(record: Record, seat: int) -> int:
    return sum(
        1
        for event in record.get("events") or []
        if event.get("type") == "question" and event.get("seat") == seat
    )


def _total(a: int | None, b: int | None) -> int | None:
    return None if a is None and b is None else (a or 0) + (b or 0)
