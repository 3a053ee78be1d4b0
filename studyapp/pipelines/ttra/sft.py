"""The SFT baseline of train-before-test: supervised fine-tuning on a training set, then the same
evaluation as TTRA (§3.2 and appendix A.2: stability across SFT data; §6.2 and appendix D.2: the
cost table's middle row).

One run of TRL's `SFTTrainer` over a JSONL file. A line is ``{question, response[, kind,
options]}`` (or the field names of MetaMathQA, Orca-Math and Alpaca-style sets), whose question is
prompted exactly as an evaluated task of that kind is (the same prompt files, system message and
chat template), or ``{prompt, completion}``, used as written, or ``{messages}``, a conversation.
The loss is on the response only (on the whole conversation for ``messages``). The stage is timed like TTRA's stages, so its wall time and GPU-seconds land
in the cost table.
"""

from __future__ import annotations

import logging
from pathlib import Path

import torch
from accelerate import PartialState
from datasets import Dataset
from transformers import PreTrainedModel, PreTrainedTokenizerBase, PrinterCallback
from trl import SFTConfig, SFTTrainer

from games.tasks import KINDS, LETTERS, TaskFileError, json_lines
from studyapp.pipelines.ttra.config import TTRAOptions
from studyapp.pipelines.ttra.tasks import Task
from studyapp.pipelines.ttra.timing import timed
from studyapp.pipelines.ttra.train import (
    StageResult,
    chat_prompt,
    checkpointing_args,
    load,
    micro_batch,
    report_to,
)

log = logging.getLogger(__name__)
SFT = "sft"


# The field names common SFT sets use (MetaMathQA: query/response; Orca-Math: question/answer;
# Alpaca-style: instruction/output), tried in this order.
QUESTION_FIELDS = ("question", "query", "instruction", "problem")
RESPONSE_FIELDS = ("response", "answer", "output", "solution")


def _first_text(record: dict, names: tuple[str, ...]) -> str | None:
    for name in names:
        value = record.get(name)
        if isinstance(value, str) and value.strip():
            return value
    return None


def read_sft_data(path: str | Path) -> list[dict]:
    """The examples of an SFT file, one JSON object a line, each one of:

    - ``{question, response[, kind, options]}`` (also ``query``, ``instruction`` or ``problem``
      for the question, ``answer``, ``output`` or ``solution`` for the response): prompted as an
      evaluated task of that kind is;
    - ``{prompt, completion}``: strings used as written;
    - ``{messages}``: a whole conversation (role and content), trained on as TRL does.

    A file holds conversations only or no conversation. A bad line raises `TaskFileError` naming
    ``file:line``."""
    examples = []
    for _, where, record in json_lines(path):
        if not isinstance(record, dict):
            raise TaskFileError(f"{where}: expected a JSON object")
        if isinstance(record.get("messages"), list):
            messages = record["messages"]
            if not messages or not all(
                isinstance(m, dict) and isinstance(m.get("role"), str) and isinstance(
                    m.get("content"), str) for m in messages
            ):  # fmt: skip
                raise TaskFileError(f"{where}: 'messages' must be a list of {{role, content}}")
            examples.append({"messages": messages})
            continue
        if isinstance(record.get("prompt"), str) and isinstance(record.get("completion"), str):
            examples.append({"prompt": record["prompt"], "completion": record["completion"]})
            continue
        question = _first_text(record, QUESTION_FIELDS)
        response = _first_text(record, RESPONSE_FIELDS)
        if question is None or response is None:
            raise TaskFileError(
                f"{where}: needs a question ({', '.join(QUESTION_FIELDS)}) and a response "
                f"({', '.join(RESPONSE_FIELDS)}), or 'prompt' and 'completion', or 'messages'"
            )
        options = record.get("options") or []
        kind = record.get("kind") or ("choice" if options else "math")
        if kind not in KINDS:
            raise TaskFileError(f"{where}: 'kind' must be one of {', '.join(KINDS)}")
        if not isinstance(options, list) or len(options) > len(LETTERS):
            raise TaskFileError(f"{where}: 'options' must be a list of at most {len(LETTERS)}")
        examples.append(
            {"question": question, "response": response, "kind": kind, "options": options}
        )
    if not examples:
        raise TaskFileError(f"{path}: no examples")
    conversations = sum("messages" in e for e in examples)
    if 0 < conversations < len(examples):
        raise TaskFileError(f"{path}: mixes 'messages' lines with other lines; use one form")
    return examples


