"""Scoring and the paper's three experiments: direct vs TTRA, split-half (§3.3), stage ablation (§6.1).

The score is avg@k: k completions sampled per question, each right or wrong, averaged over
completions and then over questions. Each experiment writes ``results.json`` and the aligned
model's files into one output directory, which a job keeps as its artifacts.
"""

from __future__ import annotations

import json
import random
from dataclasses import asdict
from pathlib import Path

import torch
from tqdm.auto import tqdm
from transformers import PreTrainedModel, PreTrainedTokenizerBase

from studyapp.pipelines.ttra.answers import extract_answer, is_correct
from studyapp.pipelines.ttra.collapse import dominant_share
from studyapp.pipelines.ttra.config import TTRAOptions
from studyapp.pipelines.ttra.prompt_files import prompt_hashes
from studyapp.pipelines.ttra.rewards import plurality
from studyapp.pipelines.ttra.tasks import Task
from studyapp.pipelines.ttra.timing import ALIGNED, DIRECT, relative_cost, timed
from studyapp.pipelines.ttra.train import (
    STAGES,
    Progress,
    align,
    chat_prompt,
    load,
    pick_one_shot,
    report_to,
)


def prompt_text(task: Task, options: TTRAOptions, tokenizer: PreTrainedTokenizerBase) -> str:
    """The exact string the model continues, built the way training builds it."""
    prompt = chat_prompt(task, options, tokenizer)
    if isinstance(prompt, str):
        return prompt
    return tokenizer.apply_chat_template(prompt, tokenize=False, add_generation_prompt=True)


def completion_lengths(new: torch.Tensor, tokenizer: PreTrainedTokenizerBase) -> list[int]:
    """Tokens generated per row: up to and including the first end-of-sequence token."""
    stops = {tokenizer.eos_token_id, tokenizer.pad_token_id} - {None}
    out = []
    for row in new.tolist():
        ends = [i for i, token in enumerate(row) if token in stops]
        out.append(ends[0] + 1 if ends else len(row))
    return out


@torch.no_grad()
def sample(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    tasks: list[Task],
    options: TTRAOptions,
    label: str = "evaluate",
    lengths: list[int] | None = None,
) -> list[list[str]]:
    """``options.eval_samples`` completions per task, sampled like the paper's evaluation, with
    the evaluation's own length limit (``eval_max_completion_length``). ``lengths``, when given,
    receives each completion's length in tokens (its end-of-sequence token included)."""
    model.eval()
    if torch.cuda.is_available() and model.device.type == "cpu":
        model.to("cuda")  # a freshly loaded model sits on the CPU; the trainer's is on the GPU
    tokenizer.padding_side = "left"
    out: list[list[str]] = []
    step = max(1, options.eval_batch_questions)
    starts = range(0, len(tasks), step)
    bar = tqdm(total=len(tasks), desc=label, unit="question", disable=not options.progress_bars)
    for start in starts:
        batch = tasks[start : start + step]
        texts = [prompt_text(t, options, tokenizer) for t in batch]
        # A chat template already writes any special tokens; plain prompts get the usual ones.
        plain = not (options.use_chat_template and tokenizer.chat_template is not None)
        enc = tokenizer(texts, return_tensors="pt", padding=True, add_special_tokens=plain)
        enc = enc.to(model.device)
        generated = model.generate(
            **enc,
            do_sample=True,
            temperature=options.temperature,
            top_p=options.eval_top_p,
            max_new_tokens=options.eval_max_completion_length,
            num_return_sequences=options.eval_samples,
            pad_token_id=tokenizer.pad_token_id,
        )
        new = generated[:, enc["input_ids"].shape[1] :]
        if lengths is not None:
            lengths.extend(completion_lengths(new, tokenizer))
        decoded = tokenizer.batch_decode(new, skip_special_tokens=True)
        k = options.eval_samples
        out.extend(decoded[i * k : (i + 1) * k] for i in range(len(batch)))
        bar.update(len(batch))
    bar.close()
    return out


