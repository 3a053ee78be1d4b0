"""Every TTRA option in one dataclass, with the paper's defaults and help text for the command line.

Defaults follow appendix B of the TTRA paper (the reasoning setup): GRPO with 32 rollouts per
question at temperature 0.6, AdamW, a cosine schedule with 10% linear warm-up; stage 1 at 5e-7 for
100 steps on one question, stage 2 at 5e-6 for 300 steps on 4 questions per step; completions up to
3072 tokens; evaluation avg@32 at temperature 0.6 and top-p 0.95. Appendix A.1 (GSM8K: 1e-6 then
5e-7, 1024 tokens) and A.3 (split-half: 1e-6 in stage 2) are one override away.
"""

from __future__ import annotations

import argparse
import typing
from dataclasses import MISSING, asdict, dataclass, field, fields


def _opt(default: object, help: str, choices: tuple[str, ...] | None = None) -> typing.Any:
    meta: dict[str, object] = {"help": help}
    if choices:
        meta["choices"] = choices
    return field(default=default, metadata=meta)


@dataclass
class TTRAOptions:
    """Options of one TTRA run: which model, how each stage trains, how evaluation samples."""

    model: str = field(
        metadata={"help": "Model to align: a local directory or a hub id already in the cache."}
    )
    experiment: str = _opt(
        "ttra",
        "ttra: direct evaluation vs after alignment; split-half: align on one half of the "
        "questions, evaluate on both (§3.3); ablation: one-shot only, TTRL only, both (§6.1).",
        ("ttra", "split-half", "ablation"),
    )
    stages: str = _opt(
        "both",
        "Stages to run in the ttra experiment: one-shot, ttrl, or both.",
        ("one-shot", "ttrl", "both"),
    )
    seed: int = _opt(0, "Seed for picking the one-shot example, the split, shuffling and sampling.")
    one_shot_id: str | None = _opt(
        None, "Id of the labeled task for stage 1; by default one is picked with the seed."
    )
    num_generations: int = _opt(32, "Rollouts per question, used for GRPO and the majority vote.")
    temperature: float = _opt(0.6, "Sampling temperature during training and evaluation.")
    max_completion_length: int = _opt(
        3072,
        "Maximum tokens per sampled completion during training (appendix B: 3072, 2500 for "
        "OlympiadBench; A.1 and C: 1024).",
    )
    max_prompt_length: int | None = _opt(
        None,
        "Maximum prompt tokens, template included, in training and evaluation (appendix C: "
        "4000); a longer question loses its first tokens. None: no limit.",
    )
    eval_max_completion_length: int = _opt(
        3072, "Maximum tokens per sampled completion in evaluation (appendix B: 3072; A.1: 1024)."
    )
    one_shot_learning_rate: float = _opt(5e-7, "Peak learning rate of stage 1 (one-shot GRPO).")
    one_shot_steps: int = _opt(100, "Optimizer steps of stage 1.")
    one_shot_prompts_per_step: int = _opt(1, "Questions per step in stage 1 (the paper uses 1).")
    ttrl_learning_rate: float = _opt(5e-6, "Peak learning rate of stage 2 (majority-vote TTRL).")
    ttrl_steps: int = _opt(300, "Optimizer steps of stage 2.")
    ttrl_prompts_per_step: int = _opt(4, "Questions per step in stage 2 (the paper uses 4).")
    optimizer: str = _opt("adamw_torch", "Optimizer name as transformers knows it (AdamW).")
    lr_scheduler: str = _opt("cosine", "Learning-rate schedule after warm-up.")
    warmup_ratio: float = _opt(
        0.1, "Share of each stage's steps spent on linear warm-up (turned into a whole step count)."
    )
    weight_decay: float = _opt(0.0, "AdamW weight decay.")
    beta: float = _opt(
        0.001,
        "KL coefficient towards the starting model, as TTRL's scripts set it (use_kl_loss with "
        "kl_loss_coef 0.001, the k3 estimator); 0 turns the KL term off and loads no reference model.",
    )
    vote_ties: str = _opt(
        "first",
        "Stage 2 majority vote on a tie: first = the answer seen first wins (TTRL's counter); "
        "none = no pseudo-label, the question's completions all score 0.",
        ("first", "none"),
    )
    gradient_accumulation_steps: int = _opt(
        1,
        "Split each optimizer step's completions into this many micro-batches (less memory); the "
        "questions per step stay --one-shot/--ttrl-prompts-per-step.",
    )
    gradient_checkpointing: bool = _opt(True, "Recompute activations to save memory.")
    use_vllm: str = _opt(
        "auto",
        "Generate rollouts with vLLM: auto = when vllm is importable and a GPU is present.",
        ("auto", "on", "off"),
    )
    system_prompt: str | None = _opt(
        "You are a helpful assistant.",
        "System message for chat models (appendix B); empty for none.",
    )
    use_chat_template: bool = _opt(
        True, "Wrap prompts in the tokenizer's chat template when it has one."
    )
    eval_samples: int = _opt(32, "k of avg@k: completions sampled per question in evaluation.")
    eval_top_p: float = _opt(0.95, "Top-p in evaluation (the paper's 'top-k of 0.95').")
    eval_batch_questions: int = _opt(4, "Questions generated together in one evaluation batch.")
    max_questions: int | None = _opt(None, "Use only the first N tasks (after the one-shot pick).")
    collapse_threshold: float = _opt(
        0.9, "Collapse when one answer is the majority answer of more than this share of questions."
    )
    collapse_min_questions: int = _opt(8, "Questions with an answer before collapse is judged.")
    on_collapse: str = _opt(
        "warn", "What to do on collapse during TTRL: warn, or stop the stage.", ("warn", "stop")
    )
    logging_steps: int = _opt(1, "Log (and report progress) every N steps.")
    save_model: bool = _opt(True, "Write the aligned model and tokenizer to the output directory.")
    prompts: str | None = _opt(
        None,
        "Directory of prompt files (math.txt, choice.txt, word.txt) overriding the built-in ones "
        "by name; unknown names are refused. Their sha256 go into results.json.",
    )
    report_to: str = _opt(
        "none",
        "Experiment tracker TRL reports training metrics to (logs under the output directory).",
        ("none", "tensorboard", "trackio"),
    )
    progress_bars: bool = _opt(True, "Show progress bars with an ETA (off with --quiet).")

    def __post_init__(self) -> None:
        for name in ("gradient_accumulation_steps", "num_generations", "eval_samples"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1")
        for name in ("max_completion_length", "eval_max_completion_length"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1")

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def _field_type(hint: object) -> type:
    """The scalar type argparse should convert to, looking through ``X | None``."""
    args = [a for a in typing.get_args(hint) if a is not type(None)]
    return args[0] if args else hint  # type: ignore[return-value]


def add_options(parser: argparse.ArgumentParser, exclude: tuple[str, ...] = ()) -> None:
    """Add one ``--flag`` per `TTRAOptions` field (but those in ``exclude``), help and choices."""
    hints = typing.get_type_hints(TTRAOptions)
    for f in fields(TTRAOptions):
        if f.name in exclude:
            continue
        flag = "--" + f.name.replace("_", "-")
        kind = _field_type(hints[f.name])
        help_text = str(f.metadata["help"])
        if f.default is MISSING:
            parser.add_argument(flag, dest=f.name, required=True, help=help_text)
        elif kind is bool:
            parser.add_argument(
                flag,
                dest=f.name,
                action=argparse.BooleanOptionalAction,
                default=f.default,
                help=help_text,
            )
        else:
            parser.add_argument(
                flag,
                dest=f.name,
                type=kind,
                default=f.default,
                help=help_text,
                choices=f.metadata.get("choices"),
            )


def options_from_args(args: argparse.Namespace) -> TTRAOptions:
    """Build `TTRAOptions` from parsed arguments, turning an empty system prompt into None."""
    values = {f.name: vars(args)[f.name] for f in fields(TTRAOptions)}
    if not values["system_prompt"]:
        values["system_prompt"] = None
    return TTRAOptions(**values)
