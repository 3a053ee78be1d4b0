"""The admin of participants: consent, progress and what each is owed, a read-only transcript
of their games, and bulk actions to mark them paid or dropped out and to export the payment and
bonus sheets. A participant's record is read here, never edited in a form.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.urls import URLPattern, path, reverse
from django.utils.html import format_html

from studyapp.participants import payrules, rounds, transcripts
from studyapp.participants.admin.base import StaffModelAdmin
from studyapp.participants.admin.exports import bonus_sheet, payment_sheet
from studyapp.participants.models import Participant, Round


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
class ParticipantAdmin(StaffModelAdmin):
    # Narrow columns (short dates, short headers) and the transcript link first, so the whole
    # row fits a 1600 px screen beside the filters instead of scrolling its last columns away.
    list_display = [
        "public_id",
        "transcript_link",
        "study",
        "condition",
        "status_display",
        "consent_display",
        "games_display",
        "time_spent_display",
        "reward_display",
        "payment_status_display",
        "payment_amount",
        "bonus",
        "paid_display",
    ]

    class Media:
        css = {"all": ("css/admin-lists.css",)}

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
        "pay_rule_display",
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

    @admin.display(description="Status", ordering="status")
    def status_display(self, p: Participant) -> str:
        return f"{p.status} (pilot)" if p.is_pilot else p.status

    @admin.display(description="Consent (version, time)", ordering="consented_at")
    def consent_display(self, p: Participant) -> str:
        if p.consented_at is None:
            return "-"
        return f"{p.consent_version} · {_short_time(p.consented_at)}"

    @admin.display(description="Games played", ordering="rounds_finished")
    def games_display(self, p: Participant) -> int:
        return p.rounds_finished

    @admin.display(description="Paid", ordering="paid_at")
    def paid_display(self, p: Participant) -> str:
        return _short_time(p.paid_at)

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

    @admin.display(description="Pay rule · Prolific action")
    def pay_rule_display(self, p: Participant) -> str:
        """The study's rule for how this person's study ended, and what their code asks
        Prolific to do (``-`` while they take part)."""
        if p.ending is None or p.is_pilot:
            return "-"
        return f"{p.pay_rule} · {p.code_action}"

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

    @admin.action(
        description="Mark selected participants as dropped out (paid by the study's rule)"
    )
    def mark_dropped(self, request: HttpRequest, queryset: QuerySet[Participant]) -> None:
        """Close people who left mid-study. What they are owed is the study's ``dropped_pay``
        rule (the share of games finished, the minutes given, all, or nothing), said per
        person in the message, as their pages say it."""
        active = [p for p in queryset if p.status in Participant.ACTIVE]
        owed = []
        for p in active:
            rounds.mark_dropped(p)
            p.refresh_from_db()
            rule = payrules.RULE_WORDS[p.pay_rule]
            owed.append(f"{p.public_id}: {p.amount_owed:.2f} {p.study.currency} ({rule})")
        self.message_user(
            request,
            f"Marked {len(active)} participant(s) as dropped out"
            + (": " + "; ".join(owed) if owed else "."),
        )

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


def _short_time(moment: Any) -> str:
    """A time as 2026-11-26 20:31 in the site's zone ('-' for none): a tenth of Django's width."""
    if moment is None:
        return "-"
    from django.utils import timezone

    return timezone.localtime(moment).strftime("%Y-%m-%d %H:%M")
