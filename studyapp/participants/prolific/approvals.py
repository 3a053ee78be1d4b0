"""Base pay by approving submissions on Prolific: in bulk, each call recorded
(:class:`ApprovalRecord`) before it is sent, and records left open settled against the statuses
Prolific shows."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from studyapp import locks
from studyapp.participants.models import ApprovalRecord, Participant, Study
from studyapp.participants.prolific.client import ProlificClient, ProlificError
from studyapp.participants.prolific.records import (
    APPROVED,
    AWAITING_REVIEW,
    NOT_FOUND,
    Outcome,
    close,
    lock_name,
    note,
    open_approvals,
    record_failure,
)

# Prolific takes at most this many submissions in one bulk approval (we keep well below it).
APPROVE_CHUNK = 100


ALREADY_APPROVED = re.compile(r"already\s+approved", re.I)


def to_approve(study: Study) -> list[Participant]:
    """Participants (pilots never) whose base pay is paid by approving their submission (those
    who finished) and whose approval is not recorded yet."""
    candidates = study.participants.filter(
        status__in=Participant.PAYABLE, is_pilot=False, paid=False, base_paid_at__isnull=True
    ).order_by("pk")
    return [p for p in candidates if p.base_by_approval]


def approve(
    study: Study,
    client: ProlificClient | None,
    *,
    dry_run: bool,
    on_wait: Callable[[], None] | None = None,
) -> list[Outcome]:
    """Approve the submissions of the study's finished participants, in bulk, each call recorded
    (:class:`ApprovalRecord`) before it is sent. A call that fails, and a record an earlier run
    left open, are settled against each submission's status on Prolific: approved there is
    recorded approved (so "already approved" settles the ledger); still awaiting review is
    approved one by one. Under the study's payment lock: a second run waits for the first and
    then finds them approved."""
    if dry_run or client is None:
        return _approve_plan(study)
    with locks.exclusive(lock_name(study), on_wait=on_wait) as still_held:
        outcomes = settle_approvals(study, client, still_held)
        waiting = {pk for record in open_approvals(study) for pk in record.participant_pks}
        ready: list[Participant] = []
        for p in to_approve(study):
            if p.pk in waiting:
                continue  # its open record could not be settled: reported above
            if not p.prolific_session_id:
                outcomes.append(
                    Outcome(
                        p.public_id, "approve", False, "no SESSION_ID recorded; approve by hand"
                    )
                )
            else:
                ready.append(p)
        for start in range(0, len(ready), APPROVE_CHUNK):
            chunk = ready[start : start + APPROVE_CHUNK]
            outcomes.extend(_approve_chunk(client, study, chunk, still_held))
        return outcomes


def _approve_plan(study: Study) -> list[Outcome]:
    """What a run would do, calling nothing."""
    outcomes = [
        Outcome(
            f"approval {record.pk}",
            "approve",
            True,
            f"would settle against Prolific's statuses ({len(record.lines)} submission(s), "
            f"{record.get_state_display()})",
        )
        for record in open_approvals(study)
    ]
    waiting = {pk for record in open_approvals(study) for pk in record.participant_pks}
    for p in to_approve(study):
        if not p.prolific_session_id:
            outcomes.append(
                Outcome(p.public_id, "approve", False, "no SESSION_ID recorded; approve by hand")
            )
        elif p.pk in waiting:
            outcomes.append(
                Outcome(
                    p.public_id,
                    "approve",
                    True,
                    f"would check {p.prolific_session_id} on Prolific (an earlier call may have "
                    "approved it), then approve it if it still awaits review",
                )
            )
        else:
            outcomes.append(
                Outcome(p.public_id, "approve", True, f"would approve {p.prolific_session_id}")
            )
    return outcomes


def _approve_chunk(
    client: ProlificClient,
    study: Study,
    chunk: list[Participant],
    still_held: Callable[[], None],
) -> list[Outcome]:
    # Written (and committed) before Prolific hears of it: a run cut off after this leaves a
    # record the next run settles against Prolific's statuses.
    record = ApprovalRecord.objects.create(
        study=study, bulk=True, lines=[[p.pk, p.prolific_session_id] for p in chunk]
    )
    still_held()
    try:
        client.bulk_approve([p.prolific_session_id for p in chunk])
    except ProlificError as err:
        note(record, f"bulk approval answered {err.detail}")
        return _settle_record(client, record, err.detail, still_held, approve_rest=True)
    return _accepted(record, chunk)


def _approve_one(
    client: ProlificClient, study: Study, p: Participant, still_held: Callable[[], None]
) -> list[Outcome]:
    record = ApprovalRecord.objects.create(
        study=study, bulk=False, lines=[[p.pk, p.prolific_session_id]]
    )
    still_held()
    try:
        client.approve(p.prolific_session_id)
    except ProlificError as err:
        note(record, f"approval answered {err.detail}")
        return _settle_record(client, record, err.detail, still_held, approve_rest=False)
    return _accepted(record, [p])


def _accepted(record: ApprovalRecord, people: list[Participant]) -> list[Outcome]:
    with transaction.atomic():
        for p in people:
            p.record_payment(base=True)
        close(record, ApprovalRecord.State.ACCEPTED, "accepted by Prolific")
    return [Outcome(p.public_id, "approve", True, "approved") for p in people]


def settle_approvals(
    study: Study, client: ProlificClient, still_held: Callable[[], None]
) -> list[Outcome]:
    """Settle the approval records earlier runs left open (cut off between the call and its
    answer), against each submission's status on Prolific, and check the bulk approvals Prolific
    accepted (it approves them in the background) once ``PROLIFIC_SETTLE_SECONDS`` have passed.
    Those still awaiting review are left to this run's fresh approvals."""
    outcomes: list[Outcome] = []
    for record in open_approvals(study):
        outcomes.extend(
            _settle_record(
                client,
                record,
                "an earlier run did not record the answer",
                still_held,
                approve_rest=False,
                awaiting_is_failure=False,
            )
        )
    settled_by = timezone.now() - timedelta(seconds=settings.PROLIFIC_SETTLE_SECONDS)
    accepted = study.approval_records.filter(
        state=ApprovalRecord.State.ACCEPTED, updated_at__lte=settled_by
    ).order_by("pk")
    for record in accepted:
        outcomes.extend(_check_accepted(client, record))
    return outcomes


