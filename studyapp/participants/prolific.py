"""Paying people through Prolific's API: approving finished submissions and paying bonuses.

Prolific pays the base reward when a submission is approved (in bulk, by submission id: the link's
``SESSION_ID``) and anything else as a bonus, in two calls: a bulk bonus payment is created from
``participant_id,amount`` lines, then paid. Prolific's pay call is not idempotent (paying one
bulk payment twice pays twice), so money moves once by three rules:

- one run at a time per study: ``approve`` and ``pay`` hold the study's payment lock
  (studyapp.locks), and a second run waits for the first, then finds nothing left to do;
- every bulk payment is recorded (``BonusBatch``) before it is created and marked before it is
  paid, each step committed, so a run cut off anywhere leaves a record saying what may have
  happened;
- the next run settles open records against Prolific's own view (the submissions' paid
  ``bonus_payments``) before paying anyone: a batch shown paid is recorded paid, one shown unpaid
  is paid once (or, if its id was never seen, replaced), never paid a second time.

What is owed comes from the participant's record (``Participant.bonus_due``): those who finished
are approved and get their bonus; those who stopped early get the share they earned as a bonus.
Pilots are never paid. Nothing here runs unless staff run ``manage.py prolific``.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from studyapp import locks
from studyapp.participants.models import ApprovalRecord, BonusBatch, Participant, Study
from studyapp.participants.prolific_client import ProlificClient, ProlificError

# Prolific takes at most this many submissions in one bulk approval (we keep well below it).
APPROVE_CHUNK = 100
# Prolific's submission statuses (``GET submissions/<id>/``) that matter here.
APPROVED = "APPROVED"
AWAITING_REVIEW = "AWAITING REVIEW"
ALREADY_APPROVED = re.compile(r"already\s+approved", re.I)
NOT_FOUND = "NOT FOUND"  # ours: Prolific answered 404 for the submission


@dataclass(frozen=True)
class Outcome:
    """What happened (or, in a dry run, would happen) to one participant."""

    participant: str
    action: str  # "approve", "bonus"
    ok: bool
    detail: str
    amount: Decimal | None = None


def to_approve(study: Study) -> list[Participant]:
    """Participants (pilots never) whose base pay is paid by approving their submission (those
    who finished) and whose approval is not recorded yet."""
    candidates = study.participants.filter(
        status__in=Participant.PAYABLE, is_pilot=False, paid=False, base_paid_at__isnull=True
    ).order_by("pk")
    return [p for p in candidates if p.base_by_approval]


def to_pay(study: Study) -> list[Participant]:
    """Participants with a bonus (or an early stop's share) owed and not yet paid."""
    candidates = study.participants.filter(
        status__in=Participant.PAYABLE, is_pilot=False, paid=False, bonus_paid_at__isnull=True
    ).order_by("pk")
    in_open = {pk for batch in open_batches(study) for pk in batch.participant_pks}
    return [p for p in candidates if p.bonus_due > 0 and p.pk not in in_open]


def open_approvals(study: Study) -> list[ApprovalRecord]:
    return list(study.approval_records.filter(state__in=ApprovalRecord.OPEN).order_by("pk"))


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
        _note(record, f"bulk approval answered {err.detail}")
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
        _note(record, f"approval answered {err.detail}")
        return _settle_record(client, record, err.detail, still_held, approve_rest=False)
    return _accepted(record, [p])


def _accepted(record: ApprovalRecord, people: list[Participant]) -> list[Outcome]:
    with transaction.atomic():
        for p in people:
            p.record_payment(base=True)
        _close(record, ApprovalRecord.State.ACCEPTED, "accepted by Prolific")
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
            _failed(p, error)
            outcomes.append(Outcome(p.public_id, "approve", False, error.detail))
    seen = ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))
    _close(record, ApprovalRecord.State.SETTLED, f"accepted; checked on Prolific: {seen}")
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
            _failed(p, error)
            outcomes.append(Outcome(p.public_id, "approve", False, error.detail))
    seen = ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))
    if unread:
        _note(record, f"{why}; {unread} submission(s) not readable on Prolific; seen: {seen}")
    else:
        _close(record, ApprovalRecord.State.SETTLED, f"{why}; Prolific shows: {seen or 'none'}")
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


