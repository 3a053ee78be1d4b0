"""Kill the Celery worker in the middle of agent turns, start it again, check every table, as JSON.

Agent-only tables (Twenty Questions and Who is Undercover) are created while no worker runs, so
their first agent turns wait in the Redis broker. A worker starts, is killed with SIGKILL (the
whole process group, children included) part way through, and a fresh worker starts. Its
``worker_ready`` signal resumes every open table from its log; a task that died with the worker is
superseded, and if the broker delivers it again the seq check and the unique key refuse it.
Pass: every table finished, ``seq`` without gaps, and the log replays under the rules (a turn
played twice would break the replay).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/web REDIS_URL=redis://127.0.0.1:6379/4 \\
        .venv/bin/python benchmarks/worker_crash.py [--tables 40] [--kill-after 3]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, default=40)
    parser.add_argument("--kill-after", type=float, default=5.0, help="seconds before SIGKILL")
    parser.add_argument("--timeout", type=float, default=240.0, help="seconds to wait for the end")
    parser.add_argument("--database-url", default=os.environ.get("DATABASE_URL", ""))
    parser.add_argument("--redis-url", default=os.environ.get("REDIS_URL", ""))
    args = parser.parse_args()
    if not args.database_url or not args.redis_url.startswith("redis"):
        parser.error("give a database and Redis: --database-url/--redis-url or the env variables")
    return args


def start_worker(env: dict[str, str], log: Path) -> subprocess.Popen:
    celery = Path(sys.executable).with_name("celery")
    return subprocess.Popen(
        [str(celery), "-A", "studyapp", "worker", "-l", "warning", "--concurrency", "2"],
        cwd=ROOT,
        env=env,
        stdout=open(log, "a"),  # noqa: SIM115
        stderr=subprocess.STDOUT,
        start_new_session=True,  # its own process group, so the kill takes the children too
    )


def main() -> None:
    args = parse_args()
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "studyapp.settings",
        "DATABASE_URL": args.database_url,
        "REDIS_URL": args.redis_url,
        "CELERY_TASK_ALWAYS_EAGER": "false",
        "DEBUG": "false",
        "SECRET_KEY": "benchmark-only",
    }
    os.environ.update(env)
    import django

    django.setup()
    from django.core.management import call_command

    from studyapp.celery import app
    from studyapp.tables import services
    from studyapp.tables.models import Table, Turn

    call_command("migrate", verbosity=0)
    app.control.purge()  # tasks left over from earlier runs
    table_ids = []
    for i in range(args.tables):
        if i % 2:
            seats = [{"kind": "agent", "agent_spec": "offline:kb"}] * 5
            table = services.create_table("undercover", None, seats, seed=i)
        else:
            seats = [
                {"kind": "agent", "agent_spec": "offline:infogain"},
                {"kind": "agent", "agent_spec": "offline:kb"},
            ]
            table = services.create_table("twenty-questions", None, seats, seed=i)
        table_ids.append(table.pk)
    tables = Table.objects.filter(pk__in=table_ids)

    log = Path("/tmp") / f"worker_crash_{os.getpid()}.log"
    started = time.monotonic()
    worker = start_worker(env, log)
    time.sleep(args.kill_after)
    before_kill = Turn.objects.filter(table_id__in=table_ids).count()
    os.killpg(worker.pid, signal.SIGKILL)
    worker.wait()
    open_at_kill = tables.filter(status=Table.Status.PLAYING).count()
    worker = start_worker(env, log)
    try:
        deadline = time.monotonic() + args.timeout
        while tables.filter(status=Table.Status.PLAYING).exists() and time.monotonic() < deadline:
            time.sleep(0.5)
    finally:
        os.killpg(worker.pid, signal.SIGTERM)
        worker.wait(timeout=30)

    missing = duplicated = unfinished = 0
    for table in tables:
        snap = services.table_state(table)
        seqs = list(Turn.objects.filter(table=table).values_list("seq", flat=True))
        missing += len(seqs) and (max(seqs) + 1 - len(seqs))
        unfinished += not snap.is_over
        duplicated += len(seqs) - len(set(seqs))
    print(
        json.dumps(
            {
                "tables": len(table_ids),
                "turns_before_kill": before_kill,
                "tables_open_at_kill": open_at_kill,
                "turns_total": Turn.objects.filter(table_id__in=table_ids).count(),
                "unfinished_tables": unfinished,
                "missing_turns": missing,
                "duplicated_turns": duplicated,
                "seconds": round(time.monotonic() - started, 1),
                "ok": unfinished == 0 and missing == 0 and duplicated == 0 and open_at_kill > 0,
            }
        )
    )


if __name__ == "__main__":
    main()