def score(tasks: list[Task], completions: list[list[str]], ties: str = "first") -> dict:
    """avg@k accuracy, majority-vote accuracy, and the collapse share of the majority answers.

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
    n = len(per_question)
    return {
        "questions": n,
        "k": len(completions[0]) if completions else 0,
        "avg_at_k": sum(q["avg"] for q in per_question) / n if n else 0.0,
        "majority_accuracy": sum(q["majority_correct"] for q in per_question) / n if n else 0.0,
        "collapse": asdict(collapse),
        "per_question": per_question,
    }


def evaluate(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    tasks: list[Task],
    options: TTRAOptions,
    stage: str = DIRECT,
    times: list[dict] | None = None,
) -> dict:
    """Sample and score; the figure the paper reports is ``avg_at_k``.

    The evaluation is timed as ``stage`` (`timing.DIRECT` or `timing.ALIGNED`) and its time,
    appended to ``times`` when given, is also in the result (``seconds`` and ``time``)."""
    lengths: list[int] = []
    with timed(stage, times) as clock:
        completions = sample(model, tokenizer, tasks, options, label=stage, lengths=lengths)
    result = score(tasks, completions, options.vote_ties)
    result["max_new_tokens"] = options.eval_max_completion_length
    result["completion_tokens"] = {
        "mean": sum(lengths) / len(lengths) if lengths else 0.0,
        "max": max(lengths, default=0),
    }
    result["seconds"] = clock.wall_s
    result["time"] = clock.as_dict()
    return result


def _stage_summary(results: list) -> list[dict]:
    return [
        {
            "stage": r.stage,
            "steps": r.steps,
            "reward_mean": r.reward_mean,
            "majority_agreement": r.majority_agreement,
            "collapse": asdict(r.collapse) if r.collapse else None,
            "stopped_for_collapse": r.stopped_for_collapse,
            "time": r.time,
        }
        for r in results
    ]


def _save(model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase, path: Path) -> str:
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return str(path)


def run_experiment(
    options: TTRAOptions, tasks: list[Task], out_dir: str | Path, progress: Progress | None = None
) -> dict:
    """Run ``options.experiment`` and write ``results.json`` (and model folders) into ``out_dir``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    work = out / "trainer"
    report_to(options)  # a tracker that is not installed fails now, not after the direct evaluation
    one_shot, pool = pick_one_shot(tasks, options)
    if options.max_questions is not None:
        pool = pool[: options.max_questions]
    if not pool:
        raise ValueError("need at least one task besides the one-shot example")
    base, tokenizer = load(options.model)
    results: dict = {
        "experiment": options.experiment,
        "options": options.to_dict(),
        "prompts": prompt_hashes(options.prompts),  # sha256 of each prompt file in force
        "one_shot_task": one_shot.id,
        "questions": len(pool),
    }
    times: list[dict] = []
    results["times"] = times
    if options.experiment == "ttra":
        results["direct"] = evaluate(base, tokenizer, pool, options, DIRECT, times)
        del base
        stages = STAGES[options.stages]
        model, tokenizer, stage_results = align(options, one_shot, pool, work, stages, progress)
        results["stages"] = _stage_summary(stage_results)
        times.extend(r.time for r in stage_results)
        results["aligned"] = evaluate(model, tokenizer, pool, options, ALIGNED, times)
        results["cost"] = relative_cost(times)
        if options.save_model:
            results["model_dir"] = _save(model, tokenizer, out / "model")
    elif options.experiment == "split-half":
        shuffled = pool[:]
        random.Random(options.seed).shuffle(shuffled)
        half = len(shuffled) // 2
        if half == 0:
            raise ValueError("split-half needs at least two questions besides the one-shot example")
        seen, held_out = shuffled[:half], shuffled[half:]
        results["direct"] = {
            "aligned_half": evaluate(base, tokenizer, seen, options, DIRECT, times),
            "held_out_half": evaluate(base, tokenizer, held_out, options, DIRECT, times),
        }
        del base
        model, tokenizer, stage_results = align(
            options, one_shot, seen, work, STAGES["both"], progress
        )
        results["stages"] = _stage_summary(stage_results)
        times.extend(r.time for r in stage_results)
        results["aligned"] = {
            "aligned_half": evaluate(model, tokenizer, seen, options, ALIGNED, times),
            "held_out_half": evaluate(model, tokenizer, held_out, options, ALIGNED, times),
        }
        results["cost"] = relative_cost(times)
        if options.save_model:
            results["model_dir"] = _save(model, tokenizer, out / "model")
    else:
        results["direct"] = evaluate(base, tokenizer, pool, options, DIRECT, times)
        del base
        results["variants"] = {}
        for variant in ("one-shot", "ttrl", "both"):
            model, tokenizer, stage_results = align(
                options, one_shot, pool, work / variant, STAGES[variant], progress
            )
            variant_times = [t for t in times if t["stage"] == DIRECT]
            variant_times += [r.time for r in stage_results]
            entry = {
                "stages": _stage_summary(stage_results),
                "aligned": evaluate(model, tokenizer, pool, options, ALIGNED, variant_times),
            }
            entry["cost"] = relative_cost(variant_times)
            times.extend(variant_times[1:])
            if options.save_model:
                entry["model_dir"] = _save(model, tokenizer, out / f"model-{variant}")
            results["variants"][variant] = entry
            del model
    (out / "results.json").write_text(json.dumps(results, indent=2), encoding="utf-8")
    return results


def summary(results: dict) -> dict:
    """The results without the options and the per-question detail (both stay in results.json)."""

    def strip(value: object) -> object:
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k not in ("per_question", "options")}
        return value

    return strip(results)  # type: ignore[return-value]