def pay(
    study: Study,
    client: ProlificClient | None,
    *,
    dry_run: bool,
    on_wait: Callable[[], None] | None = None,
) -> list[Outcome]:
    """Pay what is owed as bonuses, under the study's payment lock: first settle the batches
    earlier runs left open (:func:`settle`), then one new bulk payment per Prolific study for
    everyone still owed, each recorded before it is created and before it is paid."""
    if dry_run or client is None:
        return _pay_plan(study)
    with locks.exclusive(lock_name(study), on_wait=on_wait) as still_held:
        outcomes = settle(study, client, still_held)
        fresh: dict[str, list[Participant]] = defaultdict(list)
        for p in to_pay(study):
            problem = by_hand(p)
            if problem:
                outcomes.append(Outcome(p.public_id, "bonus", False, problem))
            else:
                fresh[p.prolific_study_id].append(p)
        for prolific_study, group in fresh.items():
            group, checked = _base_share_checked(client, prolific_study, group)
            outcomes.extend(checked)
            if group:
                outcomes.extend(_create_and_pay(client, study, prolific_study, group, still_held))
        return outcomes


def _base_share_checked(
    client: ProlificClient, prolific_study: str, group: list[Participant]
) -> tuple[list[Participant], list[Outcome]]:
    """Before a share of the base is paid as a bonus (someone who stopped early, whose
    submission is returned rather than approved), make sure Prolific did not approve that
    submission after all (approved by hand, or by itself after 21 days awaiting review): its
    reward is then the base, recorded so, and only the bonus is paid. Someone whose submission
    cannot be checked is not paid now, so the base is never paid twice."""
    sharing = [p for p in group if not p.base_by_approval and (p.payment_amount or 0) > 0]
    if not sharing:
        return group, []
    try:
        statuses = {
            str(s.get("id", "")): str(s.get("status", "")).upper()
            for s in client.submissions(prolific_study)
        }
    except ProlificError as err:
        left = {p.pk for p in sharing}
        detail = (
            f"not paid: could not check on Prolific whether the submission was approved "
            f"({err.detail}), which would pay the base already"
        )
        for p in sharing:
            _failed(p, ProlificError(detail))
        return [p for p in group if p.pk not in left], [
            Outcome(p.public_id, "bonus", False, detail, p.bonus_due) for p in sharing
        ]
    outcomes: list[Outcome] = []
    keep: list[Participant] = []
    for p in group:
        if p in sharing and statuses.get(p.prolific_session_id) == APPROVED:
            p.base_paid_at = timezone.now()  # Prolific paid its reward: the base is paid
            p.save(update_fields=["base_paid_at"])
            if p.bonus_due <= 0:
                p.record_payment()
                outcomes.append(
                    Outcome(
                        p.public_id,
                        "bonus",
                        True,
                        "nothing to pay: Prolific approved the submission (its reward paid)",
                    )
                )
                continue
        keep.append(p)
    return keep, outcomes


def lock_name(study: Study) -> str:
    return f"prolific-payments:{study.pk}"


def _pay_plan(study: Study) -> list[Outcome]:
    """What a run would do, calling nothing."""
    outcomes: list[Outcome] = []
    for batch in open_batches(study):
        outcomes.append(
            Outcome(
                f"batch {batch.pk}",
                "bonus",
                True,
                f"would settle ({batch.get_state_display()})",
                batch.total(),
            )
        )
    for p in to_pay(study):
        problem = by_hand(p)
        if problem:
            outcomes.append(Outcome(p.public_id, "bonus", False, problem))
        elif not p.base_by_approval and (p.payment_amount or 0) > 0:
            detail = (
                f"would pay (a base share of {p.payment_amount:.2f} and a bonus of "
                f"{p.bonus or 0:.2f}; the share only if Prolific shows the submission not "
                "approved)"
            )
            outcomes.append(Outcome(p.public_id, "bonus", True, detail, p.bonus_due))
        else:
            outcomes.append(Outcome(p.public_id, "bonus", True, "would pay", p.bonus_due))
    return outcomes


