"""Runs one LWE method or baseline as a job: loads the cases, evaluates over random orders, and
keeps per-case verdicts, meta-prompts and curves as artifacts, partial ones included."""

from __future__ import annotations

import json
from typing import Any

from asgiref.sync import async_to_sync, sync_to_async

from games.llm.providers import closing
from studyapp.pipelines.lwe.algorithm import LweOptions
from studyapp.pipelines.lwe.baselines import DC_WORD_CAP
from studyapp.pipelines.lwe.data import PairCase, twenty_questions_pairs
from studyapp.pipelines.lwe.data import load_cases as load_dataset
from studyapp.pipelines.lwe.evaluate import cut_replies_note, evaluate, run_summary
from studyapp.pipelines.lwe.judging import RunResult, use_prompts
from studyapp.pipelines.models import Job
from studyapp.pipelines.sources import jsonl_records, resolve_path, table_records
from studyapp.providers import provider_for

BUILT_IN = "twenty-questions"


def load_cases(parameters: dict[str, Any]) -> list[PairCase]:
    """``dataset`` is a pairwise JSONL path or a benchmark file in its published layout
    (VL-RewardBench parquet, Multimodal RewardBench JSON/JSONL), or ``twenty-questions``: pairs of
    the study's finished games on the same word (from the tables, plus an experiment ``results``
    file if given)."""
    dataset = parameters.get("dataset", BUILT_IN)
    if dataset == BUILT_IN:
        records = table_records(BUILT_IN, table_ids=parameters.get("tables") or None)
        if parameters.get("results"):
            records += [
                r for r in jsonl_records(parameters["results"]) if r.get("game") == BUILT_IN
            ]
        cases = twenty_questions_pairs(records, seed=int(parameters.get("seed", 0)))
    else:
        cases = load_dataset(resolve_path(dataset))
    if parameters.get("limit"):
        cases = cases[: int(parameters["limit"])]
    if not cases:
        raise ValueError(f"dataset {dataset!r} gave no cases to judge")
    return cases


def options_from(parameters: dict[str, Any]) -> LweOptions:
    return LweOptions(
        batch_size=int(parameters.get("batch_size", 4)),
        summary_threshold=int(parameters.get("summary_threshold", 10_000)),
        temperature=float(parameters.get("temperature", 0.0)),
        inconsistent_swap=str(parameters.get("inconsistent_swap", "vanilla")),
        min_keep_ratio=float(parameters.get("min_keep_ratio", 0.0)),
        refine_tokens=int(parameters.get("refine_tokens", 4096)),
        summary_tokens=int(parameters.get("summary_tokens", 4096)),
    )


def keep(job: Job, runs: list[dict[str, Any]], result: dict[str, Any]) -> dict[str, Any]:
    """Per-case verdicts and meta-prompts go to files; the job row keeps the figures."""
    lines = [
        json.dumps({"method": run["method"], "order": index, **case}, ensure_ascii=False)
        for index, run in enumerate(runs)
        for case in run["results"]
    ]
    job.write_artifact("verdicts.jsonl", "\n".join(lines) + "\n")
    for index, run in enumerate(runs):
        if run.get("meta_prompt"):
            job.write_artifact(f"meta_prompt_order{index}.txt", run["meta_prompt"])
    light = {**result, "runs": [{k: v for k, v in r.items() if k != "results"} for r in runs]}
    job.write_artifact("result.json", light)
    return light


def run(job: Job) -> dict[str, Any]:
    """One method over the job's cases; ``prompts`` (a directory) overrides prompt files by name
    for this job only, and the result records the sha256 of every prompt file in force."""
    parameters = job.parameters
    use_prompts(resolve_path(parameters["prompts"]) if parameters.get("prompts") else None)
    try:
        return _run(job, parameters)
    finally:
        use_prompts(None)


def _run(job: Job, parameters: dict[str, Any]) -> dict[str, Any]:
    cases = load_cases(parameters)
    provider = provider_for(parameters["model"], cache=bool(parameters.get("cache", True)))
    job.write_log(f"{len(cases)} cases; {job.kind} with {parameters['model']}")
    runs: list[RunResult] = []
    try:
        result = async_to_sync(closing)(
            evaluate(
                job.kind,
                cases,
                provider,
                orders=int(parameters.get("orders", 3)),
                seed=int(parameters.get("seed", 0)),
                options=options_from(parameters),
                report=sync_to_async(job.set_progress),
                runs=runs,
                word_cap=int(parameters.get("word_cap", DC_WORD_CAP)),
                dc_orders=int(parameters.get("dc_orders", 1)),
                response_order=str(parameters.get("response_order", "random")),
                response_seed=int(parameters.get("response_seed", 0)),
            )
        )
    except BaseException:
        # Keep every verdict reached so far, whatever stopped the run.
        summaries = [run_summary(r, None) for r in runs]
        partial = {"partial": True, "method": job.kind, "cases": len(cases)}
        job.save_result(keep(job, summaries, partial), cost=cost_of(runs))
        raise
    job.save_result(result, cost=cost_of(runs))
    figures = result["summary"]
    job.write_log(
        "accuracy {:.3f}, consistency {:.3f}, pair accuracy {:.3f}".format(
            figures["accuracy"]["mean"],
            figures["consistency"]["mean"],
            figures["pair_accuracy"]["mean"],
        )
    )
    if result["cut_replies"]:
        job.write_log(cut_replies_note(result["cut_replies"]))
    return keep(job, result["runs"], result)


def cost_of(runs: list[RunResult]) -> dict[str, Any]:
    """Characters in and out over every pass of the job (the vanilla reference included)."""
    return {
        "method_chars": sum(r.ledger.method_chars for r in runs),
        "probe_chars": sum(r.ledger.probe_chars for r in runs),
        "total_chars": sum(r.ledger.total_chars for r in runs),
        "calls": sum(sum(r.ledger.calls.values()) for r in runs),
        "cut": sum(sum(r.ledger.cut.values()) for r in runs),
    }
