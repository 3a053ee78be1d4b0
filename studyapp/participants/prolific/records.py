"""The pay ledger's shared parts: what one participant's payment came to (:class:`Outcome`), the
records still open, the statuses Prolific shows, and the small writes every step makes on a
record (a note, a closing state, a participant's payment error)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal

from studyapp.participants.models import ApprovalRecord, BonusBatch, Participant, Study
from studyapp.participants.prolific.client import ProlificError

# Prolific's submission statuses (``GET submissions/<id>/``) that matter here.
APPROVED = "APPROVED"
AWAITING_REVIEW = "AWAITING REVIEW"
NOT_FOUND = "NOT FOUND"  # ours: Prolific answered 404 for the submission


@dataclass(frozen=True)
class Outcome:
    """What happened (or, in a dry run, would happen) to one participant."""

    participant: str
    action: str  # "approve", "bonus"
    ok: bool
    detail: str
    amount: Decimal | None = None


def open_approvals(study: Study) -> list[ApprovalRecord]:
    return list(study.approval_records.filter(state__in=ApprovalRecord.OPEN).order_by("pk"))


def lock_name(study: Study) -> str:
    return f"prolific-payments:{study.pk}"


def open_batches(study: Study) -> list[BonusBatch]:
    return list(study.bonus_batches.filter(state__in=BonusBatch.OPEN).order_by("pk"))


def cents(amount: Decimal) -> int:
    return int((amount * 100).to_integral_value())


def known_paid(study: Study) -> dict[tuple[str, str], int]:
    """What our own paid batches account for, per (STUDY_ID, PROLIFIC_PID), in cents."""
    known: dict[tuple[str, str], int] = defaultdict(int)
    for batch in study.bonus_batches.filter(state=BonusBatch.State.PAID):
        for pid, amount in batch.amounts().items():
            known[(batch.prolific_study_id, pid)] += cents(amount)
    return known


def bonus_cents(submission: dict) -> int:
    bonuses = submission.get("bonus_payments") or []
    return sum(int(c) for c in bonuses if isinstance(c, int | float))


def note(batch: BonusBatch | ApprovalRecord, note: str) -> None:
    batch.note = note
    batch.save(update_fields=["note", "updated_at"])


def close(batch: BonusBatch | ApprovalRecord, state: str, note: str) -> None:
    batch.state = state
    batch.note = note
    batch.save(update_fields=["state", "note", "updated_at"])


def record_failure(p: Participant, err: ProlificError) -> None:
    p.payment_error = err.detail
    p.save(update_fields=["payment_error"])


def summary(outcomes: Iterable[Outcome]) -> dict[str, int]:
    counts = {"ok": 0, "failed": 0}
    for outcome in outcomes:
        counts["ok" if outcome.ok else "failed"] += 1
    return counts
