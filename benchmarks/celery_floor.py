"""The Celery round trip alone, for ``benchmarks/ws_load.py --mode study --celery-floor``: what an
agent's turn costs before the agent does anything.

A task with ``take_agent_turn``'s options (acknowledged late) that does nothing is sent through
:func:`studyapp.dispatch.send`, with the agents' pause as its countdown, at the rate at which the
study phase committed agent turns and for as long, to a worker started as the study's was (same
pool, concurrency, niceness and flags). Figures: the sender's CPU per send (daphne sends a
person's move's agent turn the same way) and the worker's CPU per task (its main process:
receiving, the countdown, the hand-over to a pool process and the acknowledgement; the pool
process: running a task that returns at once), each also against the floor's CPU per move.
"""

from __future__ import annotations

import time
from typing import Any

from celery import shared_task

# kombu's Redis transport keeps a delivered, unacknowledged message in this hash until it is acked
UNACKED = "unacked"


@shared_task(acks_late=True)
def nothing(table_id: int, seq: int, lease: str = "") -> str:
    """``take_agent_turn``'s signature and options; no table, no lease, no agent."""
    return "nothing"


def measure(
    env: dict[str, str], args: Any, rate: float, start_worker: Any, tree_cpu: Any
) -> dict[str, float]:
    """Send ``rate`` tasks a second for ``args.seconds`` and wait until the worker has acknowledged
    every one: CPU per send (this process) and per task (the worker and its pool processes)."""
    import redis

    from studyapp import dispatch
    from studyapp.celery import app

    app.control.purge()
    broker = redis.Redis.from_url(env["REDIS_URL"])
    worker = start_worker(
        env, args.pool, args.concurrency, args.worker_nice, include="benchmarks.celery_floor"
    )
    try:
        time.sleep(3)  # the worker joins the queue, as in the study phase
        count = max(1, int(rate * args.seconds))
        at_start = tree_cpu(worker.pid)
        sending = 0.0
        start = time.monotonic()
        for i in range(count):
            pause = start + i / rate - time.monotonic()
            if pause > 0:
                time.sleep(pause)
            before = time.process_time()
            dispatch.send(nothing, (0, i), {"lease": f"bench:{i}"}, delay=args.agent_delay)
            sending += time.process_time() - before
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and (broker.llen("celery") or broker.hlen(UNACKED)):
            time.sleep(0.1)
        left = broker.llen("celery") + broker.hlen(UNACKED)
        time.sleep(1.0)  # as the study phase: its window ends a second after the last move
        work = tree_cpu(worker.pid) - at_start
    finally:
        worker.terminate()
        worker.wait(timeout=30)
    return {
        "tasks": count,
        "tasks_per_s": round(rate, 1),
        "not_done": left,
        "send_cpu_ms_per_task": round(1000 * sending / count, 3),
        "worker_cpu_ms_per_task": round(1000 * work / count, 3),
    }


def against_floor(celery: dict[str, float], study: dict, floor_ms: float) -> dict[str, float]:
    """What the round trip alone takes of the 2x budget: per agent turn against the floor's CPU
    per move, and per committed turn of the study phase (its mix of people's moves and agents'
    turns), which is the unit of ``cpu_ratio_to_floor.server_per_turn``."""
    per_task = celery["send_cpu_ms_per_task"] + celery["worker_cpu_ms_per_task"]
    agent_share = study["agent_turns_logged"] / max(study["turns_logged"], 1)
    return {
        "per_agent_turn": round(per_task / max(floor_ms, 0.001), 2),
        "per_committed_turn": round(per_task * agent_share / max(floor_ms, 0.001), 2),
    }
