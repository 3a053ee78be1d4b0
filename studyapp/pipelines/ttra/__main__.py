"""Command line: ``python -m studyapp.pipelines.ttra --tasks FILE|--from-games FILE --out DIR``.

Runs one TTRA experiment without Django, prints progress lines and a JSON summary, and leaves
``results.json`` and the aligned model in ``--out``.
"""

from __future__ import annotations

import argparse
import json
import sys

from studyapp.pipelines.ttra.config import add_options, options_from_args


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
    add_options(parser)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    options = options_from_args(args)
    from studyapp.pipelines.ttra.evaluate import run_experiment, summary
    from studyapp.pipelines.ttra.tasks import TaskFileError, load_games, load_tasks

    try:
        if args.tasks:
            tasks = load_tasks(args.tasks)
        else:
            tasks = load_games(args.from_games, list_candidates=not args.no_candidate_list)
    except (OSError, TaskFileError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2

    def progress(report: dict) -> None:
        print(json.dumps({"progress": report}), flush=True)

    results = run_experiment(options, tasks, args.out, progress)
    print(json.dumps(summary(results), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
