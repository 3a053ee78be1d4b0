"""The two TTRA stages, each one run of TRL's `GRPOTrainer` (§2.2 of the paper).

Stage 1 trains on one labeled task with the correctness reward so the model learns the task's
format; stage 2 trains on the unlabeled questions with the majority-vote reward so it adapts to the
benchmark's distribution. Stage 2's dataset carries no labels at all, so nothing can leak.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib.util
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import torch
from accelerate import PartialState
from accelerate.utils import gather_object
from datasets import Dataset
from transformers import (
    AutoModelForCausalLM,
    AutoTokenizer,
    PreTrainedModel,
    PreTrainedTokenizerBase,
    PrinterCallback,
    TrainerCallback,
)
from trl import GRPOConfig, GRPOTrainer

from studyapp.pipelines.ttra.collapse import Collapse, CollapseMonitor
from studyapp.pipelines.ttra.config import TTRAOptions
from studyapp.pipelines.ttra.one_shot import select
from studyapp.pipelines.ttra.prompt_files import load_prompts
from studyapp.pipelines.ttra.rewards import correctness_reward, majority_vote_reward
from studyapp.pipelines.ttra.tasks import Task, rotations
from studyapp.pipelines.ttra.timing import timed

log = logging.getLogger(__name__)

Progress = Callable[[dict], None]
STAGES = {"one-shot": ("one-shot",), "ttrl": ("ttrl",), "both": ("one-shot", "ttrl")}


@dataclass
class StageResult:
    """What one stage did: steps run, the last logged figures, and any collapse it saw."""

    stage: str
    steps: int
    reward_mean: float | None = None
    loss: float | None = None  # the SFT stage's last logged training loss
    majority_agreement: float | None = None
    collapse: Collapse | None = None
    stopped_for_collapse: bool = False
    log_history: list[dict] = field(default_factory=list)
    time: dict = field(default_factory=dict)  # `timing.StageTime.as_dict()` of the training run


def pick_one_shot(tasks: list[Task], options: TTRAOptions) -> tuple[list[Task], list[Task]]:
    """The labeled tasks for stage 1 and the rest (the questions of stage 2 and evaluation), as
    ``--one-shot-from`` and the ids or the seed choose them (`one_shot.select`)."""
    selection = select(tasks, options)
    return selection.chosen, selection.pool


@functools.lru_cache(maxsize=8)
def templates(directory: str | None, prompt_set: str | None = None) -> dict[str, str]:
    """The prompt texts in force for a run (`prompt_files.load_prompts`), read once."""
    return load_prompts(directory, prompt_set)


def fit_prompt(text: str, tokenizer: PreTrainedTokenizerBase, room: int) -> str:
    """The user message cut to ``room`` tokens, keeping its end (the instructions and the question
    come last in every prompt), as TRL's and verl's left truncation of prompts do."""
    ids = tokenizer(text, add_special_tokens=False)["input_ids"]
    if len(ids) <= room:
        return text
    return tokenizer.decode(ids[len(ids) - max(room, 0) :])


def chat_prompt(task: Task, options: TTRAOptions, tokenizer: PreTrainedTokenizerBase) -> object:
    """The prompt column: chat messages when the tokenizer has a template, else plain text.

    With ``max_prompt_length`` (appendix C: 4000 input tokens) the whole prompt, template and
    system message included, is held to that many tokens by cutting the start of the task's
    question alone: the prompt file's frame around it (appendix C's opening instruction, the
    closing request for a boxed answer, a choice task's options) is never cut. Training and
    evaluation see the same prompt. A clinical case file made by ``ttra.mimic`` already fits, cut
    section by section.
    """
    texts = templates(options.prompts, options.prompt_set)
    text = task.prompt(texts)
    chat = options.use_chat_template and tokenizer.chat_template is not None
    messages = (
        [{"role": "system", "content": options.system_prompt}] if options.system_prompt else []
    )
    if options.max_prompt_length is not None:
        if chat:
            frame = tokenizer.apply_chat_template(
                [*messages, {"role": "user", "content": ""}], add_generation_prompt=True
            )
            overhead = len(frame if isinstance(frame, list) else frame["input_ids"])
        else:
            overhead = 0

        def tokens(value: str) -> int:
            return len(tokenizer(value, add_special_tokens=False)["input_ids"])

        limit = options.max_prompt_length - overhead
        if tokens(text) > limit:
            around = tokens(dataclasses.replace(task, question="").prompt(texts))
            room = limit - around
            question = fit_prompt(task.question, tokenizer, room)
            text = dataclasses.replace(task, question=question).prompt(texts)
            while tokens(text) > limit and room > 0:  # a token merged across the seam
                room -= 1
                question = fit_prompt(task.question, tokenizer, room)
                text = dataclasses.replace(task, question=question).prompt(texts)
    if chat:
        return [*messages, {"role": "user", "content": text}]
    return text


def stage_dataset(
    tasks: list[Task], stage: str, options: TTRAOptions, tokenizer: PreTrainedTokenizerBase
) -> Dataset:
    """Rows for GRPO; stage 1 keeps the label (and rotated copies of a choice task), stage 2 not."""
    rows = []
    for task in tasks:
        for variant in rotations(task) if stage == "one-shot" else [task]:
            row = {
                "prompt": chat_prompt(variant, options, tokenizer),
                "task_id": variant.id,
                "kind": variant.kind,  # how to read and compare answers; not a label
            }
            if stage == "one-shot":
                row["answer"] = variant.answer
            rows.append(row)
    return Dataset.from_list(rows)


def vllm_available() -> bool:
    """Whether vLLM can run here: the package imports and a GPU is present."""
    return importlib.util.find_spec("vllm") is not None and torch.cuda.is_available()


def vllm_wanted(options: TTRAOptions) -> bool:
    """vLLM generation: on when asked, and on "auto" when vllm imports and a GPU is present."""
    if options.use_vllm == "on":
        return True
    return options.use_vllm == "auto" and vllm_available()


def eval_engine(options: TTRAOptions) -> str:
    """The evaluation's engine, "hf" or "vllm", by the rollouts' rule, so that the cost table
    compares like with like: ``auto`` is vLLM where it is installed, a GPU is present and one
    process runs (under accelerate's several processes each evaluates its share with HF)."""
    if options.eval_engine != "auto":
        return options.eval_engine
    return "vllm" if vllm_available() and PartialState().num_processes == 1 else "hf"


def checkpointing_args(enabled: bool, config_class: type) -> dict[str, bool]:
    """The activation-checkpointing switch under the name this transformers knows: 5.x renamed
    ``gradient_checkpointing`` to ``activation_checkpointing`` and warns on the old name."""
    names = {f.name for f in dataclasses.fields(config_class)}
    if "activation_checkpointing" in names:
        return {"activation_checkpointing": enabled}
    return {"gradient_checkpointing": enabled}


def warmup_steps(ratio: float, max_steps: int) -> int:
    """Warm-up as a whole number of steps, as verl computes it (``int(ratio * total_steps)``).

    transformers reads a float ``warmup_steps`` below 1 as a ratio only from version 5 on, and
    deprecates ``warmup_ratio`` there; an integer means the same on every supported version.

    >>> warmup_steps(0.1, 300), warmup_steps(0.1, 5)
    (30, 0)
    """
    return int(ratio * max_steps)


def micro_batch(completions: int, world: int, accumulation: int) -> int:
    """Completions per device per micro-batch, so that one optimizer step sees ``completions``.

    TRL generates one batch of ``per_device × processes × accumulation`` completions and spends
    it over ``accumulation`` micro-batches of one optimizer step; so the per-device batch is the
    step's completions divided by both, and the questions per step stay the paper's.

    >>> micro_batch(128, 1, 1), micro_batch(128, 1, 4), micro_batch(128, 2, 4)
    (128, 32, 16)
    >>> micro_batch(32, 1, 3)
    Traceback (most recent call last):
    ...
    ValueError: 32 completions per step do not split into 3 micro-batches over 1 process(es)
    """
    if completions % (world * accumulation):
        raise ValueError(
            f"{completions} completions per step do not split into {accumulation} micro-batches "
            f"over {world} process(es)"
        )
    return completions // (world * accumulation)


def report_to(options: TTRAOptions) -> list[str]:
    """TRL's ``report_to``: [] for none, else the one tracker named (checked to be installed)."""
    if options.report_to == "none":
        return []
    module = {"tensorboard": "tensorboard", "trackio": "trackio"}[options.report_to]
    if importlib.util.find_spec(module) is None and not (
        module == "tensorboard" and importlib.util.find_spec("tensorboardX") is not None
    ):
        raise ValueError(f"--report-to {options.report_to} needs the {module} package installed")
    return [options.report_to]


def stage_length(options: TTRAOptions, stage: str) -> int:
    """A stage's longest rollout: stage 2 has its own when ``ttrl_max_completion_length`` is set."""
    if stage != "one-shot" and options.ttrl_max_completion_length:
        return options.ttrl_max_completion_length
    return options.max_completion_length


def grpo_config(options: TTRAOptions, stage: str, out_dir: Path) -> GRPOConfig:
    """Translate TTRA options into TRL's config for one stage."""
    one_shot = stage == "one-shot"
    prompts = options.one_shot_prompts_per_step if one_shot else options.ttrl_prompts_per_step
    world = PartialState().num_processes
    completions = prompts * options.num_generations
    accumulation = options.gradient_accumulation_steps
    per_device = micro_batch(completions, world, accumulation)
    use_vllm = vllm_wanted(options)
    on_gpu = torch.cuda.is_available()
    max_steps = options.one_shot_steps if one_shot else options.ttrl_steps
    return GRPOConfig(
        output_dir=str(out_dir),
        learning_rate=options.one_shot_learning_rate if one_shot else options.ttrl_learning_rate,
        max_steps=max_steps,
        per_device_train_batch_size=per_device,
        gradient_accumulation_steps=accumulation,
        # One generation batch per optimizer step: the step's questions times their rollouts.
        generation_batch_size=completions,
        num_generations=options.num_generations,
        max_completion_length=stage_length(options, stage),
        temperature=options.temperature,
        top_p=options.rollout_top_p,
        optim=options.optimizer,
        lr_scheduler_type=options.lr_scheduler,
        warmup_steps=warmup_steps(options.warmup_ratio, max_steps),
        weight_decay=options.weight_decay,
        beta=options.beta,
        # The objective, explicit (config.py: verl's GRPO defaults, which TRL 1.16 shares).
        loss_type=options.loss_type,
        scale_rewards=options.scale_rewards,
        epsilon=options.clip_range,
        **checkpointing_args(options.gradient_checkpointing, GRPOConfig),
        bf16=on_gpu and torch.cuda.is_bf16_supported(),
        use_cpu=not on_gpu,
        use_vllm=use_vllm,
        vllm_mode="colocate",
        vllm_gpu_memory_utilization=options.vllm_gpu_memory_utilization,
        seed=options.seed,
        logging_steps=options.logging_steps,
        save_strategy="no",
        report_to=report_to(options),
        run_name=f"ttra-{stage}",
        disable_tqdm=not options.progress_bars,
    )


class ProgressCallback(TrainerCallback):
    """Reports steps, reward mean and majority agreement, and watches for collapse in stage 2."""

    def __init__(
        self,
        stage: str,
        result: StageResult,
        progress: Progress | None,
        monitor: CollapseMonitor | None,
        stop_on_collapse: bool,
    ) -> None:
        self.stage, self.result, self.progress = stage, result, progress
        self.monitor, self.stop_on_collapse = monitor, stop_on_collapse

    def on_log(self, args, state, control, logs=None, **kwargs):  # noqa: ANN001
        logs = logs or {}
        if "reward" not in logs:
            return control
        self.result.steps = state.global_step
        self.result.reward_mean = float(logs["reward"])
        if "majority_agreement" in logs:
            self.result.majority_agreement = float(logs["majority_agreement"])
        report = {
            "stage": self.stage,
            "step": state.global_step,
            "max_steps": state.max_steps,
            "reward_mean": self.result.reward_mean,
            "majority_agreement": self.result.majority_agreement,
        }
        if self.monitor is not None:
            found = self.monitor.check()
            if found is not None:
                self.result.collapse = found
                report["collapse"] = {"answer": found.answer, "share": found.share}
                if self.stop_on_collapse:
                    self.result.stopped_for_collapse = True
                    control.should_training_stop = True
        if self.progress is not None:
            self.progress(report)
        return control


def run_stage(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    tasks: list[Task],
    stage: str,
    options: TTRAOptions,
    work_dir: Path,
    progress: Progress | None = None,
    monitor: CollapseMonitor | None = None,
    callbacks: list[TrainerCallback] | None = None,
) -> tuple[PreTrainedModel, StageResult]:
    """One GRPO run: stage "one-shot" (labels, correctness) or "ttrl" (no labels, majority vote).

    In stage 2 ``monitor`` (a fresh one from the options by default) watches for collapse;
    ``callbacks`` are more trainer callbacks (the GPU benchmark times steps with one).
    """
    result = StageResult(stage=stage, steps=0)
    gather = gather_object if PartialState().num_processes > 1 else None
    if stage == "one-shot":
        reward = correctness_reward
        monitor = None
    else:
        if monitor is None:
            monitor = CollapseMonitor(options.collapse_threshold, options.collapse_min_questions)
        reward = functools.partial(
            majority_vote_reward,
            ties=options.vote_ties,
            gather=gather,
            on_majorities=monitor.update,
        )
    trainer = GRPOTrainer(
        model=model,
        reward_funcs=reward,
        args=grpo_config(options, stage, work_dir / stage),
        train_dataset=stage_dataset(tasks, stage, options, tokenizer),
        processing_class=tokenizer,
        callbacks=[
            ProgressCallback(stage, result, progress, monitor, options.on_collapse == "stop"),
            *(callbacks or []),
        ],
    )
    trainer.remove_callback(PrinterCallback)  # progress goes through ProgressCallback instead
    with timed(stage) as clock:
        trainer.train()
    result.time = clock.as_dict()
    result.steps = trainer.state.global_step
    result.log_history = trainer.state.log_history
    if monitor is not None and result.collapse is None:
        measured = monitor.measure()
        if measured.questions >= options.collapse_min_questions:
            result.collapse = measured if measured.share > options.collapse_threshold else None
    model = trainer.accelerator.unwrap_model(trainer.model)
    return model, result


def silence_library_bars() -> None:
    """Turn off transformers' and datasets' own progress bars (loading weights, mapping), for
    ``--quiet``; TRL's training bar follows ``progress_bars`` through ``disable_tqdm``."""
    import datasets
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()
    datasets.disable_progress_bars()


def load(path: str) -> tuple[PreTrainedModel, PreTrainedTokenizerBase]:
    """Model and tokenizer from a directory or the local hub cache; left padding for generation."""
    tokenizer = AutoTokenizer.from_pretrained(path)
    tokenizer.padding_side = "left"
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    model = AutoModelForCausalLM.from_pretrained(path, dtype="auto")
    return model, tokenizer


def align(
    options: TTRAOptions,
    one_shot: list[Task],
    pool: list[Task],
    work_dir: Path,
    stages: tuple[str, ...] = ("one-shot", "ttrl"),
    progress: Progress | None = None,
) -> tuple[PreTrainedModel, PreTrainedTokenizerBase, list[StageResult]]:
    """Run the chosen stages in order from the options' model; returns the aligned model."""
    model, tokenizer = load(options.model)
    results = []
    for stage in stages:
        tasks = one_shot if stage == "one-shot" else pool
        model, result = run_stage(model, tokenizer, tasks, stage, options, work_dir, progress)
        results.append(result)
        log.info("stage %s done: %s steps, reward %s", stage, result.steps, result.reward_mean)
    return model, tokenizer, results