def by_hand(participant: Participant) -> str:
    """Why a participant's bonus cannot go through Prolific's API (they are paid by hand), or
    an empty string when it can."""
    if not participant.prolific_pid:
        return "no PROLIFIC_PID recorded; pay by hand"
    if not participant.prolific_study_id:
        return "no STUDY_ID recorded; pay by hand"
    return ""


def open_batches(study: Study) -> list[BonusBatch]:
    return list(study.bonus_batches.filter(state__in=BonusBatch.OPEN).order_by("pk"))


def _uncertain(err: ProlificError) -> bool:
    """Whether a failed call may still have been carried out: no answer (a timeout, a cut
    connection) or a server error. A 4xx answer is a refusal: nothing was done."""
    return err.status is None or err.status >= 500


def _create_and_pay(
    client: ProlificClient,
    study: Study,
    prolific_study: str,
    group: list[Participant],
    still_held: Callable[[], None],
) -> list[Outcome]:
    lines = [[p.pk, p.prolific_pid, f"{p.bonus_due:.2f}"] for p in group]
    # Written (and committed) before Prolific hears of it: a run cut off after this leaves a
    # record the next run settles, never a batch nobody knows of.
    batch = BonusBatch.objects.create(study=study, prolific_study_id=prolific_study, lines=lines)
    still_held()
    try:
        bulk_id = client.create_bonuses(
            prolific_study, [(p.prolific_pid, p.bonus_due) for p in group]
        )
    except ProlificError as err:
        if _uncertain(err):
            _note(batch, f"creation not confirmed: {err.detail}")
            for p in group:
                _failed(p, err)
            detail = (
                f"bonus batch {batch.pk}: Prolific did not confirm creating it ({err.detail}); "
                "the next run settles it before paying anyone again"
            )
            return [Outcome(p.public_id, "bonus", False, detail, p.bonus_due) for p in group]
        _close(batch, BonusBatch.State.ABANDONED, f"refused: {err.detail}")
        if len(group) == 1:
            _failed(group[0], err)
            return [Outcome(group[0].public_id, "bonus", False, err.detail)]
        # Prolific refuses the whole list for one bad line: find who, paying the others.
        outcomes: list[Outcome] = []
        for p in group:
            outcomes.extend(_create_and_pay(client, study, prolific_study, [p], still_held))
        return outcomes
    batch.prolific_id = bulk_id
    batch.state = BonusBatch.State.CREATED
    batch.save(update_fields=["prolific_id", "state", "updated_at"])
    Participant.objects.filter(pk__in=[p.pk for p in group]).update(bonus_batch_id=bulk_id)
    return _pay_batch(client, batch, still_held)


