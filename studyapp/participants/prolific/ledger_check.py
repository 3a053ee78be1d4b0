"""``prolific status``: the ledger against Prolific's own view of every submission of a study,
each disagreement listed; it changes nothing."""

from __future__ import annotations

from dataclasses import dataclass

from studyapp.participants.models import Participant, Study
from studyapp.participants.prolific.client import ProlificClient, ProlificError
from studyapp.participants.prolific.records import (
    APPROVED,
    AWAITING_REVIEW,
    bonus_cents,
    known_paid,
    open_approvals,
    open_batches,
)


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
    known = known_paid(study)
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
        cents = bonus_cents(submission)
        if str(submission.get("status", "")).upper() == APPROVED or cents:
            found.append(
                Disagreement(
                    f"submission {sid}",
                    f"Prolific shows it {submission.get('status')} with bonuses of "
                    f"{cents / 100:.2f}, for someone the ledger does not know",
                )
            )
    return checked, found


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
    cents = bonus_cents(submission)
    if cents != ledger_bonus:
        found.append(
            f"bonuses: the ledger records {ledger_bonus / 100:.2f} {currency} paid, Prolific shows "
            f"{cents / 100:.2f} (a payment made in the last minutes may not show yet)"
        )
    return found
