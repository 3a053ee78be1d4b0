"""Command line: ``python -m studyapp.pipelines.ttra --tasks FILE|--from-games FILE --out DIR``.

Runs one TTRA experiment without Django, shows progress bars with an ETA (TRL's per stage, one
per evaluation) and a progress line per logged step, prints a JSON summary, and leaves
``results.json`` and the aligned model in ``--out``. ``--quiet`` leaves only the summary;
``--report-to tensorboard|trackio`` sends TRL's training metrics to that tracker.
``--preset NAME`` starts from a setting of the paper (``--preset list`` names them); a flag given
explicitly overrides the preset's value.

``--dry-run`` prints the resolved options as JSON and stops before any model is loaded (no GPU,
no torch): every option's value, and under ``resolved`` what they mean for the run: the chat
template on or off, the system message in force (none without the template), the prompt files'
texts, the prompt, completion and SFT lengths, and the one-shot selection (its source, and with
``--tasks`` the ids it takes and how many candidates it drew among). ``--tasks``, ``--from-games``
``--out`` and ``--model`` may be left out of a dry run.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys

from studyapp.pipelines.ttra.config import add_options, options_from_args
from studyapp.pipelines.ttra.one_shot import parse_source, select
from studyapp.pipelines.ttra.presets import preset
from studyapp.pipelines.ttra.prompt_files import PromptDirError, load_prompts
from studyapp.pipelines.ttra.tasks import TaskFileError, load_games, load_tasks

NOT_GIVEN = "(not given)"  # what a dry run shows for a file or model left out


def build_parser(dry_run: bool = False) -> argparse.ArgumentParser:
    """The command's parser; a task source and ``--out`` are required unless ``dry_run``."""
    parser = argparse.ArgumentParser(
        prog="python -m studyapp.pipelines.ttra",
        description="Test-time RL alignment (one-shot GRPO, then majority-vote TTRL) and evaluation.",
    )
    source = parser.add_mutually_exclusive_group(required=not dry_run)
    source.add_argument("--tasks", help="JSONL of {question, answer[, options, id, kind]}.")
    source.add_argument(
        "--from-games", help="Experiment results JSONL of finished Twenty Questions games."
    )
    parser.add_argument(
        "--out", required=not dry_run, help="Output directory for results and model."
    )
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="Print the resolved options (template, system message, lengths, one-shot "
        "selection) as JSON and exit without loading a model.",
    )
    parser.add_argument(
        "--no-candidate-list",
        action="store_true",
        help="Do not list the 157 candidate words in Twenty Questions prompts.",
    )
    parser.add_argument(
        "--quiet", action="store_true", help="No progress bars or progress lines; only the summary."
    )
    add_options(parser)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    dry = "--dry-run" in argv
    if dry:  # a dry run shows a preset without naming a model or an SFT file
        for flag in ("--model", "--sft-data"):
            if not any(a == flag or a.startswith(flag + "=") for a in argv):
                argv += [flag, NOT_GIVEN]
    args = build_parser(dry_run=dry).parse_args(argv)
    if args.quiet:
        args.progress_bars = False
    try:
        options = options_from_args(args)
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    if args.dry_run:
        return dry_run(options, args)
    from tqdm.auto import tqdm

    # torch, transformers and trl (the ttra extra) load only past the argument checks
    from studyapp.pipelines.ttra.evaluate import run_experiment, summary
    from studyapp.pipelines.ttra.train import silence_library_bars

    try:
        # An unknown file name is refused here.
        templates = load_prompts(options.prompts, options.prompt_set)
        if args.tasks:
            tasks = load_tasks(args.tasks)
        else:
            tasks = load_games(
                args.from_games, list_candidates=not args.no_candidate_list, templates=templates
            )
    except (OSError, TaskFileError, PromptDirError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2

    def progress(report: dict) -> None:
        # Through tqdm, so a line never breaks a progress bar; to stderr, so stdout is the summary.
        tqdm.write(json.dumps({"progress": report}), file=sys.stderr)

    if args.quiet:
        silence_library_bars()
    try:
        # Libraries print their own log lines to stdout (transformers' progress callback writes
        # each logged dict there): keep them on stderr so stdout is the summary alone.
        with contextlib.redirect_stdout(sys.stderr):
            results = run_experiment(options, tasks, args.out, None if args.quiet else progress)
    except ValueError as err:  # options that do not fit (batch splits, a missing tracker, ids,
        # a bad SFT file: TaskFileError is a ValueError)
        print(f"error: {err}", file=sys.stderr)
        return 2
    from accelerate import PartialState

    if PartialState().is_main_process:  # under accelerate launch, one summary
        print(json.dumps(summary(results), indent=2))
    return 0


def resolved(options, tasks=None) -> dict:  # noqa: ANN001 (TTRAOptions, list[Task] | None)
    """What the options mean for a run, in the terms the paper's appendices use."""

    chosen = preset(options.preset) if options.preset else None
    template = bool(options.use_chat_template)
    out: dict = {
        "preset": None
        if chosen is None
        else {"name": chosen.name, "section": chosen.section, "assumed": list(chosen.assumed)},
        "chat_template": template,
        "system_message": options.system_prompt if template else None,
        "prompt_set": options.prompt_set,
        # The prompt files as the model reads them (a file's doubled braces are single ones).
        "prompts": {
            name: text.replace("{{", "{").replace("}}", "}")
            for name, text in load_prompts(options.prompts, options.prompt_set).items()
        },
        "max_prompt_length": options.max_prompt_length,
        "max_completion_length": options.max_completion_length,
        "ttrl_max_completion_length": options.ttrl_max_completion_length
        or options.max_completion_length,
        "eval_max_completion_length": options.eval_max_completion_length,
        "sft_eval_max_completion_length": options.sft_eval_max_completion_length
        or options.eval_max_completion_length,
        # GRPO's objective (config.py: verl's defaults, which TRL 1.16 shares)
        "grpo": {
            "loss_type": options.loss_type,
            "scale_rewards": options.scale_rewards,
            "clip_range": options.clip_range,
            "rollout_top_p": options.rollout_top_p,
            "beta": options.beta,
        },
        "sft_max_length": options.sft_max_length,
        "one_shot": {
            "from": options.one_shot_from,
            "source": parse_source(options.one_shot_from).describe(),
            "id": options.one_shot_id,
            "ids": options.one_shot_ids,
            "per_label": options.one_shot_per_label,
            "seed": options.seed,
        },
    }
    if tasks is not None:
        selection = select(tasks, options)
        out["one_shot"].update(
            {
                "source": selection.source,
                "candidates": selection.candidates,
                "chosen": [t.id for t in selection.chosen],
                "pool": len(selection.pool),
            }
        )
    return out


def dry_run(options, args: argparse.Namespace) -> int:  # noqa: ANN001 (TTRAOptions)
    """Print ``{"options": ..., "resolved": ...}`` and return 0; a task file or a one-shot source
    that cannot be used returns 2 with the reason."""

    try:
        tasks = None
        if args.tasks:
            tasks = load_tasks(args.tasks)
        elif args.from_games:
            tasks = load_games(args.from_games, list_candidates=not args.no_candidate_list)
        report = {"options": options.to_dict(), "resolved": resolved(options, tasks)}
    except (OSError, ValueError, PromptDirError) as err:  # TaskFileError is a ValueError
        print(f"error: {err}", file=sys.stderr)
        return 2
    print(json.dumps(report, indent=2, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
