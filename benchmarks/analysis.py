"""Curves and tables from a synthetic 1,000,000-turn frame: seconds and peak memory as JSON.

Targets (issue 6): under 3 s and under 1.5 GB. The synthetic data stands in for a large study:
model sequences (none and cumulative, several samples, 50 rounds) plus human participants
(20 rounds each), ten turns per game. Building the frames is not timed; the analysis is. Memory is
reported twice: the whole process's peak RSS (synthetic data included) and, from a second run under
tracemalloc, the peak the analysis itself allocates.

    .venv/bin/python benchmarks/analysis.py [--turns 1000000]
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from analysis import metrics  # noqa: E402
from analysis.frames import GAME_COLUMNS, typed  # noqa: E402

TURNS_PER_GAME = 10
ROUNDS, SAMPLES, HUMAN_ROUNDS = 50, 5, 20


def synthetic(turn_count: int, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A games frame and its turns frame; nine tenths of the games are models, the rest humans."""
    rng = np.random.default_rng(seed)
    game_count = turn_count // TURNS_PER_GAME
    models = game_count * 9 // 10 // (2 * SAMPLES * ROUNDS)
    humans = (game_count - models * 2 * SAMPLES * ROUNDS) // HUMAN_ROUNDS
    model_keys = pd.MultiIndex.from_product(
        [
            [f"openai:m{i}" for i in range(models)],
            ["none", "cumulative"],
            range(SAMPLES),
            range(ROUNDS),
        ],
        names=["player", "setting", "sample", "round"],
    ).to_frame(index=False)
    model_keys["player_kind"] = "model"
    human_keys = pd.MultiIndex.from_product(
        [[f"P-{i:05d}" for i in range(humans)], ["cumulative"], [0], range(HUMAN_ROUNDS)],
        names=["player", "setting", "sample", "round"],
    ).to_frame(index=False)
    human_keys["player_kind"] = "human"
    games = pd.concat([model_keys, human_keys], ignore_index=True)
    games["game"] = "twenty-questions"
    games["table"] = "t" + pd.Series(np.arange(len(games))).astype(str)
    games["reward"] = metrics.ndcg_rewards(pd.Series(rng.integers(1, 26, len(games))))
    games = typed(games.reindex(columns=list(GAME_COLUMNS)), GAME_COLUMNS)
    turns = pd.DataFrame(
        {
            "table": games["table"].repeat(TURNS_PER_GAME).to_numpy(),
            "seq": np.tile(np.arange(TURNS_PER_GAME), len(games)),
            "type": np.tile(np.array(["question", "answer"]), len(games) * TURNS_PER_GAME // 2),
            "chars": rng.integers(0, 80, len(games) * TURNS_PER_GAME),
        }
    ).astype({"table": "string", "type": "string"})
    return games, turns


def analyse(games: pd.DataFrame, turns: pd.DataFrame) -> dict[str, int]:
    """Everything the report and dashboard compute, from the frames."""
    totals = metrics.turn_totals(turns)
    games = games.drop(columns=["turns", "questions", "chars"]).join(totals, on="table")
    curves = metrics.cumulative_curves(games[games["player_kind"] != "human"])
    people = games[games["player_kind"] == "human"]
    participants = metrics.player_curves(people)
    groups = metrics.variance_groups(people)
    table = metrics.settings_table(games)
    return {
        "games": len(games),
        "curve_points": len(curves),
        "participant_points": len(participants),
        "participants": len(groups),
        "table_cells": int(table.size),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--turns", type=int, default=1_000_000)
    args = parser.parse_args()
    games, turns = synthetic(args.turns)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    counts = analyse(games, turns)
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    tracemalloc.start()  # a second, untimed run: what the analysis itself allocates at its peak
    analyse(games, turns)
    traced = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    print(
        json.dumps(
            {
                "turns": len(turns),
                **counts,
                "seconds": round(seconds, 3),
                "target_seconds": 3.0,
                "peak_rss_mb": round(peak / 1024, 1),
                "rss_growth_mb": round((peak - before) / 1024, 1),
                "analysis_peak_mb": round(traced / 2**20, 1),
                "target_mb": 1536,
            }
        )
    )


if __name__ == "__main__":
    main()
