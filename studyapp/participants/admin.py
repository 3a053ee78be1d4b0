"""The consent and payment dashboard: Django's admin, so it is staff-only by construction.

Studies show live progress and mint personal invites as a CSV of links; participants show consent,
progress and what they are owed, with bulk actions to mark them paid and to export the payment
sheet. The payment sheet is the one export that carries recruiter IDs: paying people needs them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any
from urllib.parse import urlencode

from django import forms
from django.contrib import admin, messages
from django.db.models import Count, Q, QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.urls import URLPattern, path, reverse
from django.utils.html import format_html, format_html_join

from analysis import safe_csv
from studyapp.participants import design, pilots, rounds, transcripts
from studyapp.participants.models import (
    Condition,
    Invite,
    Participant,
    Round,
    Study,
    StudyGroup,
)

PAYMENT_COLUMNS = [
    "public_id",
    "study",
    "status",
    "prolific_pid",
    "prolific_study_id",
    "prolific_session_id",
    "recruiter_pid",
    "consent_version",
    "consented_at",
    "rounds_finished",
    "time_spent_minutes",
    "total_reward",
    "payment_status",
    "amount",
    "bonus",
    "bonus_due",
    "currency",
    "paid_at",
    "base_paid_at",
    "bonus_paid_at",
    "bonus_batch_id",
    "invite_label",
    "invite_token",
]


def csv_response(filename: str, header: list[str], rows: Iterable[list[object]]) -> HttpResponse:
    """A CSV download; every cell passes the project's CSV guard (recruiter IDs are typed by
    participants, so any cell may be a spreadsheet formula)."""
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    sheet = safe_csv.writer(response)
    sheet.writerow(header)
    sheet.writerows(rows)
    return response


def bonus_sheet(participants: Iterable[Participant]) -> tuple[HttpResponse, int]:
    """The recruiter's bulk bonus format (Prolific's "bulk bonus payment" box): one line
    ``participant_id,amount`` per unpaid bonus above zero, no header, amounts with two decimals.
    What is paid as a bonus includes the pro-rated pay of those who stopped early
    (``Participant.bonus_due``). Returns the download and how many people with a bonus owed had
    no recruiter ID to pay it to.
    """
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = 'attachment; filename="bonus-sheet.csv"'
    sheet = safe_csv.writer(response)
    missing = 0
    for p in participants:
        if p.bonus_settled:
            continue
        recruiter_id = p.prolific_pid or p.recruiter_pid
        if not recruiter_id:
            missing += 1
            continue
        sheet.writerow([recruiter_id, f"{p.bonus_due:.2f}"])
    return response, missing


def payment_sheet(queryset: QuerySet[Participant], include_pilots: bool = False) -> HttpResponse:
    """The payment sheet of ``queryset``; pilot bots (never paid) only when asked."""
    if not include_pilots:
        queryset = queryset.filter(is_pilot=False)
    participants = queryset.select_related("study", "invite").order_by("pk")
    return csv_response(
        "payment-sheet.csv", PAYMENT_COLUMNS, (payment_row(p) for p in participants)
    )


def payment_row(p: Participant) -> list[object]:
    spent = p.time_spent
    return [
        p.public_id,
        p.study.slug,
        p.status,
        p.prolific_pid,
        p.prolific_study_id,
        p.prolific_session_id,
        p.recruiter_pid,
        p.consent_version,
        p.consented_at.isoformat() if p.consented_at else "",
        p.rounds_finished,
        round(spent.total_seconds() / 60, 1) if spent else "",
        round(p.total_reward, 4),
        p.payment_status,
        p.payment_amount if p.payment_amount is not None else "",
        p.bonus if p.bonus is not None else "",
        p.bonus_due if p.payment_status == "owed" else "",
        p.study.currency,
        p.paid_at.isoformat() if p.paid_at else "",
        p.base_paid_at.isoformat() if p.base_paid_at else "",
        p.bonus_paid_at.isoformat() if p.bonus_paid_at else "",
        p.bonus_batch_id,
        p.invite.label if p.invite else "",
        p.invite.token if p.invite else "",
    ]


class InviteBatchForm(forms.Form):
    count = forms.IntegerField(min_value=1, max_value=1000, initial=20)
    label = forms.CharField(max_length=100, required=False)


class ConditionInline(admin.TabularInline):
    """The study's arms; overrides is JSON with keys design, oracle_spec, shown_policy."""

    model = Condition
    extra = 0
    fields = ["position", "name", "quota", "group_quota", "overrides"]


