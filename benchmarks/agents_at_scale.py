"""People among model agents at the size of a launch, on the production topology, as JSON.

N Who is Undercover tables play at once, each one person (a scripted socket that moves as soon as
its board asks) among four model agents (``openai-compatible:bench``) whose server, a loopback
process speaking OpenAI's wire format (tests/fakes/llm_server.py), answers every call after a set
latency. Daphne (``--servers``), the steps' executors (``--steps``, ``manage.py run_steps``),
PostgreSQL and Redis run as ``make production`` runs them, DEBUG off. Agents take no pause
(``agent_delay_seconds`` 0), so a table's model calls, one after another, are the whole of its
agents' part of a game: the latency-bound time of a game is its model calls × the latency (plus
the person's own moves, which take milliseconds here). The figure to watch is each game's wall
time over that bound, at N = 2, 16, 64 and 200 tables (targets: 1.25 at 64, 1.5 at 200), with
agent turns a second, model calls per table, and the executors' CPU per agent turn and memory.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/scale REDIS_URL=redis://127.0.0.1:6379/7 \\
        .venv/bin/python benchmarks/agents_at_scale.py [--tables 2,16,64,200] [--latency 1.5]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.ws_load import free_port, start_server, wait_for_port  # noqa: E402
from benchmarks.ws_study import Person, Seating, start_steps, start_worker, tree_cpu  # noqa: E402

SPEC = "openai-compatible:bench"


def serve_model(latency: float, urls: multiprocessing.Queue, stop: multiprocessing.Event) -> None:
    from tests.fakes.game_responder import GameResponder
    from tests.fakes.llm_server import FakeLLMServer

    sys.setswitchinterval(0.0005)  # a reply due after the latency is not held behind parsing
    with FakeLLMServer(GameResponder(), latency=latency) as server:
        urls.put(server.openai_base_url)
        stop.wait()


def memory_kb(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def prepare(tables: int, offset: int) -> list[tuple[int, str]]:
    """Undercover tables of one person and four model agents: (table, session key)."""
    from django.contrib.sessions.backends.db import SessionStore

    from studyapp.tables import services

    people = []
    for n in range(tables):
        store = SessionStore()
        store.create()
        seats = [{"kind": "human", "session_key": store.session_key}]
        seats += [{"kind": "agent", "agent_spec": SPEC}] * 4
        table = services.create_table(
            "undercover",
            None,
            seats,
            seed=offset + n,
            turn_deadline_seconds=0,
            agent_delay_seconds=0,
            agents_disclosed=True,
        )
        people.append((table.pk, store.session_key))
    return people


async def play(people: list[Person]) -> tuple[list[float | None], list[str]]:
    """Everyone plays their game to its end: each game's wall time from the common start (None
    for a person whose socket failed), and the failures."""
    seating = Seating(len(people), lambda: None)
    ends: list[float | None] = [None] * len(people)
    failures: list[str] = []

    async def one(index: int, person: Person) -> None:
        try:
            await person.play(seating, 3600, 0.0, 0.0)
            ends[index] = time.monotonic() - seating.start
        except Exception as err:  # a socket refused or cut: counted, never a game time
            failures.append(f"{type(err).__name__}: {err}"[:200])

    await asyncio.gather(*(one(i, p) for i, p in enumerate(people)))
    return ends, failures


def log_of(table_ids: list[int]) -> dict[int, dict]:
    from studyapp.tables.models import Table, Turn

    found = {pk: {"calls": 0, "agent_turns": 0, "errors": 0, "turns": 0} for pk in table_ids}
    for table_id, actor, usage in Turn.objects.filter(table_id__in=table_ids).values_list(
        "table_id", "actor", "usage"
    ):
        row = found[table_id]
        row["turns"] += 1
        if actor == SPEC:
            row["agent_turns"] += 1
            row["calls"] += int((usage or {}).get("calls", 0))
            row["errors"] += "error" in (usage or {})
    for table_id, status in Table.objects.filter(pk__in=table_ids).values_list("pk", "status"):
        found[table_id]["status"] = status
    return found


def measure(size: int, offset: int, ports: list[int], executors: list, latency: float) -> dict:
    seated = prepare(size, offset)
    people = []
    for table, key in seated:
        port = ports[table % len(ports)]
        url = f"ws://127.0.0.1:{port}/ws/tables/{table}/"
        people.append(Person(url, f"http://127.0.0.1:{port}", key, f"t{table}", "undercover"))
    cpu_before = sum(tree_cpu(p.pid) for p in executors)
    started = time.monotonic()
    ends, failures = asyncio.run(play(people))
    wall = time.monotonic() - started
    cpu = sum(tree_cpu(p.pid) for p in executors) - cpu_before
    log = log_of([table for table, _ in seated])
    games, ratios, ideals = [], [], []
    for (table, _), game in zip(seated, ends, strict=True):
        ideal = log[table]["calls"] * latency
        if game is None or log[table].get("status") != "finished" or not ideal:
            continue
        games.append(game)
        ideals.append(ideal)
        ratios.append(game / ideal)
    if not games:
        return {"tables": size, "finished": 0, "socket_failures": failures[:5]}
    agent_turns = sum(row["agent_turns"] for row in log.values())
    calls = [row["calls"] for row in log.values()]
    finished = sum(row.get("status") == "finished" for row in log.values())
    return {
        "tables": size,
        "finished": finished,
        "socket_failures": len(failures),
        "socket_failure_examples": sorted(set(failures))[:3],
        "wall_s": round(wall, 1),
        "game_s_mean": round(statistics.mean(games), 2),
        "ideal_s_mean": round(statistics.mean(ideals), 2),
        "ratio_to_latency_bound": round(statistics.mean(games) / statistics.mean(ideals), 3),
        "ratio_per_game_mean": round(statistics.mean(ratios), 3),
        "ratio_per_game_max": round(max(ratios), 3),
        "model_calls_per_table_mean": round(statistics.mean(calls), 2),
        "model_calls_per_table_min_max": [min(calls), max(calls)],
        "failed_model_turns": sum(row["errors"] for row in log.values()),
        "agent_turns": agent_turns,
        "agent_turns_per_s": round(agent_turns / wall, 1),
        "executor_cpu_s": round(cpu, 2),
        "executor_cpu_ms_per_agent_turn": round(1000 * cpu / max(agent_turns, 1), 2),
        "executor_rss_mb": round(sum(memory_kb(p.pid, "VmRSS") for p in executors) / 1024, 1),
        "executor_peak_rss_mb": round(sum(memory_kb(p.pid, "VmHWM") for p in executors) / 1024, 1),
    }


def main(args: argparse.Namespace) -> None:
    urls: multiprocessing.Queue = multiprocessing.Queue()
    stop = multiprocessing.Event()
    model = multiprocessing.Process(target=serve_model, args=(args.latency, urls, stop))
    model.start()
    base_url = urls.get(timeout=30)
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "studyapp.settings",
        "DATABASE_URL": args.database_url,
        "REDIS_URL": args.redis_url,
        "DEBUG": "false",
        "SECRET_KEY": "benchmark-only",
        "ALLOWED_HOSTS": "127.0.0.1",
        "CELERY_TASK_ALWAYS_EAGER": "false",
        "OPENAI_COMPATIBLE_BASE_URL": base_url,
        "OPENAI_COMPATIBLE_API_KEY": "bench",
        "SOCKETS_PER_SESSION": "100",
        "PYTHONPATH": str(ROOT),
    }
    os.environ.update(env)
    import django

    django.setup()
    from django.core.cache import cache
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    cache.clear()  # the Redis database: no stream, lease or slot left by an earlier run
    ports = [free_port() for _ in range(args.servers)]
    servers = [start_server(port, env) for port in ports]
    executors = [start_steps(env, f"bench-steps-{n}") for n in range(args.steps)]
    # The baseline of the design before the executors (a commit before 28 Nov): agent turns as
    # Celery tasks on --celery-workers workers of 2 prefork processes, counted as the executors.
    executors += [start_worker(env, "prefork", 2, 0) for _ in range(args.celery_workers)]
    results = []
    try:
        for port in ports:
            wait_for_port(port)
        time.sleep(2)  # the executors join the stream's group
        offset = 0
        for size in args.tables:
            results.append(measure(size, offset, ports, executors, args.latency))
            offset += size
            print(json.dumps(results[-1]), file=sys.stderr)
    finally:
        for process in [*executors, *servers]:
            process.terminate()
        for process in [*executors, *servers]:
            process.wait(timeout=30)
        stop.set()
        model.join(10)
    print(
        json.dumps(
            {
                "benchmark": "agents_at_scale",
                "latency_s": args.latency,
                "servers": args.servers,
                "steps_executors": args.steps,
                "celery_workers": args.celery_workers,
                "cores": os.cpu_count(),
                "runs": results,
                "targets": {"ratio_at_64": 1.25, "ratio_at_200": 1.5, "executor_rss_mb": 1024},
            }
        )
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--tables",
        type=lambda text: [int(n) for n in text.split(",")],
        default=[2, 16, 64, 200],
        help="comma-separated numbers of tables played at once, one run each",
    )
    parser.add_argument("--latency", type=float, default=1.5, help="the model's seconds per call")
    parser.add_argument("--servers", type=int, default=2, help="daphne processes")
    parser.add_argument("--steps", type=int, default=1, help="steps executors")
    parser.add_argument(
        "--celery-workers",
        type=int,
        default=0,
        help="Celery workers of 2 processes (the baseline: run with --steps 0 on a commit from "
        "before the steps executors, where agent turns were Celery tasks)",
    )
    parser.add_argument("--database-url", default=os.environ.get("DATABASE_URL", ""))
    parser.add_argument("--redis-url", default=os.environ.get("REDIS_URL", ""))
    main(parser.parse_args())
