"""The study admin's launch: the spend so far beside the plan and the model budget (the same
figures as ``manage.py study spend`` and ``study plan``), and the Prolific study made from the
site's (the actions do what ``manage.py prolific draft|check|publish`` do, with the study's
``places`` and this site's address)."""

from __future__ import annotations

from django.conf import settings
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.template.loader import render_to_string
from django.utils.safestring import mark_safe

from studyapp.participants import budget
from studyapp.participants.models import Study
from studyapp.participants.prolific import launch
from studyapp.participants.prolific.client import ProlificClient, ProlificError

LAUNCH_FIELDS = [
    "places",
    "prolific_study",
    "model_budget",
    "model_prices",
    "over_budget",
    "budget_reached_at",
    "spend_and_plan",
]


class LaunchAdmin(admin.ModelAdmin):
    """The launch part of the study's admin (mixed into ``StudyAdmin``)."""

    launch_actions = ["draft_on_prolific", "check_prolific_study", "publish_prolific_study"]
    launch_readonly = ["prolific_study", "budget_reached_at", "spend_and_plan"]

    @admin.display(description="Model spend so far, beside the plan for the places")
    def spend_and_plan(self, study: Study) -> str:
        if study.pk is None:
            return "-"
        return mark_safe(  # noqa: S308 (a template of ours, autoescaped)
            render_to_string("participants/_study_spend.html", budget.page_context(study))
        )

    def _launch(self, request: HttpRequest, queryset: QuerySet[Study], what: str) -> None:
        site = settings.SITE_URL or request.build_absolute_uri("/")
        for study in queryset:
            try:
                client = ProlificClient(settings.PROLIFIC_API_TOKEN, settings.PROLIFIC_API_URL)
                if what == "draft":
                    if not study.places:
                        raise launch.LaunchError("set the study's places first")
                    made = launch.draft(study, client, study.places, site)
                    self.message_user(
                        request, f"{study.slug}: drafted on Prolific as {made}", messages.SUCCESS
                    )
                elif what == "check":
                    _, found = launch.check(study, client, site)
                    for line in found:
                        self.message_user(request, f"{study.slug}: {line}", messages.WARNING)
                    if not found:
                        self.message_user(
                            request,
                            f"{study.slug}: Prolific's study matches the site",
                            messages.SUCCESS,
                        )
                else:
                    launch.publish(study, client, site)
                    self.message_user(
                        request, f"{study.slug}: published on Prolific", messages.SUCCESS
                    )
            except (ProlificError, launch.LaunchError) as err:
                self.message_user(
                    request, f"{study.slug}: {getattr(err, 'detail', err)}", messages.ERROR
                )

    @admin.action(description="Draft the study on Prolific (its places, this site's link)")
    def draft_on_prolific(self, request: HttpRequest, queryset: QuerySet[Study]) -> None:
        self._launch(request, queryset, "draft")

    @admin.action(description="Check the Prolific study against the site (reads only)")
    def check_prolific_study(self, request: HttpRequest, queryset: QuerySet[Study]) -> None:
        self._launch(request, queryset, "check")

    @admin.action(description="Publish the Prolific study (only when the check finds nothing)")
    def publish_prolific_study(self, request: HttpRequest, queryset: QuerySet[Study]) -> None:
        self._launch(request, queryset, "publish")
