"""Live tables: the list of open and recent tables; each links to its spectator page."""

from __future__ import annotations

from django.contrib.admin.views.decorators import staff_member_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from studyapp.tables.models import Table

RECENT = 50


@staff_member_required
def table_list(request: HttpRequest) -> HttpResponse:
    open_tables = Table.objects.filter(status__in=[Table.Status.LOBBY, Table.Status.PLAYING])
    recent = Table.objects.exclude(pk__in=open_tables.values("pk"))[:RECENT]
    context = {"open_tables": open_tables.prefetch_related("seats"), "recent": recent}
    template = "dashboard/_table_rows.html" if request.htmx else "dashboard/tables.html"
    return render(request, template, context)


@staff_member_required
def watch(request: HttpRequest, table_id: int) -> HttpResponse:
    """Staff watch a table on its own page, which renders the spectator view for them."""
    return redirect("tables:table", table_id)
