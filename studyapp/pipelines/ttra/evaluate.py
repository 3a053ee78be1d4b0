"""Scoring and the paper's three experiments: direct vs TTRA, split-half (§3.3), stage ablation (§6.1).

The score is avg@k: k completions sampled per question, each right or wrong, averaged over
completions and then over questions. Each experiment writes ``results.json`` and the aligned
model's files into one output directory, which a job keeps as its artifacts.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

import torch
from accelerate import PartialState
from tqdm.auto import tqdm
from transformers import PreTrainedModel, PreTrainedTokenizerBase

from studyapp.pipelines.ttra.answers import extract_answer, is_correct
from studyapp.pipelines.ttra.collapse import dominant_share
from studyapp.pipelines.ttra.config import TTRAOptions
from studyapp.pipelines.ttra.prompt_files import prompt_hashes
from studyapp.pipelines.ttra.rewards import plurality
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
    chat_prompt,
    eval_engine,
    load,
    pick_one_shot,
    report_to,
    vllm_wanted,
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


CPU_EVAL_QUESTIONS = 8  # questions per generate call on a CPU, where memory is not the limit
GPU_MEMORY_SHARE = 0.8  # of the free GPU memory, for one evaluation generate call
VLLM_MEMORY_SHARE = 0.85  # of the GPU at most, for the evaluation's own vLLM engine


def sequence_bytes(config: object, prompt_tokens: int, new_tokens: int, dtype_bytes: int) -> int:
    """Memory one sampled sequence needs at its longest in a generate call: its key-value cache,
    its share of the prompt's activations in the prefill (one layer at a time) and the float32
    scores of a sampling step (the logits, their softmax and the top-p sort).

    >>> from types import SimpleNamespace as C
    >>> cfg = C(num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=1, hidden_size=8,
    ...         intermediate_size=16, vocab_size=10)
    >>> sequence_bytes(cfg, 3, 5, 2)  # (2*2*1*4*8 + 3*(4*8 + 2*16)) * 2 + 10*4*3
    760
    """
    heads = config.num_attention_heads
    kv_heads = getattr(config, "num_key_value_heads", None) or heads
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // heads
    hidden = config.hidden_size
    intermediate = getattr(config, "intermediate_size", None) or 4 * hidden
    cache = 2 * config.num_hidden_layers * kv_heads * head_dim * (prompt_tokens + new_tokens)
    prefill = prompt_tokens * (4 * hidden + 2 * intermediate)
    return (cache + prefill) * dtype_bytes + config.vocab_size * 4 * 3


def plan_batches(
    prompt_tokens: list[int],
    size: int | None = None,
    fits: Callable[[int, int], bool] | None = None,
) -> list[list[int]]:
    """Question indices per generate call, longest prompts first (so a batch pads little).

    With ``size``, batches of that many questions; else each batch takes questions while
    ``fits(questions, longest prompt)`` holds (always at least one).

    >>> plan_batches([5, 9, 7], size=2)
    [[1, 2], [0]]
    >>> plan_batches([5, 9, 7, 6], fits=lambda n, longest: n * longest <= 20)
    [[1, 2], [3, 0]]
    """
    order = sorted(range(len(prompt_tokens)), key=lambda i: (-prompt_tokens[i], i))
    if size is not None:
        return [order[i : i + size] for i in range(0, len(order), size)]
    if fits is None:
        raise ValueError("plan_batches needs a size or a fits rule")
    batches: list[list[int]] = []
    for index in order:
        if batches and fits(len(batches[-1]) + 1, prompt_tokens[batches[-1][0]]):
            batches[-1].append(index)
        else:
            batches.append([index])
    return batches


def eval_batches(
    model: PreTrainedModel, prompt_tokens: list[int], options: TTRAOptions
) -> list[list[int]]:
    """The evaluation's generate calls: ``eval_batch_questions`` questions each, or on ``auto``
    as many questions (all their samples in the one call) as the free GPU memory holds at the
    prompts' and completions' lengths; `CPU_EVAL_QUESTIONS` on a CPU."""
    if options.eval_batch_questions != "auto":
        return plan_batches(prompt_tokens, size=int(options.eval_batch_questions))
    if model.device.type != "cuda":
        return plan_batches(prompt_tokens, size=CPU_EVAL_QUESTIONS)
    free, _ = torch.cuda.mem_get_info(model.device)
    budget = free * GPU_MEMORY_SHARE
    config = model.config.get_text_config() if hasattr(model.config, "get_text_config") else None
    config = config or model.config
    dtype_bytes = torch.finfo(model.dtype).bits // 8

    def fits(questions: int, longest: int) -> bool:
        per_sequence = sequence_bytes(
            config, longest, options.eval_max_completion_length, dtype_bytes
        )
        return questions * options.eval_samples * per_sequence <= budget

    return plan_batches(prompt_tokens, fits=fits)


def _hf_sample(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    texts: list[str],
    options: TTRAOptions,
    bar: tqdm,
) -> tuple[list[list[str]], list[list[int]]]:
    """transformers' generate over the planned batches; completions and their lengths, per text."""
    plain = not (options.use_chat_template and tokenizer.chat_template is not None)
    prompt_tokens = [len(ids) for ids in tokenizer(texts, add_special_tokens=plain)["input_ids"]]
    k = options.eval_samples
    completions: list[list[str]] = [[] for _ in texts]
    lengths: list[list[int]] = [[] for _ in texts]
    for batch in eval_batches(model, prompt_tokens, options):
        # A chat template already writes any special tokens; plain prompts get the usual ones.
        enc = tokenizer(
            [texts[i] for i in batch], return_tensors="pt", padding=True, add_special_tokens=plain
        ).to(model.device)
        generated = model.generate(
            **enc,
            do_sample=True,
            temperature=options.temperature,
            top_p=options.eval_top_p,
            max_new_tokens=options.eval_max_completion_length,
            num_return_sequences=k,
            pad_token_id=tokenizer.pad_token_id,
        )
        new = generated[:, enc["input_ids"].shape[1] :]
        counts = completion_lengths(new, tokenizer)
        decoded = tokenizer.batch_decode(new, skip_special_tokens=True)
        for row, index in enumerate(batch):
            completions[index] = decoded[row * k : (row + 1) * k]
            lengths[index] = counts[row * k : (row + 1) * k]
        bar.update(len(batch))
    return completions, lengths


