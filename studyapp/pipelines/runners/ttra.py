"""TTRA as a job: tasks from a JSONL file or from finished Twenty Questions games, progress on the
job row, and results plus the aligned model as the job's artifacts."""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from studyapp.pipelines.models import Job
from studyapp.pipelines.sources import jsonl_records, resolve_path, table_records
from studyapp.pipelines.ttra.config import TTRAOptions, resolve
from studyapp.pipelines.ttra.tasks import load_tasks, tasks_from_games


def run(job: Job) -> dict[str, Any]:
    # torch and transformers (the ttra extra) load only when a TTRA job runs
    from studyapp.pipelines.ttra.evaluate import run_experiment, summary

    parameters = job.parameters
    names = {f.name for f in fields(TTRAOptions)} - {"preset"}
    # No progress bars in a worker's log: progress goes to the job row instead.
    given = {k: v for k, v in parameters.items() if k in names}
    # A "preset" parameter is the command line's --preset: its values, then the given ones.
    options = resolve({"progress_bars": False} | given, parameters.get("preset"))
    if parameters.get("tasks"):
        tasks = load_tasks(resolve_path(parameters["tasks"]))
    else:
        records = []
        if parameters.get("tables"):
            ids = [int(i) for i in parameters["tables"]]
            records += table_records("twenty-questions", table_ids=ids)
        if parameters.get("results"):
            records += [
                r
                for r in jsonl_records(parameters["results"])
                if r.get("game") == "twenty-questions"
            ]
        if not records:
            raise ValueError(
                "give 'tasks' (a JSONL file), or finished games: 'tables' or 'results'"
            )
        tasks = tasks_from_games(records)
    per_run = options.one_shot_steps + options.ttrl_steps
    planned = {"ttra": per_run, "split-half": per_run, "ablation": 2 * per_run, "sft": per_run}[
        options.experiment
    ]
    done: dict[str, Any] = {"offset": 0, "last": 0, "stage": None}

    def progress(report: dict) -> None:
        if report["stage"] != done["stage"]:  # the next stage started from step 1
            done["offset"] += done["last"]
            done["stage"] = report["stage"]
        done["last"] = report["step"]
        message = (
            f"{report['stage']} step {report['step']}/{report['max_steps']}: "
            f"reward {report['reward_mean']}, majority agreement {report['majority_agreement']}"
        )
        if "collapse" in report:
            job.write_log(f"collapse: {report['collapse']}")
        job.set_progress((done["offset"] + done["last"]) / max(planned, 1), message)

    job.write_log(f"TTRA {options.experiment} on {len(tasks)} tasks with {options.model}")
    results = run_experiment(options, tasks, job.artifact_dir, progress)
    job.artifacts = sorted(
        str(p.relative_to(job.artifact_dir)) for p in job.artifact_dir.rglob("*") if p.is_file()
    )
    job.save(update_fields=["artifacts"])
    return summary(results)
