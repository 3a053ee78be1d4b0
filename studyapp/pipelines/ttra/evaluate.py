"""Scoring and the paper's three experiments: direct vs TTRA, split-half (§3.3), stage ablation (§6.1).

The score is avg@k: k completions sampled per question, each right or wrong, averaged over
completions and then over questions. Each experiment writes ``results.json`` and the aligned
model's files into one output directory, which a job keeps as its artifacts. The completions are
sampled by studyapp.pipelines.ttra.sampling.
"""

from __future__ import annotations

import json
import random
from dataclasses import asdict, replace
from pathlib import Path

from accelerate import PartialState
from transformers import PreTrainedModel, PreTrainedTokenizerBase

from studyapp.pipelines.ttra.answers import extract_answer, is_correct
from studyapp.pipelines.ttra.collapse import dominant_share
from studyapp.pipelines.ttra.config import TTRAOptions
from studyapp.pipelines.ttra.one_shot import select
from studyapp.pipelines.ttra.presets import preset
from studyapp.pipelines.ttra.prompt_files import prompt_hashes
from studyapp.pipelines.ttra.rewards import plurality
from studyapp.pipelines.ttra.sampling import free_cuda, sample
from studyapp.pipelines.ttra.tasks import Task
from studyapp.pipelines.ttra.timing import (
    ALIGNED,
    DIRECT,
    SFT_EVAL,
    cost_table,
    cost_table_markdown,
    relative_cost,
    timed,
)
from studyapp.pipelines.ttra.train import (
    STAGES,
    Progress,
    align,
    eval_engine,
    load,
    report_to,
    vllm_wanted,
)

CATEGORICAL = ("choice", "word")  # kinds whose labels form classes: option letters, pathologies


def per_label(per_question: list[dict], kinds: list[str]) -> dict | None:
    """Accuracy per label and its macro average over the labels, for the choice and word
    (categorical) questions; None when there are none. Appendix C reports the clinical benchmark
    this way: accuracy per pathology, then the mean over the four.

    >>> rows = [{"label": "A", "avg": 1.0, "majority_correct": True},
    ...         {"label": "A", "avg": 0.5, "majority_correct": False},
    ...         {"label": "B", "avg": 0.0, "majority_correct": False}]
    >>> found = per_label(rows, ["choice"] * 3)
    >>> found["labels"]["A"], found["macro_avg_at_k"]
    ({'questions': 2, 'avg_at_k': 0.75, 'majority_accuracy': 0.5}, 0.375)
    """
    groups: dict[str, list[dict]] = {}
    for row, kind in zip(per_question, kinds, strict=True):
        if kind in CATEGORICAL:
            groups.setdefault(row["label"], []).append(row)
    if not groups:
        return None
    labels = {
        label: {
            "questions": len(rows),
            "avg_at_k": sum(r["avg"] for r in rows) / len(rows),
            "majority_accuracy": sum(r["majority_correct"] for r in rows) / len(rows),
        }
        for label, rows in sorted(groups.items())
    }
    n = len(labels)
    return {
        "questions": sum(v["questions"] for v in labels.values()),
        "labels": labels,
        "macro_avg_at_k": sum(v["avg_at_k"] for v in labels.values()) / n,
        "macro_majority_accuracy": sum(v["majority_accuracy"] for v in labels.values()) / n,
    }


def score(tasks: list[Task], completions: list[list[str]], ties: str = "first") -> dict:
    """avg@k accuracy, majority-vote accuracy, and the collapse share of the majority answers;
    for choice and word questions also the accuracy per label and its macro average
    (``per_label``, `per_label`).

    The majority is the same vote by meaning as stage 2's reward (`rewards.vote`)."""
    per_question = []
    winners = []
    for task, samples in zip(tasks, completions, strict=True):
        answers = [extract_answer(c, task.kind) for c in samples]
        right = [is_correct(a, task.answer, task.kind) for a in answers]
        winner = plurality(answers, task.kind, ties)
        winners.append(winner)
        per_question.append(
            {
                "id": task.id,
                "label": task.answer,
                "avg": sum(right) / len(right),
                "majority": winner,
                "majority_correct": winner is not None
                and is_correct(winner, task.answer, task.kind),
                "answers": answers,
            }
        )
    collapse = dominant_share(winners)
    labels = per_label(per_question, [t.kind for t in tasks])
    n = len(per_question)
    return {
        "questions": n,
        "k": len(completions[0]) if completions else 0,
        "avg_at_k": sum(q["avg"] for q in per_question) / n if n else 0.0,
        "majority_accuracy": sum(q["majority_correct"] for q in per_question) / n if n else 0.0,
        "collapse": asdict(collapse),
        "per_label": labels,
        # Appendix C's figure for a categorical benchmark, beside avg@k; None for math.
        "macro_avg_at_k": labels["macro_avg_at_k"] if labels else None,
        "per_question": per_question,
    }


