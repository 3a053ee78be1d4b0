"""``benchmarks/ws_load.py --mode study``: what a real study does, against the floor, as JSON.

Study phase: half the sockets ask at Twenty Questions tables whose oracle is an agent, the rest sit
two by two at Who is Undercover tables with three agents; every agent turn runs as a step on
``--steps`` executors (``manage.py run_steps``; ``--workers`` Celery workers beside them, as in
production, for batch work); daphne (``--servers`` processes), Redis and PostgreSQL as in
production. Each person moves when their board asks for a move, at most once per ``--interval``;
their first moves are spread over the first ``--ramp`` seconds (people sit down independently;
``--ramp 1`` starts everyone within one second, the burst).
Latency: from sending a move to the first frame showing the next ``seq`` (the person's own move
broadcast back), as in the human-only mode.

Floor phase, same run, same daphne, Redis and PostgreSQL: ``benchmarks/floor_asgi.py``, a consumer
that does one INSERT and one group send per move, played by the same number of sockets in pairs.

Afterwards: lost turns (moves the server acknowledged that are not in the log), duplicated turns
(a person's move text logged twice, or seq gaps), server CPU per move (daphne processes and
workers), the ratio of the study's p95 to the floor's, and ``cpu_ratio_to_floor``: the study's
CPU against the floor's per person's move (daphne), per committed turn (daphne: a person's move
also sets agents moving, whose turns daphne broadcasts too) and per committed turn (daphne and
the workers, whose share is mostly the agents' own turns: building the agent, its move, the
board of every person at the table).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/web REDIS_URL=redis://127.0.0.1:6379/4 \\
        .venv/bin/python benchmarks/ws_load.py --mode study --clients 200 --seconds 30 \\
        --servers 2 --workers 1
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from benchmarks.ws_load import (
    SEQ,
    TARGET_P95_MS,
    cpu_seconds,
    free_port,
    own_cpu_seconds,
    paced,
    percentile,
    start_server,
    wait_for_port,
)

ROOT = Path(__file__).resolve().parent.parent
STATUS = re.compile(r'data-status="(\w+)"')
TURN = re.compile(r'data-turn="(\d)"')
TARGET = re.compile(r'name="target" value="(\d+)"')
REFUSED = 'id="move-error"'  # the board's reason for a refused move


class Person:
    """One socket. ``wants`` says from a frame whether it is this socket's move, and what."""

    def __init__(self, url: str, origin: str, key: str, name: str, kind: str) -> None:
        self.url, self.origin, self.key, self.name, self.kind = url, origin, key, name, kind
        self.latencies: list[float] = []
        self.sent_at: list[float] = []  # when each measured move was sent, after the start
        self.sent = self.rejected = self.index = 0

    def wants(self, frame: str, seq: int) -> dict | None:
        if self.kind == "floor":
            turn = TURN.search(frame)
            if turn and int(turn[1]) == self.index:
                return {"seq": seq, "text": f"{self.name} move {self.sent}"}
            return None
        if 'id="question-text"' in frame:
            return {"type": "question", "text": f"Is it alive? ({self.name} move {self.sent})"}
        if 'id="clue-text"' in frame:
            return {"type": "clue", "text": f"a clue from {self.name}, number {self.sent}"}
        targets = TARGET.findall(frame)
        if targets:
            return {"type": "vote", "target": int(targets[0])}
        return None

    def asked_again(self, frame: str, seq: int, waiting: tuple) -> bool:
        """A newer frame that still asks for the move just sent: in a simultaneous phase
        (Undercover's votes) another seat's move took the next ``seq`` first, so this frame is
        not the broadcast of ours."""
        if self.kind == "floor":
            return False  # two sockets in strict turns
        again = self.wants(frame, seq)
        return again is not None and again.get("type") == waiting[3]

    async def play(self, seating: Seating, seconds: float, interval: float, offset: float) -> None:
        from websockets.asyncio.client import connect

        headers = {"Cookie": f"sessionid={self.key}", "Origin": self.origin} if self.key else {}
        arrived = False
        try:
            async with connect(self.url, additional_headers=headers, open_timeout=60) as ws:
                frame = await ws.recv()  # the board a socket gets on connect
                seating.arrive()
                arrived = True
                await seating.ready.wait()
                until = seating.start + seconds
                last_move = time.monotonic() + offset - interval
                waiting: tuple[int, float, float, str] | None = None
                while True:
                    seq = int(SEQ.search(frame)[1])
                    if waiting and REFUSED in frame:
                        self.rejected += 1
                        waiting = None
                    elif (
                        waiting and seq >= waiting[0] and not self.asked_again(frame, seq, waiting)
                    ):
                        self.latencies.append(time.perf_counter() - waiting[1])
                        self.sent_at.append(waiting[2] - seating.start)
                        waiting = None
                    status = STATUS.search(frame)
                    if status and status[1] in ("finished", "aborted"):
                        break
                    move = None if waiting else self.wants(frame, seq)
                    if move is not None:
                        last_move = await paced(last_move, interval, until)
                        if last_move is None:
                            break
                        waiting = (seq + 1, time.perf_counter(), time.monotonic(), move.get("type"))
                        await ws.send(json.dumps(move))
                        self.sent += 1
                    try:
                        frame = await asyncio.wait_for(ws.recv(), until - time.monotonic())
                    except (TimeoutError, ValueError):
                        break
        finally:
            if not arrived:
                seating.arrive()