def _check_accepted(client: ProlificClient, record: ApprovalRecord) -> list[Outcome]:
    """An approval Prolific accepted, checked against the statuses it shows now: approved is
    settled; still awaiting review (the background approval did not happen) is taken off the
    ledger, so this run approves it again (a second approval never pays twice); any other
    status is an error to look at. A submission that cannot be read waits for the next run."""
    people = list(Participant.objects.filter(pk__in=record.participant_pks).order_by("pk"))
    statuses = _statuses(client, people)
    outcomes: list[Outcome] = []
    counts: dict[str, int] = defaultdict(int)
    for p in people:
        status, _ = statuses.get(p.pk, ("", ""))
        if not status:
            return outcomes  # read again by the next run
        counts[status] += 1
        if status == AWAITING_REVIEW and p.base_paid_at is not None:
            p.base_paid_at = None
            p.paid, p.paid_at = False, None
            p.save(update_fields=["base_paid_at", "paid", "paid_at"])
            outcomes.append(
                Outcome(
                    p.public_id,
                    "approve",
                    True,
                    f"approval {record.pk} was accepted but Prolific still shows "
                    f"{p.prolific_session_id} awaiting review: approved again",
                )
            )
        elif status != APPROVED:
            error = ProlificError(
                f"approval {record.pk} was accepted, but Prolific shows {p.prolific_session_id} "
                f"as {status}"
            )
            record_failure(p, error)
            outcomes.append(Outcome(p.public_id, "approve", False, error.detail))
    seen = ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))
    close(record, ApprovalRecord.State.SETTLED, f"accepted; checked on Prolific: {seen}")
    return outcomes


