"""``python -m games``: simulate, play in the terminal, and run experiments."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from games.twenty_questions import cli as tq_cli
from games.undercover import cli as uc_cli


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m games", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)

    simulate = commands.add_parser("simulate", help="agents play each other, print a summary")
    simulate_games = simulate.add_subparsers(dest="game", required=True)
    play = commands.add_parser("play", help="play a game yourself in the terminal")
    play_games = play.add_subparsers(dest="game", required=True)
    for module in (tq_cli, uc_cli):
        module.add_simulate(simulate_games)
        module.add_play(play_games)

    try:
        from games.experiment import cli as experiment_cli
    except ImportError:  # the experiment runner lands with the LLM agents
        experiment_cli = None
    if experiment_cli is not None:
        experiment_cli.add_experiment(commands)
        from games.experiment import reproduce

        reproducer = commands.add_parser(
            "reproduce",
            help="play one table or figure of the test-time learning paper, then lay it out "
            "(python -m analysis reproduce-layout)",
            description=reproduce.__doc__,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        reproduce.add_arguments(reproducer)
        reproducer.set_defaults(func=reproduce.run)
    add_prompts(commands)
    return parser


def add_prompts(commands: argparse._SubParsersAction) -> None:
    """``python -m games prompts export DIR`` and ``prompts check DIR``."""
    parser = commands.add_parser("prompts", help="export or check the prompt texts models read")
    actions = parser.add_subparsers(dest="action", required=True)
    export = actions.add_parser("export", help="write every prompt and its manifest into DIR")
    export.add_argument("dir", type=Path)
    export.add_argument("--prompts", type=Path, help="start from this folder's overrides")
    check = actions.add_parser("check", help="check a prompt folder and print its hashes")
    check.add_argument("dir", type=Path)
    parser.set_defaults(func=run_prompts)


def run_prompts(args: argparse.Namespace) -> int:
    from games.llm import prompts

    try:
        if args.action == "export":
            chosen = prompts.load_set(args.prompts) if args.prompts else prompts.shipped()
            for path in prompts.export(args.dir, chosen):
                print(path)
            return 0
        print(json.dumps(prompts.load_set(args.dir).fingerprint(), indent=2))
        return 0
    except prompts.PromptSetError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
