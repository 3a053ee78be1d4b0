"""Researcher analysis pages: per study (and for tables played outside studies) the learning
curves, the settings table and downloads of the pseudonymised frames.

Everything is computed by :mod:`analysis` from the records of :mod:`studyapp.dashboard.records`;
these views only pick the frames, call it and hand back HTML, images or a zip.
"""

from __future__ import annotations

import io
import tempfile
import zipfile
from pathlib import Path

import pandas as pd
from django.contrib.admin.views.decorators import staff_member_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.utils.safestring import mark_safe

from analysis import metrics, report
from analysis.export import FORMATS, export_frames
from studyapp.dashboard.records import agent_frames, export_docs, study_frames
from studyapp.participants.models import Study

FIGURES = {"humans": report.human_figure, "cumulative": report.cumulative_figure}
IMAGE_TYPES = {"png": "image/png", "svg": "image/svg+xml"}


def _frames(slug: str | None) -> tuple[str, dict[str, pd.DataFrame]]:
    """The page title and the frames of a study (by slug) or of the tables outside studies."""
    if slug is None:
        return "Tables outside studies", agent_frames()
    study = get_object_or_404(Study, slug=slug)
    return study.title, study_frames(study)


def _url(name: str, slug: str | None, **kwargs: str) -> str:
    if slug is None:
        return reverse(f"dashboard:analysis_tables_{name}", kwargs=kwargs)
    return reverse(f"dashboard:analysis_study_{name}", kwargs={"slug": slug, **kwargs})


@staff_member_required
def index(request: HttpRequest) -> HttpResponse:
    studies = Study.objects.order_by("-created_at")
    return render(request, "dashboard/analysis_index.html", {"studies": studies})


@staff_member_required
def page(request: HttpRequest, slug: str | None = None) -> HttpResponse:
    title, frames = _frames(slug)
    games = frames["games"]
    agents = games[games["player_kind"] != "human"]
    figures = []
    for game in sorted(games["game"].unique()):
        kinds = []
        if (games[games["game"] == game]["player_kind"] == "human").any():
            kinds.append("humans")
        if (agents[agents["game"] == game]["setting"] == "cumulative").any():
            kinds.append("cumulative")
        figures += [
            {
                "title": f"{kind.capitalize()}: {report.GAME_LABELS.get(game, game)}",
                "png": _url("figure", slug, kind=kind, game=game, ext="png"),
                "svg": _url("figure", slug, kind=kind, game=game, ext="svg"),
            }
            for kind in kinds
        ]
    context = {
        "title": title,
        "games_count": games["table"].nunique() if len(games) else 0,  # a row per seat
        "participants": _participant_rows(games[games["player_kind"] == "human"]),
        "settings_table": mark_safe(report.table_html(metrics.settings_table(agents)))
        if len(agents)
        else "",
        "win_rates": metrics.win_rates(games).to_dict("records"),
        "reference": metrics.reference_reward(games),
        "figures": figures,
        "downloads": [(f, _url("download", slug, format=f)) for f in FORMATS],
    }
    return render(request, "dashboard/analysis.html", context)


def _participant_rows(humans: pd.DataFrame) -> list[dict]:
    """Per participant: rounds, total and final cumulative reward, variance and its group."""
    if humans.empty:
        return []
    curves = metrics.player_curves(humans).groupby(["game", "player"]).last()
    groups = metrics.variance_groups(humans).set_index(["game", "player"])
    totals = humans.groupby(["game", "player"])["reward"].agg(rounds="size", total="sum")
    table = totals.join(curves["R"]).join(groups)
    return table.reset_index().to_dict("records")


@staff_member_required
def figure(
    request: HttpRequest, kind: str, game: str, ext: str, slug: str | None = None
) -> HttpResponse:
    if kind not in FIGURES or ext not in IMAGE_TYPES:
        raise Http404("no such figure")
    _, frames = _frames(slug)
    fig = FIGURES[kind](frames["games"], game)
    if fig is None:
        raise Http404("no data for this figure yet")
    buffer = io.BytesIO()
    fig.savefig(buffer, format=ext, dpi=120)
    return HttpResponse(buffer.getvalue(), content_type=IMAGE_TYPES[ext])


@staff_member_required
def download(request: HttpRequest, format: str, slug: str | None = None) -> HttpResponse:
    """A zip of the frames in ``format`` with their README and schema, as ``export_study`` writes."""
    if format not in FORMATS:
        raise Http404("no such format")
    title, frames = _frames(slug)
    buffer = io.BytesIO()
    with tempfile.TemporaryDirectory() as folder, zipfile.ZipFile(buffer, "w") as archive:
        for path in export_frames(frames, folder, format, docs=export_docs(), title=title):
            archive.write(path, Path(path).name)
    name = f"{slug or 'tables'}-{format}.zip"
    response = HttpResponse(buffer.getvalue(), content_type="application/zip")
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response
