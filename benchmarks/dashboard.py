"""The study page and the study export as a researcher waits for them, with the database filled.

Fills the database named by ``DATABASE_URL`` (PostgreSQL for the real figures) with one study of
``--games`` finished Twenty Questions games (``--rounds`` per participant, ``--turns`` turns per game
on average) in batches (``bulk_create``), then measures through the real views (Django's test
client, a staff login):

- ``compute_s``: the background job that computes the study's cached result (figures, tables);
- ``first_byte_s``: the study page once the result is cached (the page never computes);
- ``whole_page_s``: the page plus every figure it shows;
- ``cold_first_byte_s``: the page while the first computation is still running (progress page);
- ``export_s`` and ``export_peak_rss_mb``: ``manage.py export_study`` in a child process (the
  memory of all its processes together: it writes the turns in a second one).

Targets (issue 14): first byte < 1 s, whole page < 2 s, export < 30 s and < 1.5 GB, at 100,000
games and 1,500,000 turns in PostgreSQL. Prints one JSON object.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench .venv/bin/python benchmarks/dashboard.py \\
        --games 100000 --turns 15
    .venv/bin/python benchmarks/dashboard.py --games 2000    # a quick look (SQLite under var/)

The study is refilled only when its game count differs (``--refill`` forces it).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "studyapp.settings")

SLUG = "bench-dashboard"
BATCH = 5000


def events_for(k: int) -> list[dict]:
    """A log in which the questioner names the word at question ``k`` (2k - 1 events)."""
    events = []
    for i in range(k - 1):
        events += [
            {"type": "question", "seat": 0, "text": f"Is it thing number {i}?"},
            {"type": "answer", "seat": 1, "answer": "No"},
        ]
    return events + [{"type": "question", "seat": 0, "text": "Is it an apple?"}]


def fill(games: int, rounds: int, turns: int, seed: int = 0) -> dict:
    from django.db import transaction
    from django.utils import timezone

    from games import get_engine
    from studyapp.participants.models import Participant, Round, Study
    from studyapp.tables.models import Seat, Table, Turn

    rng = random.Random(seed)
    started = time.perf_counter()
    config = get_engine("twenty-questions").new_config(0, answer="Apple")
    study = Study.objects.create(
        slug=SLUG, title="Benchmark study", rounds=rounds, consent_text="-"
    )
    people = games // rounds
    now = timezone.now()
    mean_k = (turns + 1) / 2  # 2k - 1 events on average
    turn_count = 0
    for first in range(0, people, BATCH // rounds):
        count = min(BATCH // rounds, people - first)
        with transaction.atomic():
            persons = Participant.objects.bulk_create(
                Participant(
                    study=study,
                    status=Participant.Status.FINISHED,
                    consent_version="1",
                    consented_at=now,
                    rounds_finished=rounds,
                )
                for _ in range(count)
            )
            tables = Table.objects.bulk_create(
                Table(
                    game="twenty-questions",
                    config=config,
                    status=Table.Status.FINISHED,
                    started_at=now,
                    finished_at=now,
                )
                for _ in range(count * rounds)
            )
            Seat.objects.bulk_create(
                Seat(table=table, index=index, **kind)
                for table in tables
                for index, kind in enumerate(
                    [
                        {"kind": "human", "session_key": "bench"},
                        {"kind": "agent", "agent_spec": "offline:kb"},
                    ]
                )
            )
            found = [max(1, min(20, round(rng.gauss(mean_k, 3)))) for _ in tables]
            Round.objects.bulk_create(
                Round(
                    participant=person,
                    number=number + 1,
                    table=tables[i * rounds + number],
                    reward=1 / math.log2(found[i * rounds + number] + 1),  # as the flow records
                    finished_at=now,
                )
                for i, person in enumerate(persons)
                for number in range(rounds)
            )
            batch = []
            for table, k in zip(tables, found, strict=True):
                for seq, event in enumerate(events_for(k)):
                    batch.append(
                        Turn(table=table, seq=seq, seat=event["seat"], event=event, created_at=now)
                    )
            Turn.objects.bulk_create(batch, batch_size=BATCH)
            turn_count += len(batch)
    return {
        "fill_s": round(time.perf_counter() - started, 1),
        "games": people * rounds,
        "turns": turn_count,
    }


def peak_rss_of_child(command: list[str]) -> tuple[float, float]:
    """Run ``command``: seconds taken and the peak of its memory, every process of it together
    (the export forks a second process), sampled every 50 ms from /proc."""
    started = time.perf_counter()
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL)
    peak_kb = 0
    while process.poll() is None:
        peak_kb = max(peak_kb, tree_rss_kb(process.pid))
        time.sleep(0.05)
    seconds = time.perf_counter() - started
    if process.returncode:
        raise subprocess.CalledProcessError(process.returncode, command)
    largest = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # one process's peak
    return seconds, max(peak_kb, largest) / 1024


def tree_rss_kb(pid: int) -> int:
    """Resident memory of a process and its descendants, in kB (0 once it is gone)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except (FileNotFoundError, ProcessLookupError):
        return 0
    rss = next(
        (int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS:")), 0
    )
    return rss + sum(tree_rss_kb(int(child)) for child in children)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--turns", type=int, default=15, help="mean turns per game")
    parser.add_argument("--refill", action="store_true")
    parser.add_argument("--skip-export", action="store_true")
    args = parser.parse_args()

    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    call_command("migrate", verbosity=0)
    from django.contrib.auth.models import User
    from django.test import Client

    from studyapp.dashboard import analysis_job
    from studyapp.dashboard.models import AnalysisResult
    from studyapp.participants.models import Round, Study

    out: dict = {"database": connection.vendor}
    study = Study.objects.filter(slug=SLUG).first()
    have = Round.objects.filter(participant__study=study).count() if study else 0
    if args.refill or have != args.games - args.games % args.rounds:
        if study is not None:
            from studyapp.tables.models import Table

            tables = list(
                Round.objects.filter(participant__study=study).values_list("table_id", flat=True)
            )
            Round.objects.filter(participant__study=study).delete()
            study.participants.all().delete()
            study.delete()
            Table.objects.filter(pk__in=tables).delete()
        out |= fill(args.games, args.rounds, args.turns)
    else:
        out |= {"games": have, "reused": True}
    scope = analysis_job.scope_of(SLUG)
    AnalysisResult.objects.filter(scope=scope).delete()

    User.objects.filter(username="bench-staff").delete()
    client = Client()
    client.force_login(User.objects.create_user("bench-staff", password="-", is_staff=True))
    url = f"/dashboard/analysis/study/{SLUG}/"

    # A running server has served pages before: the first request of a process imports the
    # URLconf and everything the views import (the figures' and model SDKs' modules, seconds),
    # which is not what a cold *analysis* costs.
    client.get("/dashboard/")
    # The first visit while a server computes: mark the computation as under way, as the
    # request that started it would, and time the page that shows its progress.
    AnalysisResult.objects.create(
        scope=scope, status=AnalysisResult.Status.RUNNING, wanted=analysis_job.data_version(scope)
    )
    started = time.perf_counter()
    cold = client.get(url)
    out["cold_first_byte_s"] = round(time.perf_counter() - started, 3)
    assert b"for the first time" in cold.content, "the cold page must show progress"

    started = time.perf_counter()
    analysis_job.compute(scope)
    out["compute_s"] = round(time.perf_counter() - started, 2)

    timings = []
    for _ in range(3):
        started = time.perf_counter()
        page = client.get(url)
        first = time.perf_counter() - started
        assert page.status_code == 200 and b"for the first time" not in page.content
        for src in re.findall(rb'<img src="([^"]+)"', page.content):
            response = client.get(src.decode())
            b"".join(response.streaming_content)
        timings.append((first, time.perf_counter() - started))
    out["first_byte_s"] = round(min(t[0] for t in timings), 3)
    out["whole_page_s"] = round(min(t[1] for t in timings), 3)
    out["page_bytes"] = len(page.content)

    if not args.skip_export:
        with tempfile.TemporaryDirectory() as folder:
            seconds, peak = peak_rss_of_child(
                [sys.executable, "manage.py", "export_study", SLUG, "--out", folder]
            )
            size = sum(p.stat().st_size for p in Path(folder).rglob("*") if p.is_file())
        out |= {
            "export_s": round(seconds, 1),
            "export_peak_rss_mb": round(peak),
            "export_mb": round(size / 1e6, 1),
        }
    targets = {"first_byte_s": 1.0, "whole_page_s": 2.0, "export_s": 30.0}
    out["targets_met"] = (
        all(out.get(k, 0) < v for k, v in targets.items())
        and out.get("export_peak_rss_mb", 0) < 1536
    )
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
