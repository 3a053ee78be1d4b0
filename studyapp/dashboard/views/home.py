"""The staff landing page: where each researcher page group starts."""

from __future__ import annotations

from django.contrib.admin.views.decorators import staff_member_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from studyapp.pipelines.models import Job
from studyapp.tables.models import Table


@staff_member_required
def home(request: HttpRequest) -> HttpResponse:
    counts = {status: Table.objects.filter(status=status).count() for status in Table.Status.values}
    jobs = {status: Job.objects.filter(status=status).count() for status in Job.Status.values}
    return render(request, "dashboard/home.html", {"counts": counts, "jobs": jobs})
