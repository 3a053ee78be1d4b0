"""The admin of studies: setup, conditions, live progress, consent versions, a check of the
model specs, and personal invites minted as a CSV of links; the invites themselves; and the
groups of group designs, read-only.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.db.models import Count, Q, QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.urls import URLPattern, path, reverse
from django.utils.html import format_html, format_html_join

from studyapp.participants import design, payrules, pilots
from studyapp.participants.admin.base import StaffModelAdmin
from studyapp.participants.admin.exports import invites_csv
from studyapp.participants.admin.launch import LAUNCH_FIELDS, LaunchAdmin
from studyapp.participants.models import Condition, Invite, Participant, Study, StudyGroup
from studyapp.participants.models.validation import parse_amount
from studyapp.participants.prolific.client import ProlificClient, ProlificError
from studyapp.participants.prolific.ledger_check import check_ledger


class InviteBatchForm(forms.Form):
    count = forms.IntegerField(min_value=1, max_value=1000, initial=20)
    label = forms.CharField(max_length=100, required=False)


class AmountField(forms.CharField):
    """An amount typed in the admin, read as a study file reads it
    (:func:`~studyapp.participants.models.validation.parse_amount`): "Infinity", "1e3" and
    "0.001" are refused with the reason, never rounded or turned into a traceback."""

    def to_python(self, value: Any) -> Any:
        text = super().to_python(value)
        if text in self.empty_values:
            return None
        return parse_amount(text, self.label or "amount")


# Fields the form may leave out (a form from before they existed): they keep their value.
KEPT_WHEN_MISSING = (
    "dropped_pay",
    "lobby_timeout_pay",
    "code_actions",
    "model_prices",
    "over_budget",
)


class StudyForm(forms.ModelForm):
    """The study's change form. A field added after a form was opened (the pay rules per ending,
    the idle policy's ``missed_turns_limit``) may come back empty: it then keeps the study's
    value, or the default."""

    class Meta:
        model = Study
        fields = "__all__"  # noqa: DJ007 (the fieldsets below choose what is shown)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for name in ("payment_amount", "bonus_per_reward", "model_budget"):
            if name in self.fields:
                old = self.fields[name]
                self.fields[name] = AmountField(
                    label=old.label,
                    help_text=old.help_text,
                    initial=old.initial,
                    required=name != "model_budget",  # empty: no cap
                )
        for name in (*KEPT_WHEN_MISSING, "missed_turns_limit"):
            if name in self.fields:
                self.fields[name].required = False

    def _kept(self, name: str) -> Any:
        value = self.cleaned_data.get(name)
        if value in (None, "") and name not in self.data:
            return getattr(self.instance, name)
        return value

    def clean_dropped_pay(self) -> Any:
        return self._kept("dropped_pay")

    def clean_lobby_timeout_pay(self) -> Any:
        return self._kept("lobby_timeout_pay")

    def clean_code_actions(self) -> Any:
        return self._kept("code_actions")

    def clean_model_prices(self) -> Any:
        return self._kept("model_prices")

    def clean_over_budget(self) -> Any:
        return self._kept("over_budget")

    def clean_missed_turns_limit(self) -> int:
        value = self.cleaned_data.get("missed_turns_limit")
        if value is None:
            kept = self.instance.missed_turns_limit
            return kept if kept is not None else Study._meta.get_field("missed_turns_limit").default
        return value


class ConditionInline(admin.TabularInline):
    """The study's arms; overrides is JSON with keys design, oracle_spec, shown_policy."""

    model = Condition
    extra = 0
    fields = ["position", "name", "quota", "group_quota", "overrides"]