def _pay_batch(
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
            _failed(p, err)
        if _uncertain(err):
            _note(batch, f"pay not confirmed: {err.detail}")
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
    return _record_paid(batch, group, f"paid ({batch.prolific_id})")


def _record_paid(batch: BonusBatch, group: list[Participant], detail: str) -> list[Outcome]:
    _close(batch, BonusBatch.State.PAID, detail)
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
    known = _known_paid(study)
    settle_after = timedelta(seconds=settings.PROLIFIC_SETTLE_SECONDS)
    for batch in batches:
        group = list(Participant.objects.filter(pk__in=batch.participant_pks).order_by("pk"))
        shown = _shown(batch, seen, known)
        if shown == "paid":
            outcomes.extend(
                _record_paid(
                    batch,
                    group,
                    f"paid ({batch.prolific_id or 'on Prolific'}; confirmed on Prolific)",
                )
            )
            for pid, amount in batch.amounts().items():
                known[(batch.prolific_study_id, pid)] += _cents(amount)
        elif shown == "partly":
            outcomes.extend(
                _batch_failed(
                    batch,
                    "Prolific shows part of this batch paid: being paid now, or paid by hand; "
                    "check it on Prolific",
                )
            )
        elif batch.state == BonusBatch.State.CREATING:
            _close(
                batch,
                BonusBatch.State.ABANDONED,
                "not seen paid on Prolific: replaced by a new batch (if Prolific holds it, "
                "never pay it from Prolific's site)",
            )
        elif batch.state == BonusBatch.State.CREATED:
            outcomes.extend(_pay_batch(client, batch, still_held))
        elif batch.pay_sent_at and timezone.now() - batch.pay_sent_at < settle_after:
            wait = settle_after - (timezone.now() - batch.pay_sent_at)
            outcomes.extend(
                _batch_failed(
                    batch,
                    f"pay sent, not yet seen on Prolific; run again in {int(wait.total_seconds()) + 1} s",
                )
            )
        else:
            outcomes.extend(_pay_batch(client, batch, still_held))
    return outcomes


def _batch_failed(batch: BonusBatch, detail: str) -> list[Outcome]:
    _note(batch, detail)
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


def _cents(amount: Decimal) -> int:
    return int((amount * 100).to_integral_value())


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


def _known_paid(study: Study) -> dict[tuple[str, str], int]:
    """What our own paid batches account for, per (STUDY_ID, PROLIFIC_PID), in cents."""
    known: dict[tuple[str, str], int] = defaultdict(int)
    for batch in study.bonus_batches.filter(state=BonusBatch.State.PAID):
        for pid, amount in batch.amounts().items():
            known[(batch.prolific_study_id, pid)] += _cents(amount)
    return known


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
        if extra >= _cents(amount):
            paid += 1
        elif extra > 0:
            return "partly"
    if paid == len(lines) and lines:
        return "paid"
    return "unpaid" if paid == 0 else "partly"


def _note(batch: BonusBatch | ApprovalRecord, note: str) -> None:
    batch.note = note
    batch.save(update_fields=["note", "updated_at"])


def _close(batch: BonusBatch | ApprovalRecord, state: str, note: str) -> None:
    batch.state = state
    batch.note = note
    batch.save(update_fields=["state", "note", "updated_at"])


def _failed(p: Participant, err: ProlificError) -> None:
    p.payment_error = err.detail
    p.save(update_fields=["payment_error"])


def summary(outcomes: Iterable[Outcome]) -> dict[str, int]:
    counts = {"ok": 0, "failed": 0}
    for outcome in outcomes:
        counts["ok" if outcome.ok else "failed"] += 1
    return counts


@dataclass(frozen=True)
class Disagreement:
    """One place where the ledger (our records) and Prolific tell different stories."""

    who: str
    what: str


def check_ledger(study: Study, client: ProlificClient) -> tuple[int, list[Disagreement]]:
    """Compare the ledger with Prolific's own view of every submission of the study (``GET
    studies/<id>/submissions/``, and ``GET submissions/<id>/`` for one not listed): approvals
    recorded against statuses, bonuses recorded paid against the submissions' paid
    ``bonus_payments``, records and batches still open, and money Prolific moved for someone the
    ledger does not know. Returns how many submissions were checked and every disagreement;
    calls nothing that changes anything."""
    found = open_items(study)
    people = list(
        study.participants.filter(is_pilot=False)
        .exclude(prolific_session_id="", prolific_pid="")
        .order_by("pk")
    )
    shown: dict[str, dict] = {}
    for prolific_study in sorted({p.prolific_study_id for p in people if p.prolific_study_id}):
        for submission in client.submissions(prolific_study):
            shown[str(submission.get("id", ""))] = submission
    return _compared(study, client, people, shown, found)


def open_items(study: Study) -> list[Disagreement]:
    """The ledger's own loose ends: approval records and bonus batches still open (a run cut
    off, or an answer not seen), which the next ``approve`` or ``pay`` run settles."""
    found: list[Disagreement] = []
    for record in open_approvals(study):
        found.append(
            Disagreement(
                f"approval {record.pk}",
                f"{record.get_state_display()} ({len(record.lines)} submission(s)): run "
                f"`prolific approve {study.slug}` to settle it",
            )
        )
    for batch in open_batches(study):
        found.append(
            Disagreement(
                f"bonus batch {batch.pk}",
                f"{batch.get_state_display()} ({batch.total():.2f} {study.currency}): run "
                f"`prolific pay {study.slug}` to settle it",
            )
        )
    return found


def _compared(
    study: Study,
    client: ProlificClient,
    people: list[Participant],
    shown: dict[str, dict],
    found: list[Disagreement],
) -> tuple[int, list[Disagreement]]:
    known = _known_paid(study)
    checked = 0
    for p in people:
        sid = p.prolific_session_id
        submission = shown.get(sid) if sid else None
        if sid and submission is None:
            try:
                submission = client.submission(sid)
            except ProlificError as err:
                if err.status != 404:
                    raise
        ledger_bonus = known.get((p.prolific_study_id, p.prolific_pid), 0)
        if submission is None:
            if p.base_paid_at or ledger_bonus:
                found.append(
                    Disagreement(
                        p.public_id,
                        f"the ledger records pay, but Prolific has no submission {sid or '(none)'}",
                    )
                )
            continue
        checked += 1
        found.extend(
            Disagreement(p.public_id, what)
            for what in _submission_disagreements(p, submission, ledger_bonus, study.currency)
        )
    ours = {p.prolific_session_id for p in people if p.prolific_session_id}
    for sid, submission in sorted(shown.items()):
        if sid in ours:
            continue
        cents = _bonus_cents(submission)
        if str(submission.get("status", "")).upper() == APPROVED or cents:
            found.append(
                Disagreement(
                    f"submission {sid}",
                    f"Prolific shows it {submission.get('status')} with bonuses of "
                    f"{cents / 100:.2f}, for someone the ledger does not know",
                )
            )
    return checked, found


def _bonus_cents(submission: dict) -> int:
    bonuses = submission.get("bonus_payments") or []
    return sum(int(c) for c in bonuses if isinstance(c, int | float))


def _submission_disagreements(
    p: Participant, submission: dict, ledger_bonus: int, currency: str
) -> list[str]:
    status = str(submission.get("status", "")).upper()
    found: list[str] = []
    base_share = not p.base_by_approval and (p.payment_amount or 0) > 0
    if p.base_paid_at is not None and status != APPROVED:
        found.append(
            f"the ledger records {p.prolific_session_id} approved, Prolific shows it {status}"
        )
    elif p.base_paid_at is None and status == APPROVED:
        if p.bonus_paid_at is not None and base_share:
            found.append(
                f"base paid twice: Prolific approved {p.prolific_session_id} (its reward paid) "
                f"and the ledger paid the base share {p.payment_amount:.2f} {currency} as a bonus"
            )
        elif p.base_by_approval:
            found.append(
                f"Prolific shows {p.prolific_session_id} approved, the ledger does not: run "
                "`prolific approve` to record it"
            )
        else:
            found.append(
                f"Prolific shows {p.prolific_session_id} approved (its reward paid) although "
                f"this ending ({p.status}) is paid as a bonus: `prolific pay` pays only the bonus"
            )
    elif status == AWAITING_REVIEW and p.status in Participant.PAYABLE and not p.base_by_approval:
        found.append(
            f"{p.prolific_session_id} awaits review although this ending ({p.status}) is not "
            "approved: ask the person to return it, or reject it, before Prolific approves it "
            "by itself after 21 days (that would pay the reward on top of what is paid here)"
        )
    cents = _bonus_cents(submission)
    if cents != ledger_bonus:
        found.append(
            f"bonuses: the ledger records {ledger_bonus / 100:.2f} {currency} paid, Prolific shows "
            f"{cents / 100:.2f} (a payment made in the last minutes may not show yet)"
        )
    return found
