"""Runs the paper's experiment protocol (``games.experiment``) as a job and stores every game in
the tables app's Table/Seat/Turn rows, next to the human games, marked with the job that made it.

The results file lives in the job's artifact folder, so a resumed job skips finished games.
"""

from __future__ import annotations

import asyncio
from typing import Any

from asgiref.sync import async_to_sync, sync_to_async
from django.db import transaction
from django.utils.dateparse import parse_datetime

from games import get_engine
from games.experiment.runner import ExperimentSpec, load_records, run_experiment
from games.experiment.summary import is_scored, voided_note
from games.llm.providers import closing
from studyapp.pipelines.models import Job
from studyapp.pipelines.record_keys import record_key
from studyapp.providers import provider_config, response_cache
from studyapp.tables.models import Seat, Table, Turn

SPEC_FIELDS = set(ExperimentSpec.__dataclass_fields__)
TABLE_MARKS = ("condition", "language", "seat_slots", "model_seats", "evaluated_role")


def store_games(job: Job, records: list[dict[str, Any]], spec: ExperimentSpec) -> int:
    """Write records not yet stored for this job as finished tables; return how many."""
    stored = set(
        Table.objects.filter(options__job=job.pk).values_list("options__record", flat=True)
    )
    added = 0
    for record in records:
        key = record_key(record)
        if key in stored:
            continue
        engine = get_engine(record["game"])
        evaluated = record["evaluated_seat"]
        with transaction.atomic():
            table = Table.objects.create(
                game=record["game"],
                config=record["config"],
                seed=record["seed"],
                status=Table.Status.FINISHED,
                options={
                    "job": job.pk,
                    "record": key,
                    "experiment": record.get("experiment"),
                    "usage": record.get("usage"),  # the whole game's model calls
                    "model_options": record.get("model_options"),
                    # what the dashboard compares with the people's games (seating.plan_marks)
                    **{k: record[k] for k in TABLE_MARKS if record.get(k) is not None},
                    # a study's twin (a seat plan's game): only its scored seat is the arm's
                    **({"evaluated_seat": evaluated} if "condition" in record else {}),
                },
                started_at=parse_datetime(record.get("started_at") or ""),
                finished_at=parse_datetime(record.get("finished_at") or ""),
            )
            labels = engine.seats(record["config"])
            specs = record.get("seat_specs") or [
                spec.oracle_spec if label == "oracle" else record["model"] for label in labels
            ]
            Seat.objects.bulk_create(
                Seat(
                    table=table,
                    index=index,
                    kind=Seat.Kind.AGENT,
                    agent_spec=specs[index],
                    setting=record["setting"] if index == evaluated else "none",
                )
                for index in range(len(labels))
            )
            Turn.objects.bulk_create(
                Turn(table=table, seq=seq, seat=event.get("seat"), event=event)
                for seq, event in enumerate(record["events"])
            )
        added += 1
    return added


async def run_with_progress(job: Job, spec: ExperimentSpec) -> list[dict[str, Any]]:
    """Run the experiment while a watcher reports finished games (and notices a cancel)."""
    out = job.artifact_dir / "results.jsonl"
    total = spec.samples * spec.games_per_sample
    report = sync_to_async(job.set_progress)

    async def watch() -> None:
        while True:
            await asyncio.sleep(1.0)
            done = len(load_records(out))
            await report(done / total, f"{done}/{total} games")

    watcher = asyncio.create_task(watch())
    try:
        runner = asyncio.create_task(
            run_experiment(
                [spec],
                out,
                config_for=provider_config,
                cache=response_cache() if job.parameters.get("cache", True) else None,
                progress=False,
            )
        )
        done, _ = await asyncio.wait({runner, watcher}, return_when=asyncio.FIRST_COMPLETED)
        if watcher in done:  # only ends by raising (a cancel): stop the games too
            runner.cancel()
            await asyncio.gather(runner, return_exceptions=True)
            watcher.result()
        return runner.result()
    finally:
        watcher.cancel()


def run(job: Job) -> dict[str, Any]:
    parameters = {k: v for k, v in job.parameters.items() if k in SPEC_FIELDS}
    spec = ExperimentSpec(**{"experiment": f"job-{job.pk}", **parameters})
    job.artifact_dir.mkdir(parents=True, exist_ok=True)
    if "results.jsonl" not in job.artifacts:
        job.artifacts = [*job.artifacts, "results.jsonl"]
        job.save(update_fields=["artifacts"])
    job.write_log(f"{spec.game} with {spec.model}, setting {spec.setting}")
    try:
        records = async_to_sync(closing)(run_with_progress(job, spec))
    finally:
        # Whatever happened, the games that finished are stored.
        partial = load_records(job.artifact_dir / "results.jsonl")
        job.write_log(f"stored {store_games(job, partial, spec)} new games as tables")
    job.set_progress(1.0, f"{len(records)} games played")
    # Games voided by a failed oracle or failed model calls are not the model's result.
    rewards = [r["reward"] for r in records if is_scored(r)]
    if voided := voided_note(records):
        job.write_log(voided)
    return {
        "games": len(records),
        "scored": len(rewards),
        "mean_reward": sum(rewards) / len(rewards) if rewards else None,
        "tables": list(
            Table.objects.filter(options__job=job.pk).order_by("pk").values_list("pk", flat=True)
        ),
    }
