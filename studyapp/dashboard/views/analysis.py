"""Researcher analysis pages: per study (and for tables played outside studies) the study's figure
(people next to the model arm), the per-participant table, the settings table, downloads, and the
"Run the model arm" action.

Nothing is computed here: each page reads the cached result of :mod:`studyapp.dashboard.analysis_job`
(computed in a background job, keyed by the data's version) and the files it wrote. While the
first computation runs, the page shows its progress and polls (htmx) until the result is there.
"""

from __future__ import annotations

import mimetypes
import tempfile
import zipfile
from pathlib import Path
from typing import Any

import pandas as pd
from django.contrib import messages
from django.contrib.admin.views.decorators import staff_member_required
from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_POST

from analysis.export import FORMATS
from analysis.left_out import left_out_text
from analysis.plots import FORMATS as FIGURE_FORMATS
from games.agents import make_agent
from games.experience.context import SETTINGS
from games.llm.providers import PROVIDER_KINDS
from studyapp.dashboard import analysis_job
from studyapp.dashboard.exporting import export_study, export_tables
from studyapp.dashboard.models import AnalysisResult
from studyapp.dashboard.records import agent_tables, model_jobs
from studyapp.participants.arm_plan import arm_conditions, seat_plan
from studyapp.participants.models import Study
from studyapp.participants.pseudonyms import finished_policies
from studyapp.pipelines.checks import missing_credentials
from studyapp.pipelines.jobs import start_job

# The offline agents that can play the evaluated seat of each game's model arm, the first the
# default of the form; any model of a provider with a key can be named as well.
OFFLINE_ARM_AGENTS = {
    "twenty-questions": ("offline:infogain", "offline:random"),
    "undercover": ("offline:kb",),
}
ARM_ROLES = {"twenty-questions": "questioner", "undercover": "player"}
# Where the human-policy setting's text comes from: the shipped text, each finished
# participant's written policy (one job each), or one participant's (their public id).
SHIPPED_POLICY, EACH_POLICY = "shipped", "each"
MAX_ARM_JOBS = 60  # jobs one click may start
DEFAULT_ARM_SETTINGS = ("none", "cumulative")
ARM_SAMPLES = 3
MAX_ARM_SAMPLES = 10  # repeats of the study's sequence per model and setting


def _url(view: str, slug: str | None, **kwargs: str) -> str:
    if slug is None:
        return reverse(f"dashboard:analysis_tables_{view}", kwargs=kwargs)
    return reverse(f"dashboard:analysis_study_{view}", kwargs={"slug": slug, **kwargs})


@staff_member_required
def index(request: HttpRequest) -> HttpResponse:
    studies = Study.objects.order_by("-created_at")
    return render(request, "dashboard/analysis_index.html", {"studies": studies})


@staff_member_required
def page(request: HttpRequest, slug: str | None = None) -> HttpResponse:
    study = get_object_or_404(Study, slug=slug) if slug is not None else None
    result, fresh = analysis_job.current(analysis_job.scope_of(slug))
    payload = result.payload or {}
    context = {
        "study": study,
        "slug": slug,
        "title": study.title if study else "Tables outside studies",
        "result": result,
        "fresh": fresh,
        "ready": bool(payload),
        "payload": payload,
        "settings_table": mark_safe(payload.get("settings_table", "")),
        "figures": [
            {
                "stem": stem,
                "title": _figure_title(stem),
                "links": [
                    (ext.upper(), _figure_url(slug, f"{stem}.{ext}", key))
                    for ext in (*FIGURE_FORMATS, "csv")
                ],
                "png": _figure_url(slug, f"{stem}.png", key),
            }
            for stem in payload.get("figures", [])
            for key in [payload.get("figure_keys", {}).get(stem, result.version)]
        ],
        "people_left_out": people_left_out(result) if payload else "",
        "participants": with_status(study, payload.get("participants") or []),
        "tables_zip": _url("figure", slug, name="tables.zip"),
        "downloads": [(f, _url("download", slug, format=f)) for f in FORMATS],
        "poll": request.path,
    }
    if study is not None:
        context.update(arm_jobs_context(study))
        context["settings"] = SETTINGS
        choices = study_arm_choices(study)
        context["arm_choices"] = choices
        context["arm_models"] = choices[0] if choices else ""
        context["arm_settings"] = DEFAULT_ARM_SETTINGS
        context["people_policies"] = finished_policies(study)
    if request.htmx:
        return render(request, "dashboard/_analysis_body.html", context)
    return render(request, "dashboard/analysis.html", context)