@admin.register(Study)
class StudyAdmin(admin.ModelAdmin):
    list_display = ["title", "slug", "game", "rounds", "active", "started", "finished", "dropped"]
    list_filter = ["active", "game"]
    prepopulated_fields = {"slug": ["title"]}
    inlines = [ConditionInline]
    actions = ["check_models"]
    readonly_fields = ["progress_summary", "links", "consent_history"]
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
            {"fields": ["consent_version", "consent_text", "consent_history", "instructions"]},
        ),
        (
            "End of study",
            {
                "fields": [
                    "policy_question",
                    "questionnaire",
                    "attention_failure",
                    "debrief_text",
                    "completion_url",
                    "code_finished",
                    "code_dropped",
                    "code_screened",
                    "code_failed_checks",
                    "code_lobby_timeout",
                ]
            },
        ),
        ("Payment", {"fields": ["payment_amount", "currency", "bonus_per_reward"]}),
    ]

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


def invites_csv(request: HttpRequest, study: Study, invites: Iterable[Invite]) -> HttpResponse:
    """One row per link, with the public id of the participant who claimed it (empty while the
    link is unused, or after staff deleted that participant)."""
    invites = list(invites)
    claimed_by = dict(
        Participant.objects.filter(invite__in=invites).values_list("invite_id", "public_id")
    )
    rows = (
        [
            request.build_absolute_uri(reverse("participants:invite_link", args=[i.token])),
            i.label,
            i.created_at.isoformat() if i.created_at else "",
            i.claimed_at.isoformat() if i.claimed_at else "",
            claimed_by.get(i.pk, ""),
        ]
        for i in invites
    )
    header = ["link", "label", "created_at", "claimed_at", "participant"]
    return csv_response(f"invites-{study.slug}.csv", header, rows)


@admin.register(Invite)
class InviteAdmin(admin.ModelAdmin):
    list_display = ["__str__", "study", "label", "created_at", "claimed_at"]
    list_filter = ["study", ("claimed_at", admin.EmptyFieldListFilter)]
    readonly_fields = ["token", "claimed_at"]
    actions = ["export_links"]

    @admin.action(description="Download the selected invite links as CSV")
    def export_links(self, request: HttpRequest, queryset: QuerySet[Invite]) -> HttpResponse:
        study = queryset.first().study
        return invites_csv(request, study, queryset.select_related("study"))


@admin.register(StudyGroup)
class StudyGroupAdmin(admin.ModelAdmin):
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


class RoundInline(admin.TabularInline):
    """A participant's rounds, read-only; each links to its game in the transcript (never to
    the table's own form, where an accidental save would change the record)."""

    model = Round
    extra = 0
    can_delete = False
    fields = ["number", "game", "seat", "reward", "started_at", "finished_at"]
    readonly_fields = fields

    def has_add_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    @admin.display(description="Game")
    def game(self, round_: Round) -> str:
        url = reverse("admin:participants_participant_transcript", args=[round_.participant_id])
        return format_html(
            '<a href="{}#round-{}">table {}</a>', url, round_.number, round_.table_id
        )