@admin.register(Study)
class StudyAdmin(LaunchAdmin, StaffModelAdmin):
    form = StudyForm
    list_display = ["title", "slug", "game", "rounds", "active", "started", "finished", "dropped"]
    list_filter = ["active", "game"]
    prepopulated_fields = {"slug": ["title"]}
    inlines = [ConditionInline]
    actions = ["check_models", "check_ledger", *LaunchAdmin.launch_actions]
    readonly_fields = [
        "progress_summary",
        "links",
        "consent_history",
        "endings",
        *LaunchAdmin.launch_readonly,
    ]
    fieldsets = [
        (
            None,
            {
                "fields": [
                    "title",
                    "slug",
                    "active",
                    "game",
                    "language",
                    "rounds",
                    "estimated_minutes",
                    "oracle_spec",
                    "seed",
                ]
            },
        ),
        (
            "Table design (the same fields as the study file, docs/studies.md)",
            {
                "fields": [
                    "design",
                    "shown_policy",
                    "turn_deadline_seconds",
                    "dropout",
                    "missed_turns_limit",
                    "idle_limit_seconds",
                    "assignment_seed",
                    "agents_disclosed",
                    "agent_think_seconds",
                    "version",
                ]
            },
        ),
        ("Comprehension checks", {"fields": ["checks", "check_attempts"]}),
        ("Live progress", {"fields": ["progress_summary", "links"]}),
        (
            "Consent and instructions",
            {
                "fields": [
                    "welcome_text",
                    "consent_version",
                    "consent_text",
                    "consent_history",
                    "instructions",
                ]
            },
        ),
        (
            "End of study",
            {
                "fields": [
                    "policy_question",
                    "questionnaire",
                    "attention_failure",
                    "debrief_text",
                    "about_agents_text",
                    "completion_url",
                    "code_finished",
                    "code_dropped",
                    "code_screened",
                    "code_failed_checks",
                    "code_lobby_timeout",
                ]
            },
        ),
        (
            "Payment",
            {
                "fields": [
                    "payment_amount",
                    "currency",
                    "bonus_per_reward",
                    "dropped_pay",
                    "screened_pay",
                    "lobby_timeout_pay",
                    "code_actions",
                    "endings",
                ]
            },
        ),
        ("Launch: Prolific and the model budget (docs/participants.md)", {"fields": LAUNCH_FIELDS}),
    ]

    @admin.display(description="Each ending: its code, Prolific action and pay")
    def endings(self, study: Study) -> str:
        """The study's pay rule per ending, as the pages, the pay commands and the export apply
        it (studyapp.participants.payrules)."""
        rows = format_html_join(
            "",
            "<tr><td>{}</td><td><code>{}</code></td><td>{}</td><td>{}</td></tr>",
            (
                (row["ending"], row["code"] or "-", row["action_words"], row["rule_words"])
                for row in payrules.table(study)
            ),
        )
        return format_html(
            '<table id="endings"><tr><th>ending</th><th>code</th><th>Prolific action</th>'
            "<th>paid</th></tr>{}</table>",
            rows,
        )

    @admin.display(description="Consent versions")
    def consent_history(self, study: Study) -> str:
        """Every version's text as people agreed to it (a record: changing the text above after
        anyone agreed saves a new version)."""
        if study.pk is None:
            return "-"
        rows = format_html_join(
            "",
            "<li><strong>Version {}</strong> ({}, {} agreed): <pre>{}</pre></li>",
            (
                (
                    v.version,
                    v.created_at.strftime("%Y-%m-%d %H:%M"),
                    study.participants.filter(
                        consent_version=v.version, consented_at__isnull=False
                    ).count(),
                    v.text,
                )
                for v in study.consent_versions.all()
            ),
        )
        return format_html('<ul id="consent-versions">{}</ul>', rows)

    def save_model(self, request: HttpRequest, obj: Study, form: forms.Form, change: bool):
        """A consent text changed after people agreed to its version is saved as a new version
        (Study.save); say so, since the form showed the old number."""
        asked = obj.consent_version
        super().save_model(request, obj, form, change)
        if obj.consent_version != asked:
            self.message_user(
                request,
                f"People already agreed to consent version {asked} with another text, so the "
                f"changed text was saved as consent version {obj.consent_version}. People who "
                "have not consented yet are asked to agree to it.",
                messages.WARNING,
            )

    def save_related(self, request: HttpRequest, form: forms.Form, formsets: list, change: bool):
        """Conditions are saved after the study: a condition whose model fails makes an active
        study inactive again, with the reason, so nobody is sent to a table that cannot play."""
        super().save_related(request, form, formsets, change)
        study = form.instance
        problems = design.study_problems(study)
        if problems and study.active:
            Study.objects.filter(pk=study.pk).update(active=False)
            self.message_user(
                request,
                "The study was saved as inactive: " + "; ".join(problems),
                messages.ERROR,
            )

    @admin.action(description="Check models (one tiny call per model spec)")
    def check_models(self, request: HttpRequest, queryset: QuerySet[Study]) -> None:
        for study in queryset:
            for where, spec, role in design.model_specs(study):
                result = design.ping(spec, study.game, role)
                if result["ok"]:
                    self.message_user(
                        request,
                        f"{study.slug} · {where} · {spec}: answered in {result['latency_ms']} ms",
                        messages.SUCCESS,
                    )
                else:
                    self.message_user(
                        request,
                        f"{study.slug} · {where} · {spec}: {result['error']}",
                        messages.ERROR,
                    )

    @admin.action(description="Check the pay ledger against Prolific (reads only)")
    def check_ledger(self, request: HttpRequest, queryset: QuerySet[Study]) -> None:
        """What ``manage.py prolific status`` prints, as messages: every disagreement between
        the ledger (approvals, bonus batches, what each person is recorded paid) and Prolific."""

        for study in queryset:
            try:
                client = ProlificClient(settings.PROLIFIC_API_TOKEN, settings.PROLIFIC_API_URL)
                checked, found = check_ledger(study, client)
            except ProlificError as err:
                self.message_user(
                    request, f"{study.slug}: could not read Prolific: {err.detail}", messages.ERROR
                )
                continue
            for item in found:
                self.message_user(
                    request, f"{study.slug} · {item.who}: {item.what}", messages.WARNING
                )
            if not found:
                self.message_user(
                    request,
                    f"{study.slug}: the ledger agrees with Prolific ({checked} submission(s) checked)",
                    messages.SUCCESS,
                )

    def get_queryset(self, request: HttpRequest) -> QuerySet[Study]:
        """Count the list's progress columns in the one query that lists the studies."""
        status = "participants__status"
        return (
            super()
            .get_queryset(request)
            .annotate(
                n_started=Count("participants", filter=Q(**{f"{status}__in": Participant.STARTED})),
                n_finished=Count("participants", filter=Q(**{status: "finished"})),
                n_dropped=Count(
                    "participants", filter=Q(**{f"{status}__in": ["dropped", "withdrawn"]})
                ),
            )
        )

    @admin.display(description="Started", ordering="n_started")
    def started(self, study: Study) -> int:
        return study.n_started

    @admin.display(description="Finished", ordering="n_finished")
    def finished(self, study: Study) -> int:
        return study.n_finished

    @admin.display(description="Dropped out", ordering="n_dropped")
    def dropped(self, study: Study) -> int:
        return study.n_dropped

    @admin.display(description="Progress")
    def progress_summary(self, study: Study) -> str:
        if study.pk is None:
            return "-"
        p = study.progress()
        return format_html(
            '<span id="study-progress">visited {} · started {} · playing {} · finished {} · '
            "dropped out {} · declined {}</span>",
            p["visited"],
            p["started"],
            p["playing"],
            p["finished"],
            p["dropped"],
            p["declined"],
        )

    @admin.display(description="Links")
    def links(self, study: Study) -> str:
        if study.pk is None:
            return "-"
        link = reverse("participants:study_link", args=[study.slug])
        pilot = f"{link}?{urlencode({'pilot': pilots.pilot_token(study.slug)})}"
        return format_html(
            'Study link: <code>{}</code> · <a href="{}">Generate personal invites (CSV)</a>'
            "<br>Pilot link (staff only, valid 7 days; visits through it are flagged as pilots, "
            'never paid): <a href="{}" id="pilot-link">{}</a>',
            link,
            reverse("admin:participants_study_invites", args=[study.pk]),
            pilot,
            pilot[:60] + "…",
        )

    def get_urls(self) -> list[URLPattern]:
        extra = [
            path(
                "<int:study_id>/invites/",
                self.admin_site.admin_view(self.generate_invites),
                name="participants_study_invites",
            )
        ]
        return extra + super().get_urls()

    def generate_invites(self, request: HttpRequest, study_id: int) -> HttpResponse:
        """Mint a batch of personal links and hand them over as a CSV, one link per row."""
        study = get_object_or_404(Study, pk=study_id)
        if not self.has_change_permission(request, study):
            return HttpResponse("Not allowed", status=403)
        form = InviteBatchForm(request.POST or None)
        if request.method == "POST" and form.is_valid():
            label = form.cleaned_data["label"]
            invites = Invite.objects.bulk_create(
                Invite(study=study, label=label) for _ in range(form.cleaned_data["count"])
            )
            return invites_csv(request, study, invites)
        context = {
            **self.admin_site.each_context(request),
            "study": study,
            "form": form,
            "opts": self.model._meta,
            "title": f"Personal invites for {study}",
        }
        return render(request, "participants/admin_invites.html", context)


@admin.register(Invite)
class InviteAdmin(StaffModelAdmin):
    list_display = ["__str__", "study", "label", "created_at", "claimed_at"]
    list_filter = ["study", ("claimed_at", admin.EmptyFieldListFilter)]
    readonly_fields = ["token", "claimed_at"]
    actions = ["export_links"]

    @admin.action(description="Download the selected invite links as CSV")
    def export_links(self, request: HttpRequest, queryset: QuerySet[Invite]) -> HttpResponse:
        study = queryset.first().study
        return invites_csv(request, study, queryset.select_related("study"))


@admin.register(StudyGroup)
class StudyGroupAdmin(StaffModelAdmin):
    """The groups of group designs, each randomised as one unit: read-only, they are the log."""

    list_display = ["study", "number", "condition", "size", "is_pilot", "formed_at"]
    list_filter = ["study", "condition", "is_pilot"]
    readonly_fields = [f.name for f in StudyGroup._meta.fields]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
