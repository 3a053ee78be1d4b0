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

from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal

from django.conf import settings
from django.utils import timezone

from studyapp import locks
from studyapp.participants.models import BonusBatch, Participant, Study
from studyapp.participants.prolific_client import ProlificClient, ProlificError

# Prolific takes at most this many submissions in one bulk approval (we keep well below it).
APPROVE_CHUNK = 100


@dataclass(frozen=True)
class Outcome:
    """What happened (or, in a dry run, would happen) to one participant."""

    participant: str
    action: str  # "approve", "bonus"
    ok: bool
    detail: str
    amount: Decimal | None = None


def to_approve(study: Study) -> list[Participant]:
    """Finished participants (pilots never) whose submission is not approved yet."""
    return list(
        study.participants.filter(
            status=Participant.Status.FINISHED,
            is_pilot=False,
            paid=False,
            base_paid_at__isnull=True,
        ).order_by("pk")
    )


def to_pay(study: Study) -> list[Participant]:
    """Participants with a bonus (or an early stop's share) owed and not yet paid."""
    candidates = study.participants.filter(
        status__in=Participant.PAYABLE, is_pilot=False, paid=False, bonus_paid_at__isnull=True
    ).order_by("pk")
    in_open = {pk for batch in open_batches(study) for pk in batch.participant_pks}
    return [p for p in candidates if p.bonus_due > 0 and p.pk not in in_open]


def approve(
    study: Study,
    client: ProlificClient | None,
    *,
    dry_run: bool,
    on_wait: Callable[[], None] | None = None,
) -> list[Outcome]:
    """Approve the submissions of the study's finished participants, in bulk; when a bulk call
    is refused, one by one, so each participant's error is shown. Under the study's payment
    lock: a second run waits for the first and then finds them approved."""
    if dry_run or client is None:
        return _approve(study, None, dry_run=True)
    with locks.exclusive(lock_name(study), on_wait=on_wait):
        return _approve(study, client, dry_run=False)


def _approve(study: Study, client: ProlificClient | None, *, dry_run: bool) -> list[Outcome]:
    outcomes: list[Outcome] = []
    ready: list[Participant] = []
    for p in to_approve(study):
        if not p.prolific_session_id:
            outcomes.append(
                Outcome(p.public_id, "approve", False, "no SESSION_ID recorded; approve by hand")
            )
        else:
            ready.append(p)
    if dry_run or client is None:
        return outcomes + [
            Outcome(p.public_id, "approve", True, f"would approve {p.prolific_session_id}")
            for p in ready
        ]
    for start in range(0, len(ready), APPROVE_CHUNK):
        chunk = ready[start : start + APPROVE_CHUNK]
        try:
            client.bulk_approve([p.prolific_session_id for p in chunk])
        except ProlificError:
            outcomes.extend(_approve_one(client, p) for p in chunk)
            continue
        for p in chunk:
            p.record_payment(base=True)
            outcomes.append(Outcome(p.public_id, "approve", True, "approved"))
    return outcomes


def _approve_one(client: ProlificClient, p: Participant) -> Outcome:
    try:
        client.approve(p.prolific_session_id)
    except ProlificError as err:
        _failed(p, err)
        return Outcome(p.public_id, "approve", False, err.detail)
    p.record_payment(base=True)
    return Outcome(p.public_id, "approve", True, "approved")


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
            outcomes.extend(_create_and_pay(client, study, prolific_study, group, still_held))
        return outcomes


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


def _note(batch: BonusBatch, note: str) -> None:
    batch.note = note
    batch.save(update_fields=["note", "updated_at"])


def _close(batch: BonusBatch, state: str, note: str) -> None:
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
