"""Sampling an evaluation's completions (studyapp.pipelines.ttra.evaluate scores them): the
prompt each question is sampled from, the plan of generate calls that fit the GPU's free memory,
and the two engines, transformers' generate over those calls or vLLM over all the prompts at once.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from accelerate import PartialState
from tqdm.auto import tqdm
from transformers import PreTrainedModel, PreTrainedTokenizerBase

from studyapp.pipelines.ttra.config import TTRAOptions
from studyapp.pipelines.ttra.tasks import Task
from studyapp.pipelines.ttra.train import chat_prompt, eval_engine


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


def free_cuda() -> None:
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
    free_cuda()


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
