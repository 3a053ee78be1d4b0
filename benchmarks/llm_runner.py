"""How close the experiment runner gets to the latency bound with many games in flight.

64 Twenty Questions games (LLM questioner and LLM oracle) run concurrently through the real
OpenAI SDK against the loopback fake server, which waits a fixed 100 ms before every reply. Calls
inside a game are sequential, so no schedule can beat the longest chain of calls × 100 ms; the
figure to watch is wall time over that bound (target: 1.25 or less on a 2-core machine).

The server runs in its own process so that its threads do not compete with the runner for the
interpreter lock; the runner's process is what is measured.

    .venv/bin/python benchmarks/llm_runner.py [--games 64] [--latency 0.1]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from games.experiment.runner import run_experiment  # noqa: E402
from games.experiment.spec import ExperimentSpec  # noqa: E402
from games.llm.providers import ProviderConfig, close_clients, get_provider  # noqa: E402
from tests.fakes.game_responder import GameResponder  # noqa: E402
from tests.fakes.llm_server import FakeLLMServer  # noqa: E402


def serve(latency: float, urls: multiprocessing.Queue, stop: multiprocessing.Event) -> None:
    # The server stands in for a remote API: hand the interpreter lock between its threads
    # often, so a reply due after 100 ms is not held back behind another thread's parsing.
    sys.setswitchinterval(0.0005)
    with FakeLLMServer(GameResponder(), latency=latency) as server:
        urls.put(server.openai_base_url)
        stop.wait()


async def bench(base_url: str, games: int, latency: float) -> dict[str, float]:
    config = ProviderConfig(api_key="bench", base_url=base_url, concurrency=2 * games)
    spec = ExperimentSpec(
        game="twenty-questions", model="openai-compatible:bench", cases=games, samples=1
    )
    # One call first, so SDK imports and client set-up are not counted as concurrency cost.
    await get_provider(spec.model, config).complete([{"role": "user", "content": "warm up"}])
    with tempfile.TemporaryDirectory() as tmp:
        started, cpu = time.perf_counter(), time.process_time()
        records = await run_experiment(
            [spec],
            Path(tmp) / "bench.jsonl",
            config_for=lambda _: config,
            parallel=games,
            progress=False,
        )
        wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    await close_clients()
    calls = [r["usage"]["calls"] for r in records]
    ideal = max(calls) * latency
    return {
        "games": len(records),
        "calls": sum(calls),
        "longest_chain_calls": max(calls),
        "latency_s": latency,
        "wall_s": round(wall, 3),
        "ideal_s": round(ideal, 3),
        "ratio": round(wall / ideal, 3),
        "runner_cpu_s": round(cpu, 3),
        "runner_cpu_ms_per_call": round(1000 * cpu / sum(calls), 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--games", type=int, default=64)
    parser.add_argument("--latency", type=float, default=0.1)
    args = parser.parse_args()
    urls: multiprocessing.Queue = multiprocessing.Queue()
    stop = multiprocessing.Event()
    server = multiprocessing.Process(target=serve, args=(args.latency, urls, stop), daemon=True)
    server.start()
    try:
        result = asyncio.run(bench(urls.get(timeout=30), args.games, args.latency))
    finally:
        stop.set()
        server.join(timeout=5)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