def sft_dataset(
    examples: list[dict], options: TTRAOptions, tokenizer: PreTrainedTokenizerBase
) -> Dataset:
    """Prompt-completion rows: chat messages when the run uses the chat template, else text;
    a file of conversations stays conversations."""
    if all("messages" in e for e in examples):
        return Dataset.from_list([{"messages": e["messages"]} for e in examples])
    rows = []
    for number, example in enumerate(examples):
        if "prompt" in example:
            rows.append({"prompt": example["prompt"], "completion": example["completion"]})
            continue
        task = Task(
            f"sft-{number}",
            example["question"],
            "",
            example["kind"],
            tuple(example["options"]),
        )
        prompt = chat_prompt(task, options, tokenizer)
        if isinstance(prompt, list):
            completion: object = [{"role": "assistant", "content": example["response"]}]
        else:
            completion = example["response"]
        rows.append({"prompt": prompt, "completion": completion})
    kinds = {isinstance(r["prompt"], list) for r in rows}
    if len(kinds) > 1:  # TRL needs one form per dataset
        rows = [
            r
            if isinstance(r["prompt"], list)
            else {
                "prompt": [{"role": "user", "content": r["prompt"]}],
                "completion": [{"role": "assistant", "content": r["completion"]}],
            }
            for r in rows
        ]
    return Dataset.from_list(rows)


def _token_count(tokenizer: PreTrainedTokenizerBase, content: object, prompt: bool) -> int:
    """Tokens of a row's text as TRL counts them: chat messages through the chat template (with
    the assistant's opening when ``prompt``), plain text through the tokenizer."""
    if isinstance(content, list):
        ids = tokenizer.apply_chat_template(
            content, tokenize=True, return_dict=True, add_generation_prompt=prompt
        )["input_ids"]
    else:
        ids = tokenizer(text=content)["input_ids"]
    return len(ids)


def token_lengths(
    dataset: Dataset, tokenizer: PreTrainedTokenizerBase, limit: int | None = None
) -> list[tuple[int, int]]:
    """``(prompt, whole example)`` in tokens for each row of :func:`sft_dataset`; a conversation,
    trained on whole, has a prompt of 0. With ``limit``, the counting stops after the first row
    whose prompt is shorter than it (one that fits, which is all a check needs)."""
    lengths = []
    for row in dataset:
        if "messages" in row:
            lengths.append((0, _token_count(tokenizer, row["messages"], prompt=False)))
        else:
            whole = row["prompt"] + row["completion"]
            prompt = _token_count(tokenizer, row["prompt"], prompt=True)
            lengths.append((prompt, _token_count(tokenizer, whole, prompt=False)))
        if limit is not None and lengths[-1][0] < limit:
            break
    return lengths


def too_long(lengths: list[tuple[int, int]], limit: int) -> str:
    """Why no example is left to train on at ``limit`` tokens (``--sft-max-length``)."""
    prompts = [prompt for prompt, _ in lengths]
    wholes = [whole for _, whole in lengths]

    def span(values: list[int]) -> str:
        low, high = min(values), max(values)
        return f"{low} tokens" if low == high else f"{low} to {high} tokens"

    return (
        f"--sft-max-length {limit} leaves no SFT example to train on: TRL keeps the first {limit} "
        f"tokens of each example and drops one whose response starts after them, and every prompt "
        f"here is at least that long (prompts: {span(prompts)}; whole examples, the shortest and "
        f"the longest: {span(wholes)}). Give --sft-max-length above {max(prompts)} (the longest "
        f"example takes {max(wholes)}), or shorter prompts."
    )


