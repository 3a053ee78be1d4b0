"""Command line: ``python -m studyapp.pipelines.ttra --tasks FILE|--from-games FILE --out DIR``.

Runs one TTRA experiment without Django, shows progress bars with an ETA (TRL's per stage, one
per evaluation) and a progress line per logged step, prints a JSON summary, and leaves
``results.json`` and the aligned model in ``--out``. ``--quiet`` leaves only the summary;
``--report-to tensorboard|trackio`` sends TRL's training metrics to that tracker.
``--preset NAME`` starts from a setting of the paper (``--preset list`` names them); a flag given
explicitly overrides the preset's value.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys

from studyapp.pipelines.ttra.config import add_options, options_from_args
from studyapp.pipelines.ttra.prompt_files import PromptDirError, load_prompts
from studyapp.pipelines.ttra.tasks import TaskFileError, load_games, load_tasks


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m studyapp.pipelines.ttra",
        description="Test-time RL alignment (one-shot GRPO, then majority-vote TTRL) and evaluation.",
    )
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--tasks", help="JSONL of {question, answer[, options, id, kind]}.")
    source.add_argument(
        "--from-games", help="Experiment results JSONL of finished Twenty Questions games."
    )
    parser.add_argument("--out", required=True, help="Output directory for results and model.")
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
    args = build_parser().parse_args(argv)
    if args.quiet:
        args.progress_bars = False
    try:
        options = options_from_args(args)
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
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


if __name__ == "__main__":
    sys.exit(main())