def evaluate(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    tasks: list[Task],
    options: TTRAOptions,
    stage: str = DIRECT,
    times: list[dict] | None = None,
    source: str | None = None,
) -> dict:
    """Sample and score; the figure the paper reports is ``avg_at_k`` (``macro_avg_at_k`` under
    ``per_label`` for the clinical benchmark).

    The evaluation is timed as ``stage`` (`timing.DIRECT`, `timing.ALIGNED`, `timing.SFT_EVAL`)
    and its time, appended to ``times`` when given, is also in the result (``seconds`` and
    ``time``). ``source`` is the model's folder, which a vLLM evaluation loads."""
    lengths: list[int] = []
    engine = eval_engine(options)
    with timed(stage, times) as clock:
        completions = sample(
            model, tokenizer, tasks, options, label=stage, lengths=lengths, source=source
        )
    result = score(tasks, completions, options.vote_ties)
    result["max_new_tokens"] = options.eval_max_completion_length
    result["completion_tokens"] = {
        "mean": sum(lengths) / len(lengths) if lengths else 0.0,
        "max": max(lengths, default=0),
    }
    result["engine"] = engine
    result["seconds"] = clock.wall_s
    result["time"] = clock.as_dict()
    return result


def sft_evaluation(options: TTRAOptions) -> TTRAOptions:
    """The options the SFT model is evaluated with: its own length when the preset or the
    command line sets one (``sft_eval_max_completion_length``), else the evaluation's."""
    length = options.sft_eval_max_completion_length or options.eval_max_completion_length
    return replace(options, eval_max_completion_length=length)


def _stage_summary(results: list) -> list[dict]:
    return [
        {
            "stage": r.stage,
            "steps": r.steps,
            "reward_mean": r.reward_mean,
            "loss": r.loss,
            "majority_agreement": r.majority_agreement,
            "collapse": asdict(r.collapse) if r.collapse else None,
            "stopped_for_collapse": r.stopped_for_collapse,
            "time": r.time,
        }
        for r in results
    ]


def _save(model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase, path: Path) -> str:
    if PartialState().is_main_process:
        model.save_pretrained(path)
        tokenizer.save_pretrained(path)
    PartialState().wait_for_everyone()
    return str(path)


def _source(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    options: TTRAOptions,
    path: Path,
) -> str | None:
    """A folder holding a trained model for a vLLM evaluation (written before the clock starts);
    None when the evaluation uses transformers, which samples the model in memory."""
    if eval_engine(options) != "vllm":
        return None
    saved = _save(model, tokenizer, path)
    model.to("cpu")  # the vLLM engine gets the card; the trained weights are in the folder
    free_cuda()
    return saved


def _ttra(
    options: TTRAOptions,
    one_shot: list[Task],
    pool: list[Task],
    out: Path,
    times: list[dict],
    progress: Progress | None,
) -> dict:
    """The chosen stages from the base model, then the evaluation after them."""
    stages = STAGES[options.stages]
    model, tokenizer, stage_results = align(
        options, one_shot, pool, out / "trainer", stages, progress
    )
    entry: dict = {"stages": _stage_summary(stage_results)}
    times.extend(r.time for r in stage_results)
    source = _source(model, tokenizer, options, out / "model")
    entry["aligned"] = evaluate(model, tokenizer, pool, options, ALIGNED, times, source)
    if options.save_model:
        entry["model_dir"] = source or _save(model, tokenizer, out / "model")
    return entry


