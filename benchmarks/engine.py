"""The engines' own cost per applied event and the speed of offline self-play, as JSON.

Target (issue 2): under 50 µs per applied event. The event logs come from offline self-play; the
timed part is replaying them (``Engine.apply`` only, no agents), repeated, and the median of the
repeats is reported. Self-play speed (games per second through ``games.runner.play_game``,
agents included) is what a model-free experiment or a test suite sees.

    .venv/bin/python benchmarks/engine.py [--games 200] [--repeats 7]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from games import get_engine  # noqa: E402
from games.agents import make_agent  # noqa: E402
from games.runner import play_game  # noqa: E402

TARGET_US = 50.0
# The offline agent that fills each seat, by game and seat label.
AGENTS = {
    "twenty-questions": {"questioner": "offline:infogain", "oracle": "offline:kb"},
    "undercover": {"player": "offline:descriptor"},
}


def available_games() -> list[str]:
    """Twenty Questions, plus Who is Undercover once its engine imports."""
    names = ["twenty-questions"]
    try:
        get_engine("undercover")
    except ImportError:
        return names
    return [*names, "undercover"]


async def self_play(game: str, count: int) -> tuple[list[tuple[dict, list[dict]]], float]:
    """Play ``count`` seeded games; return their (config, events) logs and the seconds taken."""
    engine = get_engine(game)
    logs = []
    started = time.perf_counter()
    for seed in range(count):
        config = engine.new_config(seed)
        agents = {
            seat: make_agent(AGENTS[game][role], game=game, role=role, seed=seed)
            for seat, role in enumerate(engine.seats(config))
        }
        _, events = await play_game(engine, config, agents)
        logs.append((config, events))
    return logs, time.perf_counter() - started


def replay_cost_us(game: str, logs: list[tuple[dict, list[dict]]], repeats: int) -> float:
    """Median over ``repeats`` of the mean microseconds per applied event when replaying ``logs``."""
    engine = get_engine(game)
    events = sum(len(log) for _, log in logs)
    states = [(engine.initial(config), log) for config, log in logs]
    costs = []
    for _ in range(repeats):
        started = time.perf_counter()
        for state, log in states:
            for event in log:
                state = engine.apply(state, event)
        costs.append((time.perf_counter() - started) / events * 1e6)
    return statistics.median(costs)


def measure(game: str, count: int, repeats: int) -> dict[str, Any]:
    logs, seconds = asyncio.run(self_play(game, count))
    events = sum(len(log) for _, log in logs)
    us = replay_cost_us(game, logs, repeats)
    return {
        "games": count,
        "events": events,
        "events_per_game": round(events / count, 2),
        "median_us_per_event": round(us, 2),
        "target_us_per_event": TARGET_US,
        "cost_vs_target": round(us / TARGET_US, 3),
        "self_play_games_per_s": round(count / seconds, 1),
        "engine_share_of_self_play": round(us * events / 1e6 / seconds, 3),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=200, help="self-play games per engine")
    parser.add_argument("--repeats", type=int, default=7, help="timed replays of every log")
    args = parser.parse_args(argv)
    results = {game: measure(game, args.games, args.repeats) for game in available_games()}
    if len(results) == 2:
        tq, uc = results["twenty-questions"], results["undercover"]
        results["ratios"] = {
            "undercover_vs_twenty_questions_us_per_event": round(
                uc["median_us_per_event"] / tq["median_us_per_event"], 3
            ),
        }
    print(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
