"""Bonus batches and approval records, read only: what each ``manage.py prolific pay`` or
``approve`` run recorded before it asked Prolific to create or pay a bulk bonus payment or to
approve submissions, and where each one stands (``manage.py prolific status`` compares them with
Prolific)."""

from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest

from studyapp.participants.admin.base import StaffModelAdmin
from studyapp.participants.models import ApprovalRecord, BonusBatch


@admin.register(BonusBatch)
class BonusBatchAdmin(StaffModelAdmin):
    list_display = ("pk", "study", "state", "prolific_id", "people", "total", "updated_at")
    list_filter = ("state", "study")
    readonly_fields = (
        "study",
        "prolific_study_id",
        "prolific_id",
        "state",
        "lines",
        "note",
        "created_at",
        "updated_at",
        "pay_sent_at",
    )

    @admin.display(description="people")
    def people(self, batch: BonusBatch) -> int:
        return len(batch.lines)

    @admin.display(description="total")
    def total(self, batch: BonusBatch) -> str:
        return f"{batch.total():.2f}"

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


@admin.register(ApprovalRecord)
class ApprovalRecordAdmin(StaffModelAdmin):
    list_display = ("pk", "study", "bulk", "state", "people", "note", "updated_at")
    list_filter = ("state", "study")
    readonly_fields = ("study", "bulk", "state", "lines", "note", "created_at", "updated_at")

    @admin.display(description="people")
    def people(self, record: ApprovalRecord) -> int:
        return len(record.lines)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False
