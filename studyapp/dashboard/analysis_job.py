"""The dashboard's analysis job: computed off the request path, kept until the data changes.

A *scope* is ``study:<slug>`` or ``tables`` (the games outside studies). Its *data version* is a
handful of cheap aggregates (the newest turn and table ids, finished tables, participants and
withdrawals, finished experiment jobs), so a page learns in milliseconds whether its cached result
still holds. When it does not, the page shows the last result at once (marked "updating") and a
job recomputes it: a Celery task in production, or, in the embedded mode, a thread of the server
process, as pipeline jobs run (inline when there is no server: a test, a command).

The job builds the games frame chunk by chunk (:func:`studyapp.dashboard.records.study_games`),
calls :func:`analysis.summary.summarize` (the one computation every path shares), and writes the
tables, the figures (PNG, SVG, PDF and the data behind each as CSV) into
``MEDIA_ROOT/analysis/<scope>/<version>/``; the page only reads that folder and the payload.

The computation is claimed on its ``AnalysisResult`` row as a pipeline job is on its ``Job`` row
(:mod:`studyapp.claims`, rows): a page's claim stamps ``claimed_at`` and ``heartbeat_at``, so one
poll of many queues it; the job beats ``heartbeat_at`` from a thread while it runs; a queued or
running computation silent for ``ANALYSIS_STALE_SECONDS`` lost its process and is claimed again.
"""

from __future__ import annotations

import hashlib
import shutil
import time
import traceback
from pathlib import Path
from typing import Any

import pandas as pd
from django.conf import settings
from django.db.models import Count, Max, Q, QuerySet
from django.utils import timezone

from analysis import metrics, report
from analysis.plots import save_figure
from analysis.summary import Summary, summarize
from studyapp import claims, dispatch
from studyapp.dashboard.models import AnalysisResult
from studyapp.dashboard.records import agent_games, people_outside, study_games
from studyapp.participants.models import Participant, Study
from studyapp.pipelines.models import Job
from studyapp.tables.models import Table, Turn

TABLES = "tables"


def scope_of(slug: str | None) -> str:
    return TABLES if slug is None else f"study:{slug}"


def folder_name(scope: str) -> str:
    return scope.replace(":", "-")


def data_version(scope: str) -> str:
    """Cheap aggregates that change whenever the scope's games, people or model arm change."""
    tables = Table.objects.aggregate(
        last=Max("pk"), done=Count("pk", filter=Q(status=Table.Status.FINISHED))
    )
    turn = Turn.objects.aggregate(last=Max("pk"))["last"]
    parts = [f"t{turn or 0}", f"g{tables['last'] or 0}", f"f{tables['done']}"]
    if scope.startswith("study:"):
        slug = scope.partition(":")[2]
        people = Participant.objects.filter(study__slug=slug).aggregate(
            n=Count("pk"),
            w=Count("pk", filter=Q(status=Participant.Status.WITHDRAWN)),
            r=Max("rounds_finished"),
        )
        jobs = Job.objects.filter(kind="experiment", parameters__study=slug)
        done = jobs.exclude(status__in=[Job.Status.QUEUED, Job.Status.RUNNING]).count()
        parts += [f"p{people['n']}", f"w{people['w']}", f"r{people['r'] or 0}", f"j{done}"]
    return hashlib.sha1("-".join(parts).encode()).hexdigest()[:16]


def result_dir(scope: str, version: str) -> Path:
    return Path(settings.MEDIA_ROOT) / "analysis" / folder_name(scope) / version


def current(scope: str) -> tuple[AnalysisResult, bool]:
    """The scope's cached result and whether it matches the data; starts a computation when it
    does not and none is under way for this version."""
    version = data_version(scope)
    result, _ = AnalysisResult.objects.get_or_create(scope=scope)
    fresh = result.version == version and result.status == AnalysisResult.Status.DONE
    if not fresh and not _under_way(result) and not failed_for(result, version):
        request_computation(result, version)
        result.refresh_from_db()
    return result, fresh


def failed_for(result: AnalysisResult, version: str) -> bool:
    """The computation for this very data failed, not long ago: the page shows the failure and
    its reason, and it is not queued again on every visit (it would only fail again: a folder it
    cannot write, say). New data, or ``ANALYSIS_STALE_SECONDS`` later, tries again."""
    recent = not claims.is_stale(result.heartbeat_at, settings.ANALYSIS_STALE_SECONDS)
    return result.status == AnalysisResult.Status.FAILED and result.wanted == version and recent


def _under_way(result: AnalysisResult) -> bool:
    """A computation is queued or running and not silent for long (a computation silent for
    ``ANALYSIS_STALE_SECONDS`` lost its process, and is started again). One at a time per scope:
    while games keep landing, the next visit after it ends starts the next one."""
    requested = bool(result.wanted)  # a row just created asked for nothing yet
    busy = requested and result.status in (
        AnalysisResult.Status.QUEUED,
        AnalysisResult.Status.RUNNING,
    )
    recent = not claims.is_stale(result.heartbeat_at, settings.ANALYSIS_STALE_SECONDS)
    return busy and recent


def request_computation(result: AnalysisResult, version: str) -> None:
    """Claim the computation (the row still holds the claim this visit read: one visit of many
    queues it) and hand it to the dispatcher. The claim is a new ``claimed_at``, and it is the
    computation's first sign of life (``heartbeat_at``)."""
    now = timezone.now()
    claimed = claims.claim_row(
        AnalysisResult.objects.filter(pk=result.pk, claimed_at=result.claimed_at),
        wanted=version,
        status=AnalysisResult.Status.QUEUED,
        progress=0.0,
        message="queued",
        claimed_at=now,
        heartbeat_at=now,
        updated_at=now,
    )
    if claimed:
        enqueue(result.scope, version)


