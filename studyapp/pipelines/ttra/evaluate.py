"""Scoring and the paper's three experiments: direct vs TTRA, split-half (§3.3), stage ablation (§6.1).

The score is avg@k: k completions sampled per question, each right or wrong, averaged over
completions and then over questions. Each experiment writes ``results.json`` and the aligned
model's files into one output directory, which a job keeps as its artifacts.
"""

from __future__ import annotations

import json
import random
import time
from dataclasses import asdict
from pathlib import Path

import torch
from transformers import PreTrainedModel, PreTrainedTokenizerBase

from studyapp.pipelines.ttra.answers import extract_answer, is_correct
from studyapp.pipelines.ttra.collapse import dominant_share
from studyapp.pipelines.ttra.config import TTRAOptions
from studyapp.pipelines.ttra.rewards import plurality
from studyapp.pipelines.ttra.tasks import Task
from studyapp.pipelines.ttra.train import STAGES, Progress, align, chat_prompt, load, pick_one_shot


def prompt_text(task: Task, options: TTRAOptions, tokenizer: PreTrainedTokenizerBase) -> str:
    """The exact string the model continues, built the way training builds it."""
    prompt = chat_prompt(task, options, tokenizer)
    if isinstance(prompt, str):
        return prompt
    return tokenizer.apply_chat_template(prompt, tokenize=False, add_generation_prompt=True)


@torch.no_grad()
def sample(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    tasks: list[Task],
    options: TTRAOptions,
) -> list[list[str]]:
    """``options.eval_samples`` completions per task, sampled like the paper's evaluation."""
    model.eval()
    tokenizer.padding_side = "left"
    out: list[list[str]] = []
    step = max(1, options.eval_batch_questions)
    for start in range(0, len(tasks), step):
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
            max_new_tokens=options.max_completion_length,
            num_return_sequences=options.eval_samples,
            pad_token_id=tokenizer.pad_token_id,
        )
        new = generated[:, enc["input_ids"].shape[1] :]
        decoded = tokenizer.batch_decode(new, skip_special_tokens=True)
        k = options.eval_samples
        out.extend(decoded[i * k : (i + 1) * k] for i in range(len(batch)))
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
) -> dict:
    """Sample and score; the figure the paper reports is ``avg_at_k``."""
    started = time.perf_counter()
    result = score(tasks, sample(model, tokenizer, tasks, options), options.vote_ties)
    result["seconds"] = time.perf_counter() - started
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
    one_shot, pool = pick_one_shot(tasks, options)
    if options.max_questions is not None:
        pool = pool[: options.max_questions]
    if not pool:
        raise ValueError("need at least one task besides the one-shot example")
    base, tokenizer = load(options.model)
    results: dict = {
        "experiment": options.experiment,
        "options": options.to_dict(),
        "one_shot_task": one_shot.id,
        "questions": len(pool),
    }
    if options.experiment == "ttra":
        results["direct"] = evaluate(base, tokenizer, pool, options)
        del base
        stages = STAGES[options.stages]
        model, tokenizer, stage_results = align(options, one_shot, pool, work, stages, progress)
        results["stages"] = _stage_summary(stage_results)
        results["aligned"] = evaluate(model, tokenizer, pool, options)
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
            "aligned_half": evaluate(base, tokenizer, seen, options),
            "held_out_half": evaluate(base, tokenizer, held_out, options),
        }
        del base
        model, tokenizer, stage_results = align(
            options, one_shot, seen, work, STAGES["both"], progress
        )
        results["stages"] = _stage_summary(stage_results)
        results["aligned"] = {
            "aligned_half": evaluate(model, tokenizer, seen, options),
            "held_out_half": evaluate(model, tokenizer, held_out, options),
        }
        if options.save_model:
            results["model_dir"] = _save(model, tokenizer, out / "model")
    else:
        results["direct"] = evaluate(base, tokenizer, pool, options)
        del base
        results["variants"] = {}
        for variant in ("one-shot", "ttrl", "both"):
            model, tokenizer, stage_results = align(
                options, one_shot, pool, work / variant, STAGES[variant], progress
            )
            entry = {
                "stages": _stage_summary(stage_results),
                "aligned": evaluate(model, tokenizer, pool, options),
            }
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
