"""Bonus batches earlier runs left open, settled against what Prolific shows paid, and the one
pay call of a created batch (marked ``paying`` first): a batch is never paid twice."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from studyapp.participants.models import BonusBatch, Participant, Study
from studyapp.participants.prolific.client import ProlificClient, ProlificError
from studyapp.participants.prolific.records import (
    Outcome,
    cents,
    close,
    known_paid,
    note,
    open_batches,
    record_failure,
)


def uncertain(err: ProlificError) -> bool:
    """Whether a failed call may still have been carried out: no answer (a timeout, a cut
    connection) or a server error. A 4xx answer is a refusal: nothing was done."""
    return err.status is None or err.status >= 500


def pay_batch(
    client: ProlificClient, batch: BonusBatch, still_held: Callable[[], None]
) -> list[Outcome]:
    """Send the one pay call of a created batch, marked ``paying`` (committed) first."""
    group = list(Participant.objects.filter(pk__in=batch.participant_pks).order_by("pk"))
    still_held()
    batch.state = BonusBatch.State.PAYING
    batch.pay_sent_at = timezone.now()
    batch.save(update_fields=["state", "pay_sent_at", "updated_at"])
    try:
        client.pay_bonuses(batch.prolific_id)
    except ProlificError as err:
        for p in group:
            record_failure(p, err)
        if uncertain(err):
            note(batch, f"pay not confirmed: {err.detail}")
            detail = (
                f"bulk payment {batch.prolific_id} not paid as far as we know (no confirmation: "
                f"{err.detail}); the next run checks on Prolific whether it was paid (do not pay "
                "it from Prolific's site)"
            )
        else:
            batch.state = BonusBatch.State.CREATED
            batch.note = f"pay refused: {err.detail}"
            batch.save(update_fields=["state", "note", "updated_at"])
            detail = (
                f"bulk payment {batch.prolific_id} not paid: {err.detail} (check it on Prolific)"
            )
        amounts = batch.amounts()
        return [
            Outcome(p.public_id, "bonus", False, detail, amounts.get(p.prolific_pid)) for p in group
        ]
    return record_paid(batch, group, f"paid ({batch.prolific_id})")


def record_paid(batch: BonusBatch, group: list[Participant], detail: str) -> list[Outcome]:
    close(batch, BonusBatch.State.PAID, detail)
    amounts = batch.amounts()
    outcomes = []
    for p in group:
        p.bonus_batch_id = batch.prolific_id or p.bonus_batch_id
        if batch.prolific_id:
            p.save(update_fields=["bonus_batch_id"])
        p.record_payment(bonus=True)
        outcomes.append(Outcome(p.public_id, "bonus", True, detail, amounts.get(p.prolific_pid)))
    return outcomes


def settle(study: Study, client: ProlificClient, still_held: Callable[[], None]) -> list[Outcome]:
    """Settle the batches earlier runs left open, against what Prolific says each participant
    was paid (its submissions' ``bonus_payments``; Prolific lists no bulk payments):

    - ``created`` (never sent to pay, or the pay call was refused): paid now, once;
    - ``paying`` (pay sent, no answer): paid if Prolific shows the bonuses; if it shows none once
      ``PROLIFIC_SETTLE_SECONDS`` have passed (Prolific pays asynchronously), paid now, once;
      before that, left for a later run;
    - ``creating`` (created maybe, id unknown): if Prolific shows the bonuses (someone paid it on
      Prolific's site), recorded paid; else abandoned, and its people are paid through a new
      batch. Such an unpaid bulk payment on Prolific must never be paid from Prolific's site.
    """
    batches = open_batches(study)
    if not batches:
        return []
    outcomes: list[Outcome] = []
    try:
        seen = _paid_on_prolific(client, {b.prolific_study_id for b in batches})
    except ProlificError as err:
        for batch in batches:
            outcomes.extend(
                _batch_failed(batch, f"could not read Prolific's submissions: {err.detail}")
            )
        return outcomes
    known = known_paid(study)
    settle_after = timedelta(seconds=settings.PROLIFIC_SETTLE_SECONDS)
    for batch in batches:
        group = list(Participant.objects.filter(pk__in=batch.participant_pks).order_by("pk"))
        shown = _shown(batch, seen, known)
        if shown == "paid":
            outcomes.extend(
                record_paid(
                    batch,
                    group,
                    f"paid ({batch.prolific_id or 'on Prolific'}; confirmed on Prolific)",
                )
            )
            for pid, amount in batch.amounts().items():
                known[(batch.prolific_study_id, pid)] += cents(amount)
        elif shown == "partly":
            outcomes.extend(
                _batch_failed(
                    batch,
                    "Prolific shows part of this batch paid: being paid now, or paid by hand; "
                    "check it on Prolific",
                )
            )
        elif batch.state == BonusBatch.State.CREATING:
            close(
                batch,
                BonusBatch.State.ABANDONED,
                "not seen paid on Prolific: replaced by a new batch (if Prolific holds it, "
                "never pay it from Prolific's site)",
            )
        elif batch.state == BonusBatch.State.CREATED:
            outcomes.extend(pay_batch(client, batch, still_held))
        elif batch.pay_sent_at and timezone.now() - batch.pay_sent_at < settle_after:
            wait = settle_after - (timezone.now() - batch.pay_sent_at)
            outcomes.extend(
                _batch_failed(
                    batch,
                    f"pay sent, not yet seen on Prolific; run again in {int(wait.total_seconds()) + 1} s",
                )
            )
        else:
            outcomes.extend(pay_batch(client, batch, still_held))
    return outcomes


def _batch_failed(batch: BonusBatch, detail: str) -> list[Outcome]:
    note(batch, detail)
    amounts = batch.amounts()
    people = Participant.objects.filter(pk__in=batch.participant_pks).order_by("pk")
    return [
        Outcome(
            p.public_id,
            "bonus",
            False,
            f"bonus batch {batch.pk}: {detail}",
            amounts.get(p.prolific_pid),
        )
        for p in people
    ]


def _paid_on_prolific(
    client: ProlificClient, prolific_studies: set[str]
) -> dict[tuple[str, str], int]:
    """(STUDY_ID, PROLIFIC_PID) -> bonus cents Prolific shows paid on their submissions."""
    seen: dict[tuple[str, str], int] = defaultdict(int)
    for prolific_study in sorted(prolific_studies):
        for submission in client.submissions(prolific_study):
            pid = str(submission.get("participant_id") or submission.get("participant") or "")
            bonuses = submission.get("bonus_payments") or []
            seen[(prolific_study, pid)] += sum(
                int(c) for c in bonuses if isinstance(c, int | float)
            )
    return seen


def _shown(
    batch: BonusBatch, seen: dict[tuple[str, str], int], known: dict[tuple[str, str], int]
) -> str:
    """ "paid" when Prolific shows every line of the batch paid beyond what our paid batches
    account for, "unpaid" when it shows none, "partly" otherwise."""
    paid = 0
    lines = batch.amounts()
    for pid, amount in lines.items():
        extra = seen.get((batch.prolific_study_id, pid), 0) - known.get(
            (batch.prolific_study_id, pid), 0
        )
        if extra >= cents(amount):
            paid += 1
        elif extra > 0:
            return "partly"
    if paid == len(lines) and lines:
        return "paid"
    return "unpaid" if paid == 0 else "partly"