def prepare_sft(options: TTRAOptions, tokenizer: PreTrainedTokenizerBase) -> Dataset:
    """The rows SFT trains on, read from ``options.sft_data`` and checked before anything runs:
    a bad file (`TaskFileError`), or an ``sft_max_length`` that leaves no example whose response
    starts inside it (a ValueError naming the limit and the examples' shortest and longest
    lengths: TRL would drop every one and fail only when training starts)."""
    if not options.sft_data:
        raise ValueError("the SFT baseline needs --sft-data FILE")
    dataset = sft_dataset(read_sft_data(options.sft_data), options, tokenizer)
    limit = options.sft_max_length
    lengths = token_lengths(dataset, tokenizer, limit)
    if all(prompt >= limit for prompt, _ in lengths):
        raise ValueError(too_long(lengths, limit))
    return dataset


def sft_config(options: TTRAOptions, out_dir: Path, examples: int) -> SFTConfig:
    """TRL's SFT config from the options (appendix A.2 or D.2 through the presets)."""
    world = PartialState().num_processes
    accumulation = options.gradient_accumulation_steps
    batch = min(options.sft_batch_size, max(examples, 1))
    # A batch that does not split over the processes and micro-batches is refused, not rounded.
    per_device = micro_batch(batch, world, accumulation)
    on_gpu = torch.cuda.is_available()
    steps_per_epoch = -(-examples // batch)
    total = max(1, int(steps_per_epoch * options.sft_epochs + 0.999999))
    return SFTConfig(
        output_dir=str(out_dir),
        learning_rate=options.sft_learning_rate,
        num_train_epochs=options.sft_epochs,
        per_device_train_batch_size=per_device,
        gradient_accumulation_steps=accumulation,
        lr_scheduler_type=options.sft_lr_scheduler,
        warmup_steps=int(options.sft_warmup_ratio * total),
        weight_decay=options.sft_weight_decay,
        adam_beta1=0.9,
        adam_beta2=options.sft_adam_beta2,
        optim=options.optimizer,
        max_length=options.sft_max_length,
        completion_only_loss=None,  # TRL: the response only for prompt-completion rows
        **checkpointing_args(options.gradient_checkpointing, SFTConfig),
        bf16=on_gpu and torch.cuda.is_bf16_supported(),
        use_cpu=not on_gpu,
        seed=options.seed,
        logging_steps=options.logging_steps,
        save_strategy="no",
        report_to=report_to(options),
        run_name="ttra-sft",
        disable_tqdm=not options.progress_bars,
    )


def run_sft(
    options: TTRAOptions, work_dir: Path, dataset: Dataset | None = None
) -> tuple[PreTrainedModel, PreTrainedTokenizerBase, StageResult]:
    """Fine-tune the options' model on ``options.sft_data`` (``dataset``: its rows from
    :func:`prepare_sft`, when the caller checked them before its own work); the stage is timed
    as ``sft``."""
    model, tokenizer = load(options.model)
    if dataset is None:
        dataset = prepare_sft(options, tokenizer)
    trainer = SFTTrainer(
        model=model,
        args=sft_config(options, work_dir / SFT, len(dataset)),
        train_dataset=dataset,
        processing_class=tokenizer,
    )
    kept = len(trainer.train_dataset)
    if kept == 0:  # TRL's own count, should it differ from prepare_sft's
        raise ValueError(too_long(token_lengths(dataset, tokenizer), options.sft_max_length))
    if kept < len(dataset):
        log.warning(
            "--sft-max-length %s drops %s of %s SFT examples: their prompts fill it",
            options.sft_max_length,
            len(dataset) - kept,
            len(dataset),
        )
    trainer.remove_callback(PrinterCallback)
    with timed(SFT) as clock:
        trainer.train()
    history = trainer.state.log_history
    losses = [entry["loss"] for entry in history if "loss" in entry]
    result = StageResult(
        stage=SFT,
        steps=trainer.state.global_step,
        loss=losses[-1] if losses else None,
        log_history=history,
        time=clock.as_dict(),
    )
    log.info("SFT done: %s steps on %s examples", result.steps, len(trainer.train_dataset))
    model = trainer.accelerator.unwrap_model(trainer.model)
    tokenizer.padding_side = "left"  # SFT pads on the right; generation needs the left
    return model, tokenizer, result