class Seating:
    """Every socket connects and gets its board before the clock starts: a study's people do not
    all connect in the same second, so the storm of connects is timed on its own (``connect_s``)
    and left out of the move latencies and the CPU per move."""

    def __init__(self, people: int, on_start: Any) -> None:
        self.left, self.on_start = people, on_start
        self.ready = asyncio.Event()
        self.began = self.start = time.monotonic()
        self.connect_s = 0.0

    def arrive(self) -> None:
        self.left -= 1
        if self.left == 0:
            self.connect_s = time.monotonic() - self.began
            self.on_start()
            self.start = time.monotonic()
            self.ready.set()


def prepare_study(clients: int, agent_delay: float) -> list[tuple[int, str, str]]:
    """Tables of a study: (table, session key, kind) per person."""
    from django.contrib.sessions.backends.db import SessionStore

    from games import get_engine
    from studyapp.tables import services

    def session() -> str:
        store = SessionStore()
        store.create()
        return store.session_key

    options = {"turn_deadline_seconds": 0, "agent_delay_seconds": agent_delay}
    people = []
    twenty = clients // 2
    for i in range(twenty):
        config = get_engine("twenty-questions").new_config(i)
        config["max_questions"] = 100000  # the table goes on for the whole run
        key = session()
        table = services.create_table(
            "twenty-questions",
            config,
            [{"kind": "human", "session_key": key}, {"kind": "agent", "agent_spec": "offline:kb"}],
            seed=i,
            **options,
        )
        people.append((table.pk, key, "twenty-questions"))
    for i in range((clients - twenty + 1) // 2):
        keys = [session(), session()]
        seats = [{"kind": "human", "session_key": key} for key in keys]
        seats += [{"kind": "agent", "agent_spec": "offline:kb"}] * 3
        table = services.create_table("undercover", None, seats, seed=i, **options)
        people += [(table.pk, key, "undercover") for key in keys]
    return people


def start_worker(
    env: dict[str, str], pool: str, concurrency: int, nice: int, include: str = ""
) -> subprocess.Popen:
    """A Celery worker as the Procfile starts one: at ``nice`` (the Procfile's WORKER_NICE),
    without gossip and mingle. ``include``: a module of tasks to load besides the site's."""
    celery = Path(sys.executable).with_name("celery")
    return subprocess.Popen(
        ["nice", "-n", str(nice), str(celery), "-A", "studyapp", "worker", "-l", "error"]
        + ["--pool", pool, "--concurrency", str(concurrency)]
        + ["--without-gossip", "--without-mingle"]
        + (["--include", include] if include else []),
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=open(os.environ.get("WS_LOAD_LOG", os.devnull), "a"),  # noqa: SIM115
        start_new_session=True,
    )


def start_steps(env: dict[str, str], name: str) -> subprocess.Popen:
    """A steps executor (agents' turns, deadlines, lobbies) as supervisord starts one
    (deploy/supervisord.conf)."""
    return subprocess.Popen(
        [sys.executable, "manage.py", "run_steps", "--no-resume", "--name", name],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=open(os.environ.get("WS_LOAD_LOG", os.devnull), "a"),  # noqa: SIM115
        start_new_session=True,
    )


def tree_cpu(pid: int) -> float:
    """CPU of a process and its children (a Celery worker's pool)."""
    total = cpu_seconds(pid)
    children = Path(f"/proc/{pid}/task/{pid}/children")
    if children.exists():
        for child in children.read_text().split():
            with contextlib.suppress(FileNotFoundError, ProcessLookupError):
                total += tree_cpu(int(child))
    return total


async def run(
    people: list[Person], seconds: float, interval: float, ramp: float, on_start: Any
) -> tuple[float, float]:
    """Seat everyone, then play for ``seconds``: the connect time and the time played. Each
    person's first move comes at a random point of the first ``ramp`` seconds."""
    seating = Seating(len(people), on_start)
    rng = random.Random(0)
    await asyncio.gather(
        *(p.play(seating, seconds, interval, rng.uniform(0, ramp)) for p in people),
        return_exceptions=True,
    )
    return seating.connect_s, time.monotonic() - seating.start


def by_period(people: list[Person], seconds: float) -> list[float]:
    """p95 of the moves sent in each ``seconds`` of the run, in order: where the time went."""
    periods: dict[int, list[float]] = {}
    for p in people:
        for x, at in zip(p.latencies, p.sent_at, strict=True):
            periods.setdefault(int(at // seconds), []).append(x * 1000)
    return [
        round(percentile(periods.get(i, []), 0.95), 1) for i in range(max(periods, default=-1) + 1)
    ]


def figures(people: list[Person], elapsed: float, cpu: float, warmup: float) -> dict:
    """Latencies of every move, and ``steady_*`` of the moves sent after the first ``warmup``
    seconds: at the start everyone's first move arrives within ``--ramp`` seconds (with
    ``--ramp 1``, a burst of one move per person in the first second, several times the rate at
    which people then move, and in the study phase each of those moves also sets an agent
    thinking)."""
    ms = [x * 1000 for p in people for x in p.latencies]
    steady = [
        x * 1000
        for p in people
        for x, at in zip(p.latencies, p.sent_at, strict=True)
        if at >= warmup
    ]
    sent = sum(p.sent for p in people)
    return {
        "sockets": len(people),
        "moves_sent": sent,
        "moves_per_s": round(len(ms) / elapsed, 1),
        "p50_ms": round(percentile(ms, 0.50), 1),
        "p95_ms": round(percentile(ms, 0.95), 1),
        "p99_ms": round(percentile(ms, 0.99), 1),
        "steady_p50_ms": round(percentile(steady, 0.50), 1),
        "steady_p95_ms": round(percentile(steady, 0.95), 1),
        "steady_p99_ms": round(percentile(steady, 0.99), 1),
        "server_cpu_s": round(cpu, 1),
        "server_cpu_ms_per_move": round(1000 * cpu / max(sent, 1), 2),
        "rejected": sum(p.rejected for p in people),
        "p95_ms_by_5s": by_period(people, 5.0),
        **{
            f"{kind}_p{q}_ms": round(percentile(sorted_ms, q / 100), 1)
            for kind in sorted({p.kind for p in people} - {"floor"})
            for sorted_ms in [[x * 1000 for p in people if p.kind == kind for x in p.latencies]]
            for q in (50, 95)
        },
    }


def phase(
    servers: list[subprocess.Popen],
    people: list[Person],
    args: argparse.Namespace,
    workers: tuple[subprocess.Popen, ...] = (),
) -> dict:
    """Play; ``server_cpu`` counts daphne and workers, ``daphne_cpu`` the web processes alone
    (the workers' share is mostly the agents' own thinking)."""
    at_start: dict[str, float] = {}

    def on_start() -> None:
        at_start["web"] = sum(tree_cpu(p.pid) for p in servers)
        at_start["work"] = sum(tree_cpu(p.pid) for p in workers)
        at_start["clients"] = own_cpu_seconds()
        at_start["machine"] = machine_cpu_seconds()
        at_start["wall"] = time.time()

    ramp = max(args.ramp, args.interval)
    connect_s, elapsed = asyncio.run(run(people, args.seconds, args.interval, ramp, on_start))
    clients = own_cpu_seconds() - at_start.get("clients", 0.0)
    machine = machine_cpu_seconds() - at_start.get("machine", 0.0)
    time.sleep(1.0)
    web = sum(tree_cpu(p.pid) for p in servers) - at_start.get("web", 0.0)
    work = sum(tree_cpu(p.pid) for p in workers) - at_start.get("work", 0.0)
    result = figures(people, elapsed, web + work, args.warmup)
    result["daphne_cpu_ms_per_move"] = round(1000 * web / max(result["moves_sent"], 1), 2)
    result["daphne_cpu_s"] = round(web, 2)
    # the wall-clock window the CPU figures cover, for counting the turns committed in it
    result["window"] = (at_start.get("wall", 0.0), time.time())
    result["worker_cpu_s"] = round(work, 1)
    result["connect_s"] = round(connect_s, 1)
    result["ramp_s"] = ramp
    result["client_cpu_s"] = round(clients, 1)
    # every process of the machine (PostgreSQL and Redis too), against the cores' capacity
    result["machine_busy"] = round(machine / (elapsed * (os.cpu_count() or 1)), 2)
    return result


def machine_cpu_seconds() -> float:
    """CPU time of the whole machine so far, all cores (Linux /proc/stat)."""
    fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]
    user, nice, system, idle, iowait, irq, softirq, steal = (int(f) for f in fields[:8])
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def stop(processes: list[subprocess.Popen]) -> None:
    for process in processes:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
    for process in processes:
        process.wait(timeout=30)


def study_log(
    people: list[tuple[int, str, str]], sent: int, rejected: int, window: tuple[float, float]
) -> dict:
    from datetime import UTC, datetime

    from studyapp.tables.models import Seat, Turn

    table_ids = sorted({table for table, _, _ in people})
    rows = list(
        Turn.objects.filter(table_id__in=table_ids).values_list("table_id", "seq", "seat", "event")
    )
    start, end = (datetime.fromtimestamp(at, UTC) for at in window)
    in_window = Turn.objects.filter(
        table_id__in=table_ids, created_at__gte=start, created_at__lte=end
    ).count()
    gaps = 0
    for table_id in table_ids:
        seqs = [seq for table, seq, _, _ in rows if table == table_id]
        gaps += len(seqs) and (max(seqs) + 1 - len(seqs))
    human = set(
        Seat.objects.filter(table_id__in=table_ids, kind=Seat.Kind.HUMAN).values_list(
            "table_id", "index"
        )
    )
    human_turns = sum(1 for table, _, seat, _ in rows if (table, seat) in human)
    texts = Counter(
        (table, event.get("text"))
        for table, _, seat, event in rows
        if event.get("type") in ("question", "clue") and (table, seat) in human
    )
    repeated = sum(1 for n in texts.values() if n > 1)
    return {
        "turns_logged": len(rows),
        "turns_in_cpu_window": in_window,
        "human_turns_logged": human_turns,
        "agent_turns_logged": len(rows) - human_turns,
        "lost_turns": max(0, sent - rejected - human_turns),
        "duplicated_turns": repeated + gaps,
    }


def forget_study(people: list[tuple[int, str, str]]) -> None:
    """Delete the run's tables and sessions: tables left "playing" would be picked up by the next
    run's worker at its start (``resume_tables`` schedules every open table), and each run would
    measure all the runs before it."""
    from django.contrib.sessions.models import Session

    from studyapp.tables.models import Table

    Table.objects.filter(pk__in={table for table, _, _ in people}).delete()
    Session.objects.filter(session_key__in=[key for _, key, _ in people]).delete()


def floor_log(rooms: int, sent: int) -> dict:
    from django.db import connection

    from benchmarks.floor_asgi import TABLE

    with connection.cursor() as cursor:
        cursor.execute(f"SELECT count(*), count(DISTINCT (room, seq)) FROM {TABLE}")
        rows, distinct = cursor.fetchone()
        cursor.execute(f"DROP TABLE {TABLE}")
    return {"rows": rows, "lost_turns": max(0, sent - rows), "duplicated_turns": rows - distinct}


def cpu_ratios(study: dict, floor: dict) -> dict:
    """The study's server CPU against the floor's, three ways. A floor move is one turn; in the
    study a person's move also sets agents moving, whose turns daphne broadcasts too: per person's
    move (daphne), per committed turn (daphne), per committed turn (daphne and the workers)."""
    turns = max(study["turns_in_cpu_window"], 1)
    floor_per_turn = 1000 * floor["daphne_cpu_s"] / max(floor["rows"], 1)
    per_turn = {
        "daphne_per_turn": 1000 * study["daphne_cpu_s"] / turns,
        "server_per_turn": 1000 * study["server_cpu_s"] / turns,
    }
    return {
        "daphne_per_move": round(
            study["daphne_cpu_ms_per_move"] / max(floor["daphne_cpu_ms_per_move"], 0.001), 2
        ),
        **{name: round(ms / max(floor_per_turn, 0.001), 2) for name, ms in per_turn.items()},
        "ms": {name: round(ms, 2) for name, ms in per_turn.items()},
        "floor_ms_per_turn": round(floor_per_turn, 2),
    }


def main(args: argparse.Namespace) -> None:
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "studyapp.settings",
        "DATABASE_URL": args.database_url,
        "REDIS_URL": args.redis_url,
        "DEBUG": "false",
        "SECRET_KEY": "benchmark-only",
        "ALLOWED_HOSTS": "127.0.0.1",
        "CELERY_TASK_ALWAYS_EAGER": "false",
        "PYTHONPATH": str(ROOT),
    }
    os.environ.update(env)
    import django

    django.setup()
    from django.core.management import call_command

    from studyapp.celery import app

    call_command("migrate", verbosity=0)
    app.control.purge()
    ports = [free_port() for _ in range(args.servers)]
    servers = [start_server(port, {**env}) for port in ports]
    workers = [
        start_worker(env, args.pool, args.concurrency, args.worker_nice)
        for _ in range(args.workers)
    ] + [start_steps(env, f"ws-study-steps-{n}") for n in range(args.steps)]
    tables: list[tuple[int, str, str]] = []
    try:
        for port in ports:
            wait_for_port(port)
        time.sleep(3)  # the workers join the queue
        tables = prepare_study(args.clients, args.agent_delay)
        people = []
        for table, key, kind in tables:
            port = ports[table % len(ports)]
            url = f"ws://127.0.0.1:{port}/ws/tables/{table}/"
            people.append(Person(url, f"http://127.0.0.1:{port}", key, f"t{table}{key[:4]}", kind))
        study = phase(servers, people, args, tuple(workers))
        window = study.pop("window")
        study["window_s"] = round(window[1] - window[0], 2)
        study.update(
            study_log(tables, study["moves_sent"], study["rejected"], window),
            servers=len(servers),
            workers=args.workers,
            steps_executors=args.steps,
        )
    finally:
        stop(workers)
        for server in servers:
            server.terminate()
            server.wait(timeout=10)
        forget_study(tables)

    from benchmarks.floor_asgi import create_table

    create_table()
    floor_ports = [free_port() for _ in range(args.servers)]
    floors = [start_server(port, env, "benchmarks.floor_asgi:application") for port in floor_ports]
    try:
        for port in floor_ports:
            wait_for_port(port)
        people = []
        rooms = (args.clients + 1) // 2
        for room in range(rooms):
            port = floor_ports[room % len(floor_ports)]
            for index in range(2):
                person = Person(f"ws://127.0.0.1:{port}/floor/{room}/", "", "", f"r{room}", "floor")
                person.index = index
                people.append(person)
        floor = phase(floors, people, args)
        floor.pop("window")
        floor.update(floor_log(rooms, floor["moves_sent"]), servers=len(floors))
    finally:
        for server in floors:
            server.terminate()
            server.wait(timeout=10)
    extra = {}
    if args.celery_floor:
        from benchmarks import celery_floor

        window = study["window_s"]
        rate = study["agent_turns_logged"] / max(window, 0.001)
        celery = celery_floor.measure(env, args, rate, start_worker, tree_cpu)
        floor_ms = cpu_ratios(study, floor)["floor_ms_per_turn"]
        extra["celery_floor"] = {
            **celery,
            "ratio_to_floor": celery_floor.against_floor(celery, study, floor_ms),
        }
    print(
        json.dumps(
            {
                "mode": "study",
                "seconds": args.seconds,
                "study": study,
                "floor": floor,
                "p95_ratio_to_floor": round(study["p95_ms"] / max(floor["p95_ms"], 0.001), 2),
                "steady_p95_ratio_to_floor": round(
                    study["steady_p95_ms"] / max(floor["steady_p95_ms"], 0.001), 2
                ),
                "target_p95_ms": TARGET_P95_MS,
                "cpu_ratio_to_floor": cpu_ratios(study, floor),
                **extra,
            }
        )
    )
