"""Bulk bonus payments, recorded on our side before Prolific is asked to create one.

Prolific's bonus calls are two (create, then pay) and its pay call is not idempotent (paying one
bulk payment twice pays twice), so every payment run writes down what it is about to do before
doing it: a :class:`BonusBatch` is saved (``creating``) before the create call, gets Prolific's id
(``created``) after it, is marked ``paying`` before the pay call and ``paid`` after it. A run that
was cut off, or that got an error or no answer, leaves its batch in the state that says what may
have happened, and the next run settles it against Prolific before paying anyone again
(studyapp.participants.prolific).
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
