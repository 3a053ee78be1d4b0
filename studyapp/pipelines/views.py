"""Staff pages for jobs: list, start, watch (htmx polls the progress partial), cancel, re-run,
resume, and download artifacts. Each view is a few lines over jobs.py and the Job methods."""

from __future__ import annotations

import json

from django.contrib.admin.views.decorators import staff_member_required
from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from studyapp.pipelines.display import id_ranges, result_text
from studyapp.pipelines.forms import JobForm
from studyapp.pipelines.jobs import rerun, resume, start_job
from studyapp.pipelines.kinds import KINDS
from studyapp.pipelines.models import Job, fail_stale_jobs


@staff_member_required
def job_list(request: HttpRequest) -> HttpResponse:
    fail_stale_jobs()  # a job whose worker died shows as failed here, never as running
    context = {"jobs": Job.objects.select_related("started_by")[:100]}
    if request.htmx:
        return render(request, "pipelines/_job_rows.html", context)
    return render(request, "pipelines/job_list.html", context)


@staff_member_required
def job_new(request: HttpRequest) -> HttpResponse:
    if request.method == "POST":
        form = JobForm(request.POST, request.FILES)
        if form.is_valid():
            job = start_job(form.cleaned_data["kind"], form.job_parameters(), user=request.user)
            return redirect("pipelines:detail", job_id=job.pk)
    else:
        kind = request.GET.get("kind", "selective-lwe")
        kind = kind if kind in KINDS else "selective-lwe"
        defaults = json.dumps(KINDS[kind].defaults, indent=2)
        form = JobForm(initial={"kind": kind, "parameters": defaults})
        if request.htmx:  # the kind select changed: only its parameters are swapped in
            return render(request, "pipelines/_job_parameters.html", {"form": form})
    return render(request, "pipelines/job_new.html", {"form": form, "kinds": KINDS})


@staff_member_required
def job_detail(request: HttpRequest, job_id: int) -> HttpResponse:
    fail_stale_jobs()
    job = get_object_or_404(Job, pk=job_id)
    tables = (job.result or {}).get("tables")
    context = {
        "job": job,
        "result_json": result_text(job.result) if job.result else "",
        "tables": {"count": len(tables), "ranges": id_ranges(tables)} if tables else None,
        "cost_json": json.dumps(job.cost, indent=2) if job.cost else "",
    }
    if request.htmx:
        return render(request, "pipelines/_job_progress.html", context)
    return render(request, "pipelines/job_detail.html", context)


@require_POST
@staff_member_required
def job_cancel(request: HttpRequest, job_id: int) -> HttpResponse:
    get_object_or_404(Job, pk=job_id).request_cancel()
    return redirect("pipelines:detail", job_id=job_id)


@require_POST
@staff_member_required
def job_rerun(request: HttpRequest, job_id: int) -> HttpResponse:
    job = rerun(get_object_or_404(Job, pk=job_id), user=request.user)
    return redirect("pipelines:detail", job_id=job.pk)


@require_POST
@staff_member_required
def job_resume(request: HttpRequest, job_id: int) -> HttpResponse:
    resume(get_object_or_404(Job, pk=job_id))
    return redirect("pipelines:detail", job_id=job_id)


@staff_member_required
def job_artifact(request: HttpRequest, job_id: int, name: str) -> FileResponse:
    job = get_object_or_404(Job, pk=job_id)
    if name not in job.artifacts or not (job.artifact_dir / name).is_file():
        raise Http404("no such artifact")
    return FileResponse((job.artifact_dir / name).open("rb"), as_attachment=True, filename=name)