def with_status(study: Study | None, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The participants table's rows, each with how the person's study ended (``status``, as
    the participants export says it: finished, dropped, screened, ...)."""
    if study is None or not rows:
        return rows
    players = {row.get("player") for row in rows}
    found = dict(
        study.participants.filter(public_id__in=players).values_list("public_id", "status")
    )
    return [{**row, "status": found.get(row.get("player"), "")} for row in rows]


def people_left_out(result: Any) -> str:
    """Who the result's curves and means leave out, in words ("2 screened, 1 pilot"): its
    ``people_left_out.csv`` (analysis.report.write_tables); '' when none or not written."""
    path = analysis_job.result_dir(result.scope, result.version) / "people_left_out.csv"
    if not path.is_file():
        return ""
    rows = pd.read_csv(path, dtype={"reason": str, "people": "Int64"})
    return left_out_text(dict(zip(rows["reason"], rows["people"].astype(int), strict=True)))


def arm_jobs_context(study: Study) -> dict[str, Any]:
    """The model arm's latest jobs, and whether any is still queued or running (the table then
    refreshes itself)."""
    jobs = list(model_jobs(study).order_by("-pk")[:20])
    return {"study": study, "jobs": jobs, "jobs_active": any(job.is_active for job in jobs)}


@staff_member_required
def arm_jobs(request: HttpRequest, slug: str) -> HttpResponse:
    """The model arm's job table alone: the study page polls it while a job is queued or
    running, so statuses and progress move without a reload."""
    study = get_object_or_404(Study, slug=slug)
    return render(request, "dashboard/_model_arm_jobs.html", arm_jobs_context(study))


def _figure_url(slug: str | None, name: str, key: str) -> str:
    """A figure's file, its URL keyed by what the figure draws (``?v=``: the hash of its data),
    so a new figure is a new URL and no browser shows one kept from before."""
    return f"{_url('figure', slug, name=name)}?v={key}"


def _figure_title(stem: str) -> str:
    kind, _, game = stem.partition("-")
    game = {"twenty-questions": "Twenty Questions", "undercover": "Who is Undercover"}.get(
        game, game
    )
    titles = {
        "study": "People by condition, and the model arm",
        "cumulative": "Models with and without experience",
        "roles": "Win rate by role",
        "rounds": "Win rate by role, round by round: people and model arm",
    }
    return f"{titles.get(kind, kind)}: {game}"


@staff_member_required
def figure(request: HttpRequest, name: str, slug: str | None = None) -> FileResponse:
    """A file of the cached result: a figure, its data, a table, or all tables as a zip."""
    if slug is not None:
        get_object_or_404(Study, slug=slug)
    scope = analysis_job.scope_of(slug)
    result = AnalysisResult.objects.filter(scope=scope).first()
    if result is None or not result.version or "/" in name or name.startswith("."):
        raise Http404("no such file")
    folder = analysis_job.result_dir(scope, result.version)
    if name == "tables.zip":
        handle = tempfile.TemporaryFile()  # noqa: SIM115 (FileResponse closes it)
        with zipfile.ZipFile(handle, "w", zipfile.ZIP_DEFLATED) as archive:
            for path in sorted(folder.iterdir()):
                archive.write(path, path.name)
        handle.seek(0)
        return FileResponse(handle, as_attachment=True, filename=f"{slug or 'tables'}-analysis.zip")
    path = folder / name
    if not path.is_file():
        raise Http404("no such file")
    kind = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
    response = FileResponse(path.open("rb"), content_type=kind)
    key = (result.payload or {}).get("figure_keys", {}).get(name.rsplit(".", 1)[0])
    if key is not None and request.GET.get("v") == key:  # this URL always names these bytes
        response["Cache-Control"] = "private, max-age=31536000, immutable"
    else:
        response["Cache-Control"] = "no-cache"
    return response


@staff_member_required
def download(request: HttpRequest, format: str, slug: str | None = None) -> FileResponse:
    """The study's export (as ``export_study`` writes it) in ``format``, as a zip."""
    if format not in FORMATS:
        raise Http404("no such format")
    study = get_object_or_404(Study, slug=slug) if slug is not None else None
    handle = tempfile.TemporaryFile()  # noqa: SIM115 (FileResponse closes it)
    with tempfile.TemporaryDirectory() as folder:
        if study is None:
            export_tables(agent_tables(), Path(folder), formats=(format,))
        else:
            export_study(study, Path(folder), formats=(format,))
        with zipfile.ZipFile(handle, "w", zipfile.ZIP_DEFLATED) as archive:
            for path in sorted(Path(folder).rglob("*")):
                if path.is_file():
                    archive.write(path, path.relative_to(folder))
    handle.seek(0)
    return FileResponse(handle, as_attachment=True, filename=f"{slug or 'tables'}-{format}.zip")


