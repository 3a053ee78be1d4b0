"""Every TTRA option in one dataclass, with the paper's defaults and help text for the command line.

Defaults follow appendix B of the TTRA paper (the reasoning setup): GRPO with 32 rollouts per
question at temperature 0.6, AdamW, a cosine schedule with 10% linear warm-up; stage 1 at 5e-7 for
100 steps on one question, stage 2 at 5e-6 for 300 steps on 4 questions per step; completions up to
3072 tokens; evaluation avg@32 at temperature 0.6 and top-p 0.95. Every other setting the paper
names is a preset (`presets.PRESETS`, ``--preset NAME``): the preset's values replace these
defaults and a flag given on the command line replaces the preset's value.
"""

from __future__ import annotations

import argparse
import typing
from dataclasses import MISSING, asdict, dataclass, field, fields

from studyapp.pipelines.ttra.presets import PRESETS, listing, preset


# --one-shot-from, read here so a malformed source is refused with the options (one_shot.py draws).
@dataclass(frozen=True)
class Source:
    """A parsed ``--one-shot-from``: its kind (tasks, where, split, file) and argument."""

    kind: str
    field: str = ""
    value: str = ""
    path: str = ""

    def describe(self) -> str:
        if self.kind == "where":
            return f"the task file's records with {self.field} = {self.value}"
        if self.kind == "split":
            return (
                f"the task file's '{self.value}' split (records with split = {self.value}, all "
                "kept out of stage 2 and the evaluation); without a split field, the task file"
            )
        if self.kind == "file":
            return f"the task file {self.path} (the whole --tasks file stays for stage 2)"
        return "the task file (the rest stays for stage 2 and the evaluation)"


