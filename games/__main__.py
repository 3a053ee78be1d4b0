"""``python -m games``: simulate, play in the terminal, and run experiments."""

from __future__ import annotations

import argparse
import sys

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
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