@admin.register(Participant)
class ParticipantAdmin(admin.ModelAdmin):
    list_display = [
        "public_id",
        "study",
        "condition",
        "status",
        "is_pilot",
        "consent_version",
        "consented_at",
        "rounds_finished",
        "time_spent_display",
        "reward_display",
        "payment_status_display",
        "payment_amount",
        "bonus",
        "paid_at",
        "transcript_link",
    ]
    list_filter = ["study", "status", "paid", "is_pilot", "condition"]
    search_fields = ["public_id", "prolific_pid", "recruiter_pid"]
    actions = [
        "mark_paid",
        "mark_dropped",
        "export_payment_sheet",
        "export_payment_sheet_with_pilots",
        "export_bonus_sheet",
    ]
    inlines = [RoundInline]
    readonly_fields = [
        "transcript_link",
        "public_id",
        "study",
        "condition",
        "assignment",
        "group",
        "is_pilot",
        "invite",
        "prolific_pid",
        "prolific_study_id",
        "prolific_session_id",
        "recruiter_pid",
        "consent_version",
        "consented_at",
        "practice_passed",
        "current_round",
        "rounds_finished",
        "total_reward",
        "policy",
        "questionnaire_answers",
        "attention_failed",
        "visited_at",
        "started_at",
        "finished_at",
        "last_seen_at",
        "paid_at",
        "base_paid_at",
        "bonus_paid_at",
        "bonus_batch_id",
        "payment_error",
    ]
    exclude = ["policy_done", "questionnaire_done", "debrief_seen"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Participant]:
        return super().get_queryset(request).select_related("study")

    # A participant's record is what the study recorded: staff read it (and act on it through
    # the actions: mark paid, mark dropped out, delete), never edit it in a form.
    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def get_urls(self) -> list[URLPattern]:
        extra = [
            path(
                "<int:participant_id>/transcript/",
                self.admin_site.admin_view(self.transcript_view),
                name="participants_participant_transcript",
            )
        ]
        return extra + super().get_urls()

    def transcript_view(self, request: HttpRequest, participant_id: int) -> HttpResponse:
        """Every round's game in order, with timings, rewards and the questionnaire; a replay
        steps through each game one turn at a time. Read-only."""
        participant = get_object_or_404(
            Participant.objects.select_related("study"), pk=participant_id
        )
        if not self.has_view_permission(request, participant):
            return HttpResponse("Not allowed", status=403)
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "participant": participant,
            "games": transcripts.transcript(participant),
            "answers": transcripts.answers(participant),
            "title": f"Transcript of {participant.public_id}",
        }
        return render(request, "participants/admin_transcript.html", context)

    @admin.display(description="Transcript")
    def transcript_link(self, p: Participant) -> str:
        url = reverse("admin:participants_participant_transcript", args=[p.pk])
        return format_html('<a href="{}">transcript</a>', url)

    @admin.display(description="Time spent")
    def time_spent_display(self, p: Participant) -> str:
        spent = p.time_spent
        if spent is None:
            return "-"
        minutes = int(spent.total_seconds() // 60)
        return f"{minutes // 60}h {minutes % 60:02d}m"

    @admin.display(description="Total reward", ordering="total_reward")
    def reward_display(self, p: Participant) -> str:
        return f"{p.total_reward:.2f}"

    @admin.display(description="Payment")
    def payment_status_display(self, p: Participant) -> str:
        return p.payment_status

    def delete_model(self, request: HttpRequest, obj: Participant) -> None:
        rounds.delete_participant(obj)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Participant]) -> None:
        """Deleting people here also deletes the tables and turns they played."""
        for participant in queryset:
            rounds.delete_participant(participant)

    @admin.action(description="Mark selected participants as paid")
    def mark_paid(self, request: HttpRequest, queryset: QuerySet[Participant]) -> None:
        owed = [p for p in queryset if p.payment_status == "owed"]
        for p in owed:
            p.mark_paid()
        skipped = queryset.count() - len(owed)
        self.message_user(request, f"Marked {len(owed)} participant(s) as paid.", messages.SUCCESS)
        if skipped:
            self.message_user(
                request,
                f"Skipped {skipped} not owed (still playing, declined, or already paid).",
                messages.WARNING,
            )

    @admin.action(description="Mark selected participants as dropped out (paid for their time)")
    def mark_dropped(self, request: HttpRequest, queryset: QuerySet[Participant]) -> None:
        active = [p for p in queryset if p.status in Participant.ACTIVE]
        for p in active:
            rounds.mark_dropped(p)
        self.message_user(request, f"Marked {len(active)} participant(s) as dropped out.")

    @admin.action(description="Export the payment sheet of the selected participants (CSV)")
    def export_payment_sheet(
        self, request: HttpRequest, queryset: QuerySet[Participant]
    ) -> HttpResponse:
        """The people to pay: pilot bots are left out (see the next action to list them)."""
        return payment_sheet(queryset, include_pilots=False)

    @admin.action(description="Export the payment sheet of the selected, pilots included (CSV)")
    def export_payment_sheet_with_pilots(
        self, request: HttpRequest, queryset: QuerySet[Participant]
    ) -> HttpResponse:
        return payment_sheet(queryset, include_pilots=True)

    @admin.action(description="Download the bonus sheet of the selected (participant_id,amount)")
    def export_bonus_sheet(
        self, request: HttpRequest, queryset: QuerySet[Participant]
    ) -> HttpResponse:
        """Unpaid bonuses above zero in the recruiter's bulk format; after paying them there, mark
        the participants paid here so the next sheet leaves them out."""
        people = queryset.filter(is_pilot=False)  # a pilot bot is never paid
        response, missing = bonus_sheet(people.select_related("study").order_by("pk"))
        if missing:
            self.message_user(
                request,
                f"{missing} participant(s) with a bonus owed have no recruiter ID; pay them apart.",
                messages.WARNING,
            )
        return response
