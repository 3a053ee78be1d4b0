"""Bulk bonus payments, recorded on our side before Prolific is asked to create one.

Prolific's bonus calls are two (create, then pay) and its pay call is not idempotent (paying one
bulk payment twice pays twice), so every payment run writes down what it is about to do before
doing it: a :class:`BonusBatch` is saved (``creating``) before the create call, gets Prolific's id
(``created``) after it, is marked ``paying`` before the pay call and ``paid`` after it. A run that
was cut off, or that got an error or no answer, leaves its batch in the state that says what may
have happened, and the next run settles it against Prolific before paying anyone again
(studyapp.participants.prolific: settlement, bonuses).
"""

from __future__ import annotations

from decimal import Decimal

from django.db import models


class BonusBatch(models.Model):
    class State(models.TextChoices):
        CREATING = "creating", "creation sent, no id recorded"
        CREATED = "created", "created on Prolific, not paid"
        PAYING = "paying", "pay sent, answer not seen"
        PAID = "paid", "paid"
        ABANDONED = "abandoned", "never created, or left unpaid and replaced"

    OPEN = (State.CREATING, State.CREATED, State.PAYING)

    study = models.ForeignKey(
        "participants.Study", on_delete=models.PROTECT, related_name="bonus_batches"
    )
    prolific_study_id = models.CharField(max_length=64)
    prolific_id = models.CharField(max_length=64, blank=True, db_index=True)
    state = models.CharField(max_length=16, choices=State.choices, default=State.CREATING)
    # [[participant pk, PROLIFIC_PID, "amount"], ...]: what this batch pays, as sent.
    lines = models.JSONField(default=list)
    note = models.TextField(blank=True, help_text="What the last step met (errors, settlements).")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    pay_sent_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["pk"]
        verbose_name = "bonus batch"
        verbose_name_plural = "bonus batches"

    def __str__(self) -> str:
        return f"bonus batch {self.pk} ({self.state}{', ' + self.prolific_id if self.prolific_id else ''})"

    @property
    def participant_pks(self) -> list[int]:
        return [int(line[0]) for line in self.lines]

    def amounts(self) -> dict[str, Decimal]:
        """PROLIFIC_PID -> amount of this batch."""
        return {str(line[1]): Decimal(str(line[2])) for line in self.lines}

    def total(self) -> Decimal:
        return sum(self.amounts().values(), Decimal("0"))


class ApprovalRecord(models.Model):
    """One approval call (bulk or single), written down before Prolific hears of it.

    Approving a submission pays its base reward, and Prolific pays it once however often it is
    asked (a second approval is ignored or refused), so the risk here is not paying twice but a
    ledger that disagrees with Prolific: a call carried out but answered with an error, or a run
    killed before it recorded the answer. Each record is saved (``sent``) and committed before the
    call, marked ``accepted`` with its people's ``base_paid_at`` when Prolific accepts it, and
    otherwise ``settled`` against each submission's own status on Prolific (``GET
    submissions/<id>/``): an approved submission is recorded approved, whatever the call answered.
    """

    class State(models.TextChoices):
        SENT = "sent", "sent, answer not seen"
        ACCEPTED = "accepted", "accepted by Prolific"
        SETTLED = "settled", "settled against Prolific's submission statuses"

    OPEN = (State.SENT,)

    study = models.ForeignKey(
        "participants.Study", on_delete=models.PROTECT, related_name="approval_records"
    )
    bulk = models.BooleanField(default=True, help_text="A bulk approval (else one submission).")
    state = models.CharField(max_length=16, choices=State.choices, default=State.SENT)
    # [[participant pk, SESSION_ID], ...]: the submissions this call approves, as sent.
    lines = models.JSONField(default=list)
    note = models.TextField(blank=True, help_text="What the call answered, and how it settled.")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["pk"]
        verbose_name = "approval record"
        verbose_name_plural = "approval records"

    def __str__(self) -> str:
        kind = "bulk approval" if self.bulk else "approval"
        return f"{kind} {self.pk} ({self.state}, {len(self.lines)} submission(s))"

    @property
    def participant_pks(self) -> list[int]:
        return [int(line[0]) for line in self.lines]