@staff_member_required
@require_POST
def model_arm(request: HttpRequest, slug: str) -> HttpResponse:
    """Start one experiment job per condition, chosen model and setting, each the people's twin
    (:func:`arm_parameters`), attached to the study (``{"study": slug}`` in the job's
    parameters)."""
    study = get_object_or_404(Study, slug=slug)
    models = [m for m in request.POST.get("models", "").replace(",", " ").split() if m]
    chosen = [s for s in request.POST.getlist("settings") if s in SETTINGS]
    try:
        samples = int(request.POST.get("samples") or ARM_SAMPLES)
    except ValueError:
        samples = 0
    if not 1 <= samples <= MAX_ARM_SAMPLES:
        messages.error(request, f"Samples must be a whole number from 1 to {MAX_ARM_SAMPLES}.")
        return redirect("dashboard:analysis_study", slug=slug)
    if not models or not chosen:
        messages.error(request, "Choose at least one model and one setting.")
        return redirect("dashboard:analysis_study", slug=slug)
    problems = [problem for model in models if (problem := arm_problem(study.game, model))]
    if problems:  # refused whole: no job that would fail at once, nor half of what was asked
        for problem in problems:
            messages.error(request, problem)
        return redirect("dashboard:analysis_study", slug=slug)
    try:
        policies = human_policies(study, request.POST.get("human_policy") or SHIPPED_POLICY)
    except ValueError as err:
        messages.error(request, str(err))
        return redirect("dashboard:analysis_study", slug=slug)
    try:
        planned = [
            arm_parameters(study, model, setting, samples, policy, condition)
            for condition in arm_conditions(study)
            for model in models
            for setting in chosen
            for policy in (policies if setting == "human-policy" else [None])
        ]
    except ValueError as err:  # a design that cannot be played: no twin to play
        messages.error(request, f"The study's design cannot be played by a model arm: {err}")
        return redirect("dashboard:analysis_study", slug=slug)
    if len(planned) > MAX_ARM_JOBS:
        messages.error(
            request, f"That would start {len(planned)} jobs; start at most {MAX_ARM_JOBS} at "
            "once (fewer models, or one participant's policy)."
        )  # fmt: skip
        return redirect("dashboard:analysis_study", slug=slug)
    started = []
    for parameters in planned:
        model, setting = parameters["model"], parameters["setting"]
        problem = missing_credentials("experiment", parameters)
        if problem:
            messages.error(request, f"{model}: {problem}")
            continue
        try:
            started.append(start_job("experiment", parameters, user=request.user))
        except ValueError as err:
            messages.error(request, f"{model}, {setting}: {err}")
    if started:
        messages.success(
            request, f"Started {len(started)} experiment job(s) for the model arm; the figure "
            "updates as their games land."
        )  # fmt: skip
    return redirect("dashboard:analysis_study", slug=slug)