def parse_source(text: str | None) -> Source:
    """``--one-shot-from``'s value as a `Source`; a malformed one raises ValueError.

    >>> parse_source("where:level=1")
    Source(kind='where', field='level', value='1', path='')
    >>> parse_source("split:train").kind, parse_source("aime2023.jsonl").path
    ('split', 'aime2023.jsonl')
    """
    text = (text or "tasks").strip()
    if text == "tasks":
        return Source("tasks")
    if text.startswith("where:"):
        name, sep, value = text[len("where:") :].partition("=")
        if not sep or not name.strip() or not value.strip():
            raise ValueError(f"--one-shot-from {text!r}: write where:FIELD=VALUE (where:level=1)")
        return Source("where", field=name.strip(), value=value.strip())
    if text.startswith("split:"):
        name = text[len("split:") :].strip()
        if not name:
            raise ValueError(f"--one-shot-from {text!r}: write split:NAME (split:train)")
        return Source("split", field="split", value=name)
    if text.startswith("file:"):
        path = text[len("file:") :].strip()
        if not path:
            raise ValueError("--one-shot-from file: names no file")
        return Source("file", path=path)
    if text.endswith(".jsonl") or "/" in text:
        return Source("file", path=text)
    raise ValueError(f"--one-shot-from {text!r}: tasks, where:FIELD=VALUE, split:NAME or file:PATH")


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
        "questions, evaluate on both (§3.3); ablation: one-shot only, TTRL only, both (§6.1); sft: "
        "the SFT baseline on --sft-data, evaluated as TTRA is, beside TTRA (§3.2, §6.2 table 1).",
        ("ttra", "split-half", "ablation", "sft"),
    )
    stages: str = _opt(
        "both",
        "Stages to run in the ttra experiment: one-shot, ttrl, or both.",
        ("one-shot", "ttrl", "both"),
    )
    seed: int = _opt(0, "Seed for picking the one-shot example, the split, shuffling and sampling.")
    preset: str | None = _opt(
        None,
        "The paper's setting this run started from (`--preset NAME`, `--preset list`); the other "
        "options are the resolved values.",
    )
    one_shot_id: str | None = _opt(
        None,
        "Id of the labeled task for stage 1, looked up where --one-shot-from points (an AIME 2023 "
        "question's id with --one-shot-from file:aime2023.jsonl; a GSM8K training question's "
        "with split:train or a train-split file); by default one is drawn with the seed.",
    )
    one_shot_ids: str | None = _opt(
        None,
        "Comma-separated ids of k labeled tasks for stage 1 (appendix C: one case per pathology, "
        "four in all); choice tasks still train on every rotation of their options.",
    )
    one_shot_per_label: bool = _opt(
        False,
        "Draw stage 1's labeled tasks with the seed, one per distinct label (appendix C).",
    )
    one_shot_from: str = _opt(
        "tasks",
        "Where stage 1's example is drawn: tasks (the task file), where:FIELD=VALUE (records "
        "with that field, e.g. where:level=1 for MATH500, section 4.1), split:NAME (the records "
        "of that split, all kept out of stage 2: split:train for GSM8K, appendix A.1) or "
        "file:PATH (another task file: AIME 2023 for AIME, or GSM8K's train split).",
    )
    num_generations: int = _opt(32, "Rollouts per question, used for GRPO and the majority vote.")
    temperature: float = _opt(0.6, "Sampling temperature during training and evaluation.")
    max_completion_length: int = _opt(
        3072,
        "Maximum tokens per sampled completion during training, stage 1 and, unless "
        "--ttrl-max-completion-length, stage 2 (appendix B: 3072, 2500 for OlympiadBench's "
        "one-shot stage; A.1 and C: 1024).",
    )
    ttrl_max_completion_length: int | None = _opt(
        None,
        "Maximum tokens per completion in stage 2 (TTRL); None: --max-completion-length. "
        "Appendix B gives OlympiadBench's 2500 for the one-shot stage and no TTRL length.",
    )
    max_prompt_length: int | None = _opt(
        None,
        "Maximum prompt tokens, template included, in training and evaluation (appendix C: "
        "4000); a longer question loses its first tokens. None: no limit.",
    )
    eval_max_completion_length: int = _opt(
        3072, "Maximum tokens per sampled completion in evaluation (appendix B: 3072; A.1: 1024)."
    )
    sft_eval_max_completion_length: int | None = _opt(
        None,
        "Maximum tokens per completion when the SFT model is evaluated; None: "
        "--eval-max-completion-length. The paper gives none (preset sft-a2: 32768, s1's length).",
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
    # GRPO's objective, set here rather than left to TRL's defaults. The paper trains with verl
    # and names none of these; each default is verl's GRPO default, which TRL 1.16 shares.
    loss_type: str = _opt(
        "dapo",
        "GRPO loss aggregation: dapo = every token of the step's completions weighs the same "
        "(verl's token-mean, TRL's default); grpo = per-completion mean, then per batch.",
        ("dapo", "grpo", "dr_grpo", "bnpo"),
    )
    scale_rewards: str = _opt(
        "group",
        "Advantage scaling: group = divide by the question's rollouts' reward std (verl's "
        "norm_adv_by_std_in_grpo, TRL's default); batch = the batch's std; none = no scaling.",
        ("group", "batch", "none"),
    )
    clip_range: float = _opt(
        0.2, "PPO clip range epsilon of the GRPO ratio (verl's clip_ratio 0.2, TRL's default)."
    )
    rollout_top_p: float = _opt(
        1.0,
        "Top-p of training rollouts (verl's and TRL's 1.0: the paper gives top-p 0.95 for "
        "evaluation only, --eval-top-p).",
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
    gradient_checkpointing: bool = _opt(
        True,
        "Recompute activations to save memory (passed to transformers as activation_checkpointing "
        "where it has that name, from 5.x).",
    )
    use_vllm: str = _opt(
        "auto",
        "Generate rollouts with vLLM: auto = when vllm is importable and a GPU is present.",
        ("auto", "on", "off"),
    )
    vllm_gpu_memory_utilization: float = _opt(
        0.3,
        "Share of GPU memory vLLM may take while colocated with training (TRL's default); "
        "evaluation's own vLLM engine, which runs alone, takes up to 0.85.",
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
    eval_batch_questions: str | int = _opt(
        "auto",
        "Questions whose samples are generated together in one generate call: a number, or auto "
        "= as many as the free GPU memory holds at the prompts' and completions' lengths "
        "(8 on a CPU).",
    )
    eval_engine: str = _opt(
        "auto",
        "Engine of the evaluation's sampling: hf (transformers generate), vllm, or auto = vllm "
        "where it is installed, a GPU is present and one process runs (rollouts: --use-vllm).",
        ("auto", "hf", "vllm"),
    )
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
        "Directory of prompt files (math.txt, choice.txt, word.txt, label.txt) overriding the "
        "built-in ones by name; unknown names are refused. Their sha256 go into results.json.",
    )
    prompt_set: str | None = _opt(
        None,
        "A built-in set of prompts a section of the paper uses, in force under --prompts: "
        "a1-gsm8k (appendix A.1's 'Q: ' form), a1-mathqa (A.1's MathQA prompt as printed, "
        "'boxed{}' without a backslash), s5-clinical (appendix C's clinical frame).",
        ("a1-gsm8k", "a1-mathqa", "s5-clinical"),
    )
    sft_data: str | None = _opt(
        None,
        "JSONL of SFT examples for --experiment sft: {question, response[, kind, options]} "
        "(prompted like the tasks; also query/instruction/problem and answer/output/solution), "
        "{prompt, completion} (used as written) or {messages} (conversations).",
    )
    sft_learning_rate: float = _opt(2e-6, "Peak learning rate of SFT (appendix D.2: 2e-6).")
    sft_epochs: float = _opt(
        1.0, "Epochs of SFT over --sft-data (appendix A.2: 5; D.2 names none: 1 assumed)."
    )
    sft_batch_size: int = _opt(
        64, "Examples per SFT optimizer step (appendix D.2: 64; A.2, after s1: 16)."
    )
    sft_warmup_ratio: float = _opt(
        0.01, "Share of SFT's steps in linear warm-up (D.2: 1%; A.2: 5%)."
    )
    sft_weight_decay: float = _opt(0.1, "AdamW weight decay of SFT (D.2: 0.1; A.2: 1e-4).")
    sft_adam_beta2: float = _opt(0.999, "AdamW beta2 of SFT (A.2: 0.95; D.2 names none).")
    sft_lr_scheduler: str = _opt("cosine", "Learning-rate schedule of SFT after warm-up.")
    sft_max_length: int = _opt(
        4096, "Longest SFT example in tokens, prompt and response; longer ones lose their end."
    )
    sft_with_ttra: bool = _opt(
        True,
        "In --experiment sft, also run TTRA from the same base model, so one results.json holds "
        "table 1's three rows (direct, SFT, TTRA).",
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
        for name in ("max_completion_length", "eval_max_completion_length", "sft_batch_size"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1")
        for name in ("ttrl_max_completion_length", "sft_eval_max_completion_length"):
            if getattr(self, name) is not None and getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1 (or unset)")
        if not 0 < self.clip_range < 1:
            raise ValueError("clip_range must be between 0 and 1")
        if not 0 < self.rollout_top_p <= 1:
            raise ValueError("rollout_top_p must be above 0 and at most 1")
        self.eval_batch_questions = parse_batch_questions(self.eval_batch_questions)
        if self.one_shot_id is not None and self.one_shot_ids is not None:
            raise ValueError("give --one-shot-id or --one-shot-ids, not both")
        if self.one_shot_ids is not None and not one_shot_id_list(self.one_shot_ids):
            raise ValueError("--one-shot-ids names no task id")
        parse_source(self.one_shot_from)  # a malformed source is refused before anything runs
        if self.experiment == "sft" and not self.sft_data:
            raise ValueError("--experiment sft needs --sft-data FILE")

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def parse_batch_questions(value: object) -> str | int:
    """``auto`` or a whole number of at least 1, from the command line's text or Python.

    >>> parse_batch_questions("auto"), parse_batch_questions("16"), parse_batch_questions(4)
    ('auto', 16, 4)
    """
    if value == "auto":
        return "auto"
    try:
        number = int(str(value))
    except ValueError:
        raise ValueError(f"eval_batch_questions must be auto or a number, not {value!r}") from None
    if number < 1:
        raise ValueError("eval_batch_questions must be at least 1")
    return number


def one_shot_id_list(text: str | None) -> list[str]:
    """The ids of ``--one-shot-ids``, in order, blanks dropped.

    >>> one_shot_id_list("a, b,,c")
    ['a', 'b', 'c']
    """
    return [part.strip() for part in (text or "").split(",") if part.strip()]


def _field_type(hint: object) -> type:
    """The scalar type argparse should convert to, looking through ``X | None``."""
    args = [a for a in typing.get_args(hint) if a is not type(None)]
    return args[0] if args else hint  # type: ignore[return-value]


class PresetAction(argparse.Action):
    """``--preset NAME`` keeps the name; ``--preset list`` prints the presets and exits, like --help."""

    def __call__(self, parser, namespace, values, option_string=None):  # noqa: ANN001
        if values == "list":
            print(listing(), end="")  # to stdout, as --help prints
            parser.exit(0)
        if values not in PRESETS:
            parser.error(f"--preset: no preset {values!r}; see --preset list")
        setattr(namespace, self.dest, values)


def add_options(parser: argparse.ArgumentParser, exclude: tuple[str, ...] = ()) -> None:
    """Add ``--preset`` and one ``--flag`` per `TTRAOptions` field (but those in ``exclude``).

    A flag left out stays out of the parsed namespace (``argparse.SUPPRESS``), so
    `options_from_args` can tell an explicit flag, which wins over the preset, from a default.
    """
    hints = typing.get_type_hints(TTRAOptions)
    parser.add_argument(
        "--preset",
        action=PresetAction,
        default=argparse.SUPPRESS,
        metavar="NAME",
        help="Start from a setting of the paper (list: print them and exit); flags given "
        "explicitly override it.",
    )
    for f in fields(TTRAOptions):
        if f.name in exclude or f.name == "preset":
            continue
        flag = "--" + f.name.replace("_", "-")
        kind = _field_type(hints[f.name])
        help_text = str(f.metadata["help"]).replace("%", "%%")  # argparse formats help
        if f.default is MISSING:
            parser.add_argument(flag, dest=f.name, required=True, help=help_text)
        elif kind is bool:
            parser.add_argument(
                flag,
                dest=f.name,
                action=argparse.BooleanOptionalAction,
                default=argparse.SUPPRESS,
                help=f"{help_text} (default: {f.default})",
            )
        else:
            parser.add_argument(
                flag,
                dest=f.name,
                type=kind,
                default=argparse.SUPPRESS,
                help=f"{help_text} (default: {f.default})",
                choices=f.metadata.get("choices"),
            )


def resolve(given: dict[str, object], preset_name: str | None = None) -> TTRAOptions:
    """Options from the defaults, then the preset's values, then ``given`` (explicit values)."""
    values: dict[str, object] = {}
    if preset_name:
        values.update(preset(preset_name).values)
    values.update(given)
    values["preset"] = preset_name or None
    return TTRAOptions(**values)


def options_from_args(args: argparse.Namespace) -> TTRAOptions:
    """Build `TTRAOptions` from parsed arguments: defaults, then ``--preset``, then the flags
    given; an empty system prompt becomes None."""
    names = {f.name for f in fields(TTRAOptions)} - {"preset"}
    given = {name: value for name, value in vars(args).items() if name in names}
    if "system_prompt" in given and not given["system_prompt"]:
        given["system_prompt"] = None
    return resolve(given, getattr(args, "preset", None))
