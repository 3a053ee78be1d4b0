"""WebSocket load: N browsers' worth of sockets playing against one daphne, as JSON.

Target (issue 4): p95 under 100 ms from a move's submit to its broadcast arriving back, at 200
clients each making one move per second, on the Redis channel layer and PostgreSQL, with no lost
and no duplicated turn.

Clients pair up at Twenty Questions tables with two human seats (questioner and oracle), so every
move is a person's move going through the whole path: socket → engine validation → Turn commit
→ per-seat render → channel layer → socket. Each client moves when its board says it is its turn,
at most once a second. Latency is measured by each client from sending its move to the first
frame showing the next ``seq``. No agent plays, so a move triggers no agent reply. Afterwards
the log is checked: every acknowledged move is a turn, ``seq`` has no gaps, no move text appears
twice.

The clients share the machine with the server, so the figures include what the clients cost:
``client_cpu_s`` and ``server_cpu_s`` say where the CPU went, ``server_cpu_ms_per_move`` is the
server's cost of one move, ``load_avg`` what else the machine was doing. ``steady_*`` leave out
the moves of the first ``--warmup`` seconds, when 200 sockets connect at once. Each client
starts its rhythm at a random point of the first second; ``--lockstep`` starts them all at once
(moves then arrive in bursts, one per table, and p95 is the burst's queue). ``--servers N``
starts N daphne processes and sends each table's sockets to one of them, as a load balancer that
routes by URL would; it is safe because every process judges moves against the log (see
``studyapp.tables.services``), it only spends more CPU on the machine the clients share.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/web REDIS_URL=redis://127.0.0.1:6379/4 \\
        .venv/bin/python benchmarks/ws_load.py [--clients 200] [--seconds 30] [--servers 1]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import resource
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SEQ = re.compile(r'data-seq="(\d+)"')
TARGET_P95_MS = 100.0


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=200, help="sockets (rounded up to even)")
    parser.add_argument("--seconds", type=float, default=30.0, help="how long to play")
    parser.add_argument(
        "--interval", type=float, default=1.0, help="seconds between a client's moves"
    )
    parser.add_argument(
        "--warmup", type=float, default=5.0, help="seconds left out of the steady_* figures"
    )
    parser.add_argument("--servers", type=int, default=1, help="daphne processes")
    parser.add_argument(
        "--lockstep", action="store_true", help="all clients start moving at the same instant"
    )
    parser.add_argument(
        "--mode",
        choices=["humans", "study"],
        default="humans",
        help="humans: human-only tables, no Celery; study: Twenty Questions and Undercover "
        "tables where people sit with agents whose turns run on a Celery worker, then the "
        "floor (one INSERT and one group send per move) on the same stack",
    )
    parser.add_argument("--workers", type=int, default=1, help="Celery workers (study mode)")
    parser.add_argument(
        "--steps", type=int, default=1, help="steps executors: agents' turns (study mode)"
    )
    parser.add_argument(
        "--pool", default="prefork", help="the workers' Celery pool (study mode): prefork, threads"
    )
    parser.add_argument(
        "--concurrency", type=int, default=2, help="processes or threads per worker (study mode)"
    )
    parser.add_argument(
        "--worker-nice",
        type=int,
        default=10,
        help="study mode: the workers' niceness, as the Procfile's WORKER_NICE (default 10): on "
        "a machine they share with daphne, people's moves get the CPU before agents' turns, "
        "which wait --agent-delay anyway; 0 runs them at the web processes' priority",
    )
    parser.add_argument(
        "--ramp",
        type=float,
        default=5.0,
        help="study mode: each person's first move comes at a random point of the first RAMP "
        "seconds (default 5: people who sat down independently); 1 puts every first move in "
        "the first second, the burst of a study whose people all start at one instant",
    )
    parser.add_argument(
        "--agent-delay", type=float, default=0.5, help="agents' pause next to people (study mode)"
    )
    parser.add_argument(
        "--celery-floor",
        action="store_true",
        help="study mode: also measure the Celery round trip alone (a task that does nothing, "
        "sent as an agent's turn is, at the study's agent-turn rate): benchmarks/celery_floor.py",
    )
    parser.add_argument("--database-url", default=os.environ.get("DATABASE_URL", ""))
    parser.add_argument("--redis-url", default=os.environ.get("REDIS_URL", ""))
    args = parser.parse_args()
    if not args.database_url.startswith("postgres") or not args.redis_url.startswith("redis"):
        parser.error(
            "give PostgreSQL and Redis: --database-url/--redis-url or DATABASE_URL/REDIS_URL"
        )
    return args


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def server_env(args: argparse.Namespace) -> dict[str, str]:
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "studyapp.settings",
        "DATABASE_URL": args.database_url,
        "REDIS_URL": args.redis_url,
        "DEBUG": "false",
        "SECRET_KEY": "benchmark-only",
        "ALLOWED_HOSTS": "127.0.0.1",
        "CELERY_TASK_ALWAYS_EAGER": "true",
    }


def prepare(pairs: int) -> list[tuple[int, str, str]]:
    """Migrate, then make one table and two browser sessions per pair."""
    import django

    django.setup()
    from django.contrib.sessions.backends.db import SessionStore
    from django.core.management import call_command

    from studyapp.tables import services

    call_command("migrate", verbosity=0)
    tables = []
    for _ in range(pairs):
        keys = []
        for _ in range(2):
            session = SessionStore()
            session.create()
            keys.append(session.session_key)
        table = services.create_table(
            "twenty-questions",
            {"answer": "Apple", "max_questions": 100000},
            [{"kind": "human", "session_key": key} for key in keys],
            turn_deadline_seconds=0,
        )
        tables.append((table.pk, keys[0], keys[1]))
    return tables


class Client:
    def __init__(self, url: str, origin: str, key: str, role: str, name: str) -> None:
        self.url, self.origin, self.key, self.role, self.name = url, origin, key, role, name
        self.latencies: list[tuple[float, float]] = []  # (sent at, seconds to the broadcast)
        self.sent = 0
        self.unanswered = 0

    def my_turn(self, frame: str) -> bool:
        marker = 'id="question-text"' if self.role == "questioner" else 'name="answer"'
        return marker in frame

    def move(self) -> dict:
        if self.role == "questioner":
            return {"type": "question", "text": f"Is it alive? ({self.name} move {self.sent})"}
        return {"type": "answer", "answer": "Yes"}

    async def play(self, until: float, interval: float, offset: float) -> None:
        from websockets.asyncio.client import connect

        headers = {"Cookie": f"sessionid={self.key}", "Origin": self.origin}
        async with connect(self.url, additional_headers=headers, open_timeout=60) as ws:
            last_move = time.monotonic() + offset - interval  # first move after ``offset``
            waiting: tuple[int, float] | None = None  # (seq after my move, sent at)
            while time.monotonic() < until:
                try:
                    frame = await asyncio.wait_for(ws.recv(), timeout=until - time.monotonic())
                except TimeoutError:
                    break
                seq = int(SEQ.search(frame)[1])
                if waiting and seq >= waiting[0]:
                    self.latencies.append((waiting[1], time.perf_counter() - waiting[1]))
                    waiting = None
                if waiting is None and self.my_turn(frame):
                    last_move = await paced(last_move, interval, until)
                    if last_move is None:
                        break
                    waiting = (seq + 1, time.perf_counter())
                    await ws.send(json.dumps(self.move()))
                    self.sent += 1
            self.unanswered = 1 if waiting else 0


async def paced(last_move: float, interval: float, until: float) -> float | None:
    """Wait until ``interval`` has passed since a client's last move: the time of its next move,
    or None if the run is over by then."""
    pause = last_move + interval - time.monotonic()
    if pause > 0:
        await asyncio.sleep(pause)
    now = time.monotonic()
    return None if now >= until else now


async def run_clients(
    clients: list[Client], seconds: float, interval: float, lockstep: bool
) -> float:
    """Every client starts its one-a-second rhythm at a random point of the first second, as
    people who sat down independently would; ``lockstep`` starts all of them at once, so their
    moves arrive in bursts of one per table."""
    start = time.monotonic()
    rng = random.Random(0)
    await asyncio.gather(
        *(
            c.play(start + seconds, interval, 0.0 if lockstep else rng.uniform(0, interval))
            for c in clients
        )
    )
    return time.monotonic() - start


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time of a process so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def own_cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def start_server(
    port: int, env: dict[str, str], app: str = "studyapp.asgi:application"
) -> subprocess.Popen:
    daphne = Path(sys.executable).with_name("daphne")
    return subprocess.Popen(
        [str(daphne), "-b", "127.0.0.1", "-p", str(port), app],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=open(os.environ.get("WS_LOAD_LOG", os.devnull), "a"),  # noqa: SIM115
    )


def wait_for_port(port: int) -> None:
    for _ in range(150):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.2)


def check_log(table_ids: list[int]) -> dict[str, int]:
    from django.db.models import Count

    from studyapp.tables.models import Turn

    turns = Turn.objects.filter(table_id__in=table_ids)
    gaps = 0
    for table_id in table_ids:
        seqs = list(turns.filter(table_id=table_id).values_list("seq", flat=True))
        gaps += len(seqs) and (max(seqs) + 1 - len(seqs))
    questions = turns.filter(event__type="question").values("event__text")
    repeated = questions.annotate(n=Count("id")).filter(n__gt=1).count()
    return {"turns": turns.count(), "seq_gaps": gaps, "repeated_moves": repeated}


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def main() -> None:
    args = parse_args()
    if args.mode == "study":
        from benchmarks.ws_study import main as study_main

        study_main(args)
        return
    env = server_env(args)
    os.environ.update(env)
    pairs = (args.clients + 1) // 2
    tables = prepare(pairs)
    ports = [free_port() for _ in range(args.servers)]
    servers = [start_server(port, env) for port in ports]
    try:
        for port in ports:
            wait_for_port(port)
        clients = []
        for table_id, questioner, oracle in tables:
            port = ports[table_id % len(ports)]  # both seats of a table on one server
            url = f"ws://127.0.0.1:{port}/ws/tables/{table_id}/"
            origin = f"http://127.0.0.1:{port}"
            clients.append(Client(url, origin, questioner, "questioner", f"t{table_id}"))
            clients.append(Client(url, origin, oracle, "oracle", f"t{table_id}"))
        server_cpu = sum(cpu_seconds(server.pid) for server in servers)
        client_cpu = own_cpu_seconds()
        started = time.perf_counter()
        elapsed = asyncio.run(run_clients(clients, args.seconds, args.interval, args.lockstep))
        client_cpu = own_cpu_seconds() - client_cpu
        time.sleep(1.0)  # let the last commits land before reading the log
        server_cpu = sum(cpu_seconds(server.pid) for server in servers) - server_cpu
        load_avg = os.getloadavg()[0]
    finally:
        for server in servers:
            server.terminate()
        for server in servers:
            server.wait(timeout=10)
    log = check_log([t[0] for t in tables])
    latencies_ms = [x * 1000 for c in clients for _, x in c.latencies]
    steady_from = started + args.warmup
    steady_ms = [x * 1000 for c in clients for at, x in c.latencies if at >= steady_from]
    sent = sum(c.sent for c in clients)
    p95 = percentile(latencies_ms, 0.95)
    print(
        json.dumps(
            {
                "clients": len(clients),
                "servers": len(servers),
                "lockstep": args.lockstep,
                "seconds": round(elapsed, 1),
                "moves_sent": sent,
                "moves_per_s": round(len(latencies_ms) / elapsed, 1),
                "p50_ms": round(percentile(latencies_ms, 0.50), 1),
                "p95_ms": round(p95, 1),
                "p99_ms": round(percentile(latencies_ms, 0.99), 1),
                "mean_ms": round(statistics.fmean(latencies_ms), 1) if latencies_ms else None,
                "steady_p50_ms": round(percentile(steady_ms, 0.50), 1),
                "steady_p95_ms": round(percentile(steady_ms, 0.95), 1),
                "steady_p99_ms": round(percentile(steady_ms, 0.99), 1),
                "server_cpu_s": round(server_cpu, 1),
                "server_cpu_ms_per_move": round(1000 * server_cpu / max(sent, 1), 2),
                "client_cpu_s": round(client_cpu, 1),
                "load_avg": round(load_avg, 2),
                "turns_logged": log["turns"],
                "lost_turns": sent - log["turns"],
                "duplicated_turns": log["repeated_moves"],
                "seq_gaps": log["seq_gaps"],
                "unanswered_at_end": sum(c.unanswered for c in clients),
                "target_p95_ms": TARGET_P95_MS,
                "p95_ratio_to_target": round(p95 / TARGET_P95_MS, 2),
            }
        )
    )


if __name__ == "__main__":
    main()