def run_experiment(
    options: TTRAOptions, tasks: list[Task], out_dir: str | Path, progress: Progress | None = None
) -> dict:
    """Run ``options.experiment`` and write ``results.json`` (and model folders) into ``out_dir``.

    Every experiment's cost, by stage and as table 1's rows (direct evaluation, SFT, TTRA, those
    that ran), goes into results.json (``cost``, ``cost_table``) and ``cost_table.md``.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    work = out / "trainer"
    report_to(options)  # a tracker that is not installed fails now, not after the direct evaluation
    if options.experiment == "sft":
        from studyapp.pipelines.ttra.sft import read_sft_data

        read_sft_data(options.sft_data or "")  # a bad SFT file fails now too

    selection = select(tasks, options)
    one_shot, pool = selection.chosen, selection.pool
    if options.max_questions is not None:
        pool = pool[: options.max_questions]
    if not pool:
        raise ValueError("need at least one task besides the one-shot examples")
    base, tokenizer = load(options.model)
    results: dict = {
        "experiment": options.experiment,
        "preset": None
        if options.preset is None
        else {"name": options.preset, "section": preset(options.preset).section},
        "options": options.to_dict(),
        "prompts": prompt_hashes(options.prompts, options.prompt_set),  # sha256 of each file
        "one_shot_task": one_shot[0].id,
        "one_shot_tasks": [t.id for t in one_shot],
        "one_shot_selection": selection.record(),  # what --one-shot-from drew them from
        "questions": len(pool),
        "engines": {
            "rollouts": "vllm" if vllm_wanted(options) else "hf",
            "evaluation": eval_engine(options),
        },
    }
    times: list[dict] = []
    results["times"] = times
    if options.experiment == "ttra":
        results["direct"] = evaluate(base, tokenizer, pool, options, DIRECT, times, options.model)
        del base
        results.update(_ttra(options, one_shot, pool, out, times, progress))
    elif options.experiment == "sft":
        from studyapp.pipelines.ttra.sft import prepare_sft, run_sft

        sft_rows = prepare_sft(options, tokenizer)  # a bad file or length: refused before any run
        results["direct"] = evaluate(base, tokenizer, pool, options, DIRECT, times, options.model)
        del base
        model, tokenizer, sft_result = run_sft(options, work, sft_rows)
        times.append(sft_result.time)
        source = _source(model, tokenizer, options, out / "model-sft")
        results["sft"] = {
            "data": options.sft_data,
            "stage": _stage_summary([sft_result])[0],
            "evaluation": evaluate(
                model, tokenizer, pool, sft_evaluation(options), SFT_EVAL, times, source
            ),
        }
        if options.save_model:
            results["sft"]["model_dir"] = source or _save(model, tokenizer, out / "model-sft")
        del model
        if options.sft_with_ttra:
            results.update(_ttra(options, one_shot, pool, out, times, progress))
    elif options.experiment == "split-half":
        shuffled = pool[:]
        random.Random(options.seed).shuffle(shuffled)
        half = len(shuffled) // 2
        if half == 0:
            raise ValueError("split-half needs at least two questions besides the one-shot example")
        seen, held_out = shuffled[:half], shuffled[half:]
        results["direct"] = {
            "aligned_half": evaluate(base, tokenizer, seen, options, DIRECT, times, options.model),
            "held_out_half": evaluate(
                base, tokenizer, held_out, options, DIRECT, times, options.model
            ),
        }
        del base
        model, tokenizer, stage_results = align(
            options, one_shot, seen, work, STAGES["both"], progress
        )
        results["stages"] = _stage_summary(stage_results)
        times.extend(r.time for r in stage_results)
        source = _source(model, tokenizer, options, out / "model")
        results["aligned"] = {
            "aligned_half": evaluate(model, tokenizer, seen, options, ALIGNED, times, source),
            "held_out_half": evaluate(model, tokenizer, held_out, options, ALIGNED, times, source),
        }
        if options.save_model:
            results["model_dir"] = source or _save(model, tokenizer, out / "model")
    else:
        results["direct"] = evaluate(base, tokenizer, pool, options, DIRECT, times, options.model)
        del base
        results["variants"] = {}
        for variant in ("one-shot", "ttrl", "both"):
            model, tokenizer, stage_results = align(
                options, one_shot, pool, work / variant, STAGES[variant], progress
            )
            variant_times = [t for t in times if t["stage"] == DIRECT]
            variant_times += [r.time for r in stage_results]
            source = _source(model, tokenizer, options, out / f"model-{variant}")
            entry = {
                "stages": _stage_summary(stage_results),
                "aligned": evaluate(
                    model, tokenizer, pool, options, ALIGNED, variant_times, source
                ),
            }
            entry["cost"] = relative_cost(variant_times)
            times.extend(variant_times[1:])
            if options.save_model:
                entry["model_dir"] = source or _save(model, tokenizer, out / f"model-{variant}")
            results["variants"][variant] = entry
            del model
    if options.experiment != "ablation":
        results["cost"] = relative_cost(times)
        results["cost_table"] = cost_table(times)
    if PartialState().is_main_process:
        (out / "results.json").write_text(json.dumps(results, indent=2), encoding="utf-8")
        if "cost_table" in results:
            (out / "cost_table.md").write_text(cost_table_markdown(results), encoding="utf-8")
    return results


def summary(results: dict) -> dict:
    """The results without the options and the per-question detail (both stay in results.json)."""

    def strip(value: object) -> object:
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k not in ("per_question", "options")}
        return value

    return strip(results)  # type: ignore[return-value]