def arm_choices(game: str) -> tuple[str, ...]:
    """The offline agents the form offers for a study's game."""
    return OFFLINE_ARM_AGENTS.get(game, ())


def study_arm_choices(study: Study) -> tuple[str, ...]:
    """The form's offline agents for a study, the study's own first: a model arm of the agents the
    people met is named as they were (``offline:kb``), not by another alias of the same agent."""
    own = []
    for seat in (study.design or {}).get("seats", []):
        spec = seat.get("spec", "") if isinstance(seat, dict) else ""
        if spec.startswith("offline:") and arm_problem(study.game, spec) is None:
            own.append(spec)
    replacement = (study.design or {}).get("replacement_spec", "")
    if study.game == "undercover":
        own.append(replacement or "offline:kb")  # the study's default replacement agent
    return tuple(dict.fromkeys([*own, *arm_choices(study.game)]))


def arm_problem(game: str, model: str) -> str | None:
    """Why an experiment job of ``model`` for ``game`` would fail at once, or None: a spec that is
    not ``provider:name``, an unknown provider, or an offline agent that cannot play the game's
    evaluated seat (the agent is built here, as the job would build it)."""
    provider, sep, name = model.partition(":")
    if not sep or not name:
        return f"{model}: a model is written provider:name, e.g. {_example(game)}."
    if provider not in PROVIDER_KINDS:
        return f"{model}: unknown provider {provider!r}; use one of {', '.join(PROVIDER_KINDS)}."
    if provider == "offline":
        try:
            make_agent(model, game=game, role=ARM_ROLES.get(game, "player"))
        except ValueError:
            offered = ", ".join(arm_choices(game)) or "none"
            return (
                f"{model} cannot play this study's game ({game}); offline agents for it: {offered}."
            )
    return None


def _example(game: str) -> str:
    return (arm_choices(game) or ("openai:gpt-4o",))[0]


def human_policies(study: Study, choice: str) -> list[tuple[str, str] | None]:
    """The human-policy texts the arm's human-policy jobs play with: ``[None]`` for the shipped
    text, every finished participant's written policy (``"each"``), or the one of the
    participant whose public id is ``choice``. ValueError with the reason otherwise."""
    if choice == SHIPPED_POLICY:
        return [None]
    written = finished_policies(study)
    if choice == EACH_POLICY:
        if not written:
            raise ValueError("No finished participant of this study wrote a policy yet.")
        return list(written)
    found = [entry for entry in written if entry[0] == choice]
    if not found:
        raise ValueError(f"{choice} is not a finished participant of this study with a policy.")
    return found


def arm_parameters(
    study: Study,
    model: str,
    setting: str,
    samples: int,
    policy: tuple[str, str] | None = None,
    condition: str = "",
) -> dict:
    """The experiment job that plays the study's own games in ``condition`` (the people's twin):
    same game, seed, rounds (case k of the job is round k + 1 of every participant) and oracle,
    and the condition's seat plan (:func:`studyapp.participants.arm_plan.seat_plan`: the model
    in the people's seats beside the design's agents, the study's players and language, and in
    Undercover each person's role round by round). An Undercover arm plays ``samples`` tracks
    per person followed (one track per person twinned ``samples`` times), else ``samples``
    tracks. A human-policy job given a participant's ``(public id, text)`` plays with that text
    (``policy``, the experiment's human-policy text) and names the participant in
    ``policy_from``; without one, the shipped text."""
    plan = seat_plan(study, condition)
    twins = max(1, len(plan["roles"]))
    parameters = {
        "game": study.game,
        "model": model,
        "setting": setting,
        "cases": study.rounds,
        "rounds": study.rounds,
        "samples": samples * twins,
        "seed": study.seed,
        "study": study.slug,
        "condition": condition,
        "seat_plan": plan,
    }
    if study.game == "twenty-questions":
        parameters["oracle"] = plan["seats"][1]
    else:
        parameters["players"] = len(plan["seats"])  # the plan's seats, said where jobs list it
    if setting == "human-policy":
        if policy is None:
            parameters["policy_from"] = SHIPPED_POLICY
        else:
            parameters["policy_from"], parameters["policy"] = policy
    return parameters