def enqueue(scope: str, version: str) -> None:
    """Hand the computation to the one dispatcher (:mod:`studyapp.dispatch`; see the module)."""
    from studyapp.dashboard.tasks import compute_analysis  # Celery's pattern: tasks imports us

    dispatch.send(compute_analysis, (scope, version), own_thread=f"analysis-{scope}")


def _write(rows: QuerySet, **changes: Any) -> bool:
    """Write the claim holder's row: every write is a sign of life, and ``updated_at`` is set
    (``update()`` never sets an ``auto_now`` field)."""
    now = timezone.now()
    return claims.beat_row(rows, updated_at=now, **changes)


def heartbeat(rows: QuerySet, scope: str) -> claims.Heartbeat:
    """Beats the claim's heart while this process computes, as a pipeline job's does
    (:func:`studyapp.pipelines.jobs.heartbeat`): every ``JOB_HEARTBEAT_SECONDS``, or a quarter of
    ``ANALYSIS_STALE_SECONDS`` when that is shorter, so a long computation is never taken as lost."""
    interval = min(settings.JOB_HEARTBEAT_SECONDS, settings.ANALYSIS_STALE_SECONDS / 4)
    return claims.Heartbeat(
        lambda: claims.beat_row(rows), interval, name=f"analysis-{scope}-heartbeat"
    )


def compute(scope: str, version: str | None = None) -> AnalysisResult:
    """Compute the scope's summary, figures and files; store them as the result of ``version``.
    Only while the claim this run found holds: a run whose claim was taken over (it went silent
    past the limit) writes nothing to the row."""
    version = version or data_version(scope)
    started = time.perf_counter()
    claim = AnalysisResult.objects.filter(scope=scope).values_list("claimed_at", flat=True).first()
    mine = AnalysisResult.objects.filter(scope=scope, claimed_at=claim)

    def progress(fraction: float, message: str) -> None:
        _write(mine, status=AnalysisResult.Status.RUNNING, progress=fraction, message=message)

    progress(0.05, "reading games")
    try:
        with heartbeat(mine, scope):
            outside: dict[str, int] = {}
            if scope == TABLES:
                games, title, allow = agent_games(), "Tables outside studies", False
            else:
                study = Study.objects.get(slug=scope.partition(":")[2])
                games, title, allow = study_games(study), study.title, False
                outside = people_outside(study)  # pilots and the withdrawn: not in the frame
            progress(0.5, f"{len(games)} games read; computing curves and tables")
            summary = summarize(games, allow_mixed=allow, also_left_out=outside)
            folder = result_dir(scope, version)
            if folder.exists():
                shutil.rmtree(folder)
            report.write_tables(summary, folder, report.voided_games(games))
            progress(0.7, "drawing figures")
            names, keys = [], {}
            for stem, (figure, data) in report.figures(summary).items():
                written = save_figure(figure, folder / stem, data)
                names.append(stem)
                keys[stem] = figure_key(written[-1])
            payload = page_payload(summary, games, title, names)
            payload["figure_keys"] = keys
            previous = AnalysisResult.objects.get(scope=scope).version
            _write(
                mine,
                version=version,
                status=AnalysisResult.Status.DONE,
                progress=1.0,
                message="",
                payload=payload,
                seconds=round(time.perf_counter() - started, 3),
            )
        if previous and previous != version:
            shutil.rmtree(result_dir(scope, previous), ignore_errors=True)
    except Exception as err:  # the page says what failed; the last good payload stays
        _write(
            mine,
            status=AnalysisResult.Status.FAILED,
            message=f"{type(err).__name__}: {err}"[:500],
        )
        traceback.print_exc()
    return AnalysisResult.objects.get(scope=scope)


def figure_key(data: Path) -> str:
    """What a figure draws, as a short hash of its data file: the figure's URLs carry it, so a
    page never shows a figure older than its own tables (a browser keeps an image per URL)."""
    return hashlib.sha256(data.read_bytes()).hexdigest()[:16]


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """JSON-safe rows: NaN and NA become None."""
    clean = frame.astype(object).where(frame.notna(), None)
    return clean.to_dict("records")


def _count(games: pd.DataFrame, flag: str) -> int:
    return int(games[flag].fillna(False).astype(bool).sum()) if flag in games else 0


def page_payload(
    summary: Summary, games: pd.DataFrame, title: str, figures: list[str]
) -> dict[str, Any]:
    people = summary.participants
    visitors = games[(games["player_kind"] == "human") & (games["player"] == "visitors")]
    with_people = metrics.people_tables(games)
    return {
        "title": title,
        "games": int(games["table"].nunique()) if len(games) else 0,
        # People's games and the model arm's apart: one count of both would mix populations.
        "people_games": int(games.loc[with_people, "table"].nunique()) if len(games) else 0,
        "agent_games": int(games.loc[~with_people, "table"].nunique()) if len(games) else 0,
        "scored": summary.scored,
        "left_out": summary.games - summary.scored,
        # why, per reason (metrics.scored): a failed answering seat, a person's seat taken over
        "left_out_failed": _count(games, "oracle_failed"),
        "left_out_taken_over": _count(games, "taken_over"),
        "participants": _records(people),
        "groups": bool(len(people)) and bool((people["group"] != "").all()),
        "settings_table": report.table_html(summary.table, summary.differences)
        if len(summary.table)
        else "",
        "differences": _records(summary.differences),
        "win_rates": _records(summary.win_rates),
        "problems": summary.problems,
        "mixed": summary.mixed,
        "reference": summary.reference,
        "figures": figures,
        "models": sorted(set(summary.curves["player"])) if len(summary.curves) else [],
        "visitor_games": len(visitors),
    }
