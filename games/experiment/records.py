"""The experiment's output file: one JSON line per finished game, built here from the game the
runner played, appended, and read back on resume."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from games.llm import prompts

if TYPE_CHECKING:
    from games.experiment.spec import ExperimentSpec


def record_key(record: dict[str, Any]) -> tuple[Any, ...]:
    return (record["game"], record["model"], record["setting"], record["sample"], record["round"])


def load_records(path: Path) -> list[dict[str, Any]]:
    """Finished games already in ``path``. A line cut off by an interrupted write is dropped from
    the file, so the game is played again and the file stays valid JSONL."""
    if not path.exists():
        return []
    raw = path.read_text(encoding="utf-8")
    lines = raw.split("\n")
    records: list[dict[str, Any]] = []
    kept: list[str] = []
    for line in lines:
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            continue
        kept.append(line)
    rewritten = "".join(f"{line}\n" for line in kept)
    if rewritten != raw:
        path.write_text(rewritten, encoding="utf-8")
    return records


def game_record(
    spec: ExperimentSpec,
    sample: int,
    round_: int,
    seed: int,
    played: tuple,
    policy: str | None,
    provenance: dict[str, Any],
) -> dict[str, Any]:
    """The line of round ``round_`` of a track: the game as the runner's ``play`` returned it
    (config, events, outcome, evaluated seat, usage, start and end times, failures), the policy
    text it was played with and what produced it (:mod:`games.provenance`)."""
    config, events, outcome, evaluated, usage, started, finished, failures = played
    mine = outcome[evaluated]
    return {
        "experiment": spec.experiment,
        "game": spec.game,
        "model": spec.model,
        "setting": spec.setting,
        "sample": sample,
        "round": round_,
        "case": round_,
        "seed": seed,
        "config": config,
        "events": events,
        "outcome": {str(seat): result for seat, result in outcome.items()},
        "evaluated_seat": evaluated,
        "reward": mine["reward"],
        "win": mine["win"] if spec.game == "undercover" else None,
        "questions": mine.get("questions"),
        "usage": usage.as_dict(),
        **failure_marks(spec.game, events, failures),
        "model_options": spec.model_options.as_dict(),
        "memory_word_cap": spec.memory_word_cap if spec.setting == "cumulative" else None,
        "experience_games": spec.experience_games
        if spec.setting in ("experience-policy", "full-experience")
        else None,
        "policy": policy,
        "prompts": prompts.fingerprint(),
        "started_at": started,
        "finished_at": finished,
        "provenance": provenance,
        # Math only: the file the earlier games' problems came from (None: the test problems).
        **({"experience_tasks": spec.experience_tasks} if spec.game == "math" else {}),
        # Undercover only: the rule that chose the scored seat ("difference", "normal" or "any");
        # the role the seat held is outcome[evaluated_seat]["role"].
        **({"evaluated_role": spec.scored_role} if spec.scored_role else {}),
    }


class ResumeConflict(ValueError):
    """The output already holds games of a spec played under another rule (a different scored
    role): resuming would mix them in one cell."""


def check_resumable(specs: list[ExperimentSpec], records: list[dict[str, Any]], path: Path) -> None:
    """Refuse to resume ``path`` when a finished game of one of ``specs`` scored another
    Undercover role (a record written before the field existed scored "any")."""
    wanted = {(s.game, s.model, s.setting): s.scored_role for s in specs}
    for record in records:
        key = (record["game"], record["model"], record["setting"])
        if key not in wanted or record["game"] != "undercover":
            continue
        had = record.get("evaluated_role") or "any"
        if had != wanted[key]:
            raise ResumeConflict(
                f"{path} holds {record['setting']} games of {record['model']} scored as role "
                f"{had!r}, not {wanted[key]!r}: pass --evaluated-role {had} to resume them, or "
                "write to a new --out"
            )


def append_record(path: Path, record: dict[str, Any]) -> None:
    """Add one finished game to the output file."""
    with path.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(record, ensure_ascii=False) + "\n")


# A record's ``ended`` when failed model calls ended its game (the runner's ``abort``): the game
# is voided, as the analysis voids every game that did not end as "finished".
MODEL_FAILED = "model_failed"


def failure_marks(game: str, events: list[dict[str, Any]], failures: list) -> dict[str, Any]:
    """What a record says about failed model calls, so the analysis can leave out games that
    measure an outage rather than the evaluated model: ``voids`` (Twenty Questions questions the
    oracle could not answer, not counted), ``oracle_failed`` (the oracle failed so often that the
    game was ended; its reward is not the questioner's doing) and ``failures`` (every move an agent
    did not make itself, with the reason).

    Any other game ended by failed model calls (a Who is Undercover seat, or a Twenty Questions
    questioner, failing ``max_failures`` times in a row) is voided the same way: ``ended`` is
    ``"model_failed"`` and ``failed_seat`` names the seat, so no reader scores its 0 reward as
    the evaluated model's loss (:func:`games.experiment.summary.is_scored`, the analysis's
    ``scored``). A game that ended normally has neither key."""
    aborts = [e for e in events if e["type"] == "abort" and e.get("failed_seat") is not None]
    oracle_failed = game == "twenty-questions" and any(e["failed_seat"] == 1 for e in aborts)
    marks: dict[str, Any] = {
        "voids": sum(event["type"] == "void" for event in events),
        "oracle_failed": oracle_failed,
        "failures": failures,
    }
    if aborts and not oracle_failed:
        marks["ended"], marks["failed_seat"] = MODEL_FAILED, aborts[-1]["failed_seat"]
    return marks


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")
