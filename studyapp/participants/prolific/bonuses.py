"""Paying what is owed as bonuses: open batches settled first (``settlement``), then one new
bulk payment per Prolific study, recorded before it is created and before it is paid."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable

from django.utils import timezone

from studyapp import locks
from studyapp.participants.models import BonusBatch, Participant, Study
from studyapp.participants.prolific.client import ProlificClient, ProlificError
from studyapp.participants.prolific.records import (
    APPROVED,
    Outcome,
    close,
    lock_name,
    note,
    open_batches,
    record_failure,
)
from studyapp.participants.prolific.settlement import pay_batch, settle, uncertain


def to_pay(study: Study) -> list[Participant]:
    """Participants with a bonus (or an early stop's share) owed and not yet paid."""
    candidates = study.participants.filter(
        status__in=Participant.PAYABLE, is_pilot=False, paid=False, bonus_paid_at__isnull=True
    ).order_by("pk")
    in_open = {pk for batch in open_batches(study) for pk in batch.participant_pks}
    return [p for p in candidates if p.bonus_due > 0 and p.pk not in in_open]


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
            record_failure(p, ProlificError(detail))
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
        if uncertain(err):
            note(batch, f"creation not confirmed: {err.detail}")
            for p in group:
                record_failure(p, err)
            detail = (
                f"bonus batch {batch.pk}: Prolific did not confirm creating it ({err.detail}); "
                "the next run settles it before paying anyone again"
            )
            return [Outcome(p.public_id, "bonus", False, detail, p.bonus_due) for p in group]
        close(batch, BonusBatch.State.ABANDONED, f"refused: {err.detail}")
        if len(group) == 1:
            record_failure(group[0], err)
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
    return pay_batch(client, batch, still_held)
