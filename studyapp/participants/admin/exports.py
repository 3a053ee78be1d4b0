"""The admin's CSV downloads: the payment sheet, the recruiter's bulk bonus sheet and the
personal invite links. The payment sheet is the one export that carries recruiter IDs: paying
people needs them. Every cell passes the project's CSV guard (:mod:`analysis.safe_csv`).
"""

from __future__ import annotations

from collections.abc import Iterable

from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.urls import reverse

from analysis import safe_csv
from studyapp.participants.models import Invite, Participant, Study

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