def _free_cuda() -> None:
    import gc

    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()


def _reset_vllm() -> None:
    """Tear down vLLM's process-wide parallel state (left by a finished engine: the trainer's
    colocated one, or the evaluation's), so the next engine starts clean, and free the cache."""
    try:
        from vllm.distributed.parallel_state import (
            destroy_distributed_environment,
            destroy_model_parallel,
        )

        destroy_model_parallel()
        destroy_distributed_environment()
    except (ImportError, AssertionError, RuntimeError):
        pass
    _free_cuda()


def _vllm_sample(
    source: str,
    tokenizer: PreTrainedTokenizerBase,
    texts: list[str],
    options: TTRAOptions,
    bar: tqdm,
) -> tuple[list[list[str]], list[list[int]]]:
    """vLLM over all the prompts at once (it schedules its own batches); the engine is made
    from the model folder ``source`` and shut down after, so training gets its memory back."""
    from vllm import LLM, SamplingParams

    _reset_vllm()  # the trainer's colocated engine and buffers, if any, go first
    plain = not (options.use_chat_template and tokenizer.chat_template is not None)
    ids = tokenizer(texts, add_special_tokens=plain)["input_ids"]
    free, total = torch.cuda.mem_get_info()
    # vLLM's share is of the whole card and must be free when it starts: what is held already
    # (a model in memory, another engine not yet gone) lowers it.
    share = max(0.05, min(VLLM_MEMORY_SHARE, free / total - 0.05))
    engine = LLM(
        model=source,
        tokenizer=source,
        dtype="auto",
        seed=options.seed,
        gpu_memory_utilization=share,
        max_model_len=max(len(i) for i in ids) + options.eval_max_completion_length,
    )
    params = SamplingParams(
        n=options.eval_samples,
        temperature=options.temperature,
        top_p=options.eval_top_p,
        max_tokens=options.eval_max_completion_length,
        seed=options.seed,
    )
    try:
        outputs = engine.generate([{"prompt_token_ids": i} for i in ids], params, use_tqdm=False)
    finally:
        del engine
        _reset_vllm()
    bar.update(len(texts))
    completions = [[c.text for c in out.outputs] for out in outputs]
    lengths = [[len(c.token_ids) for c in out.outputs] for out in outputs]
    return completions, lengths


@torch.no_grad()
def sample(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    tasks: list[Task],
    options: TTRAOptions,
    label: str = "evaluate",
    lengths: list[int] | None = None,
    source: str | None = None,
) -> list[list[str]]:
    """``options.eval_samples`` completions per task, sampled like the paper's evaluation, with
    the evaluation's own length limit (``eval_max_completion_length``). ``lengths``, when given,
    receives each completion's length in tokens (its end-of-sequence token included).

    The engine is `train.eval_engine`'s: vLLM reads the model from the folder ``source`` (the
    model's own folder when not given); transformers' generate runs the planned batches
    (`eval_batches`), each question's samples in the same call. Under accelerate's several
    processes each process samples every n-th question and the answers are gathered.
    """
    tokenizer.padding_side = "left"
    state = PartialState()
    world, rank = state.num_processes, state.process_index
    mine = list(range(rank, len(tasks), world)) if world > 1 else list(range(len(tasks)))
    texts = [prompt_text(tasks[i], options, tokenizer) for i in mine]
    bar = tqdm(total=len(texts), desc=label, unit="question", disable=not options.progress_bars)
    if eval_engine(options) == "vllm" and texts:
        completions, counts = _vllm_sample(
            source or model.name_or_path, tokenizer, texts, options, bar
        )
    else:
        model.eval()
        if torch.cuda.is_available() and model.device.type == "cpu":
            model.to(state.device)  # a freshly loaded model sits on the CPU
        completions, counts = _hf_sample(model, tokenizer, texts, options, bar)
    bar.close()
    pairs = list(zip(mine, completions, counts, strict=True))
    if world > 1:
        from accelerate.utils import gather_object

        pairs = gather_object(pairs)
    pairs.sort(key=lambda pair: pair[0])
    if lengths is not None:
        for _, _, count in pairs:
            lengths.extend(count)
    return [c for _, c, _ in pairs]


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
    _free_cuda()
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
    from studyapp.pipelines.ttra.presets import preset

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    work = out / "trainer"
    report_to(options)  # a tracker that is not installed fails now, not after the direct evaluation
    if options.experiment == "sft":
        from studyapp.pipelines.ttra.sft import read_sft_data

        read_sft_data(options.sft_data or "")  # a bad SFT file fails now too
    one_shot, pool = pick_one_shot(tasks, options)
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
            "evaluation": evaluate(model, tokenizer, pool, options, SFT_EVAL, times, source),
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