def _settle_record(
    client: ProlificClient,
    record: ApprovalRecord,
    why: str,
    still_held: Callable[[], None],
    *,
    approve_rest: bool,
    awaiting_is_failure: bool = True,
) -> list[Outcome]:
    """Read each of the record's submissions on Prolific and record what it shows: approved is
    recorded approved (base paid); awaiting review is approved one by one (``approve_rest``), a
    failure (``awaiting_is_failure``), or left for a fresh approval; any other status (returned,
    rejected, timed out) is an error to look at. A submission that cannot be read keeps the
    record open for the next run."""
    people = list(Participant.objects.filter(pk__in=record.participant_pks).order_by("pk"))
    outcomes: list[Outcome] = []
    unread = 0
    counts: dict[str, int] = defaultdict(int)
    statuses = _statuses(client, [p for p in people if p.base_paid_at is None])
    for p in people:
        if p.base_paid_at is not None:
            counts["recorded before"] += 1
            continue
        status, unreadable = statuses.get(p.pk, ("", "not read"))
        if status in ("", AWAITING_REVIEW) and ALREADY_APPROVED.search(why):
            # Prolific's own answer to the approval says so, though its status could not be
            # read or still lags (a bulk approval runs in the background there).
            status = APPROVED
        if not status:
            unread += 1
            detail = (
                f"approval {record.pk} ({why}): could not read {p.prolific_session_id} on "
                f"Prolific ({unreadable or 'no status'}); the next run checks it again"
            )
            outcomes.append(Outcome(p.public_id, "approve", False, detail))
            continue
        counts[status] += 1
        if status == APPROVED:
            p.record_payment(base=True)
            outcomes.append(
                Outcome(p.public_id, "approve", True, f"approved (confirmed on Prolific; {why})")
            )
        elif status in (AWAITING_REVIEW, NOT_FOUND) and approve_rest:
            outcomes.extend(_approve_one(client, record.study, p, still_held))
        elif status == AWAITING_REVIEW and not awaiting_is_failure:
            continue  # not approved: this run's fresh approvals take it
        else:
            shows = (
                f"Prolific has no submission {p.prolific_session_id}"
                if status == NOT_FOUND
                else f"Prolific shows {p.prolific_session_id} as {status}"
            )
            error = ProlificError(f"{why}; {shows}")
            record_failure(p, error)
            outcomes.append(Outcome(p.public_id, "approve", False, error.detail))
    seen = ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))
    if unread:
        note(record, f"{why}; {unread} submission(s) not readable on Prolific; seen: {seen}")
    else:
        close(record, ApprovalRecord.State.SETTLED, f"{why}; Prolific shows: {seen or 'none'}")
    return outcomes


def _statuses(client: ProlificClient, people: list[Participant]) -> dict[int, tuple[str, str]]:
    """participant pk -> (their submission's status on Prolific, or '' and why it could not be
    read). One listing per Prolific study (``GET studies/<id>/submissions/``), then ``GET
    submissions/<id>/`` for a submission the listing lacks; Prolific's 404 is ``NOT FOUND``."""
    found: dict[int, tuple[str, str]] = {}
    listed: dict[str, str] = {}
    for prolific_study in sorted({p.prolific_study_id for p in people if p.prolific_study_id}):
        try:
            for submission in client.submissions(prolific_study):
                listed[str(submission.get("id", ""))] = str(submission.get("status", "")).upper()
        except ProlificError:
            continue  # each submission is read on its own below
    for p in people:
        if listed.get(p.prolific_session_id):
            found[p.pk] = (listed[p.prolific_session_id], "")
            continue
        try:
            shown = client.submission(p.prolific_session_id)
            found[p.pk] = (str(shown.get("status", "")).upper(), "")
        except ProlificError as err:
            found[p.pk] = (NOT_FOUND, "") if err.status == 404 else ("", err.detail)
    return found
