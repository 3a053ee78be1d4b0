"""The people who take part: one participant per person and study, and the personal invites
that some of them come by.

A participant record is the only place that holds a recruiter's IDs (needed to pay the person);
everything that leaves for analysis goes through :mod:`studyapp.participants.pseudonyms`, which
knows only the random public id.
"""

from __future__ import annotations

import secrets
from datetime import timedelta
from decimal import ROUND_HALF_UP, Decimal

from django.db import models
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext as _

POLICY_MAX_LENGTH = 4000
RECRUITER_ID_MAX_LENGTH = 64


def new_public_id() -> str:
    """A pseudonym that says nothing about the person and cannot be guessed from another one."""
    return "p" + secrets.token_hex(8)


def new_invite_token() -> str:
    return secrets.token_urlsafe(24)


class Invite(models.Model):
    """A single-use personal link. The token is the only secret; it is never derived from an id."""

    study = models.ForeignKey(
        "participants.Study", on_delete=models.CASCADE, related_name="invites"
    )
    token = models.CharField(max_length=64, unique=True, default=new_invite_token, editable=False)
    label = models.CharField(max_length=100, blank=True, help_text="Staff note, e.g. a cohort.")
    created_at = models.DateTimeField(auto_now_add=True)
    claimed_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"invite {self.token[:6]}… ({self.study.slug})"

    @property
    def claimed(self) -> bool:
        # claimed_at stays set after a withdrawal deletes the participant: the link stays used.
        return self.claimed_at is not None


class Participant(models.Model):
    """One person in one study, tied to one browser session."""

    class Status(models.TextChoices):
        VISITED = "visited"
        CONSENTED = "consented"
        PLAYING = "playing"
        FINISHED = "finished"
        DROPPED = "dropped", "Dropped out"
        SCREENED = "screened", "Screened out"
        DECLINED = "declined"
        WITHDRAWN = "withdrawn"
        FAILED_CHECKS = "failed_checks", "Failed the checks"
        LOBBY_TIMEOUT = "lobby_timeout", "Lobby timed out"
        FULL = "full", "Study full"

    STARTED = (
        Status.CONSENTED,
        Status.PLAYING,
        Status.FINISHED,
        Status.DROPPED,
        Status.WITHDRAWN,
        Status.FAILED_CHECKS,
        Status.LOBBY_TIMEOUT,
        Status.SCREENED,
    )
    ACTIVE = (Status.CONSENTED, Status.PLAYING)
    # A screened person is owed what the study's ``screened_pay`` gives them (maybe nothing).
    PAYABLE = (
        Status.FINISHED,
        Status.DROPPED,
        Status.WITHDRAWN,
        Status.LOBBY_TIMEOUT,
        Status.SCREENED,
    )

    study = models.ForeignKey(
        "participants.Study", on_delete=models.PROTECT, related_name="participants"
    )
    public_id = models.CharField(max_length=32, unique=True, default=new_public_id, editable=False)
    invite = models.OneToOneField(
        Invite, null=True, blank=True, on_delete=models.SET_NULL, related_name="participant"
    )
    # Recruiter IDs: stored only here, only after consent, only to pay the person.
    prolific_pid = models.CharField(max_length=RECRUITER_ID_MAX_LENGTH, blank=True)
    prolific_study_id = models.CharField(max_length=RECRUITER_ID_MAX_LENGTH, blank=True)
    prolific_session_id = models.CharField(max_length=RECRUITER_ID_MAX_LENGTH, blank=True)
    recruiter_pid = models.CharField(max_length=RECRUITER_ID_MAX_LENGTH, blank=True)

    status = models.CharField(max_length=16, choices=Status.choices, default=Status.VISITED)
    condition = models.CharField(
        max_length=64, blank=True, help_text="The condition's name; empty in a one-arm study."
    )
    assignment = models.JSONField(
        default=dict,
        blank=True,
        help_text="How the condition was drawn: block, position in the block, seed.",
    )
    is_pilot = models.BooleanField(
        default=False,
        help_text="A simulated participant (manage.py pilot): left out of exports and payments.",
    )
    group = models.ForeignKey(
        "StudyGroup",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="members",
        help_text="In a group design: the group formed in the first round's lobby, which was "
        "randomised as one unit.",
    )
    check_attempts = models.PositiveIntegerField(default=0)
    checks_passed = models.BooleanField(default=False)
    consent_version = models.CharField(max_length=32, blank=True)
    consented_at = models.DateTimeField(null=True, blank=True)
    practice_passed = models.BooleanField(default=False)
    current_round = models.PositiveIntegerField(
        default=0, help_text="1-based round in play; 0 before the first round."
    )
    rounds_finished = models.PositiveIntegerField(default=0)
    total_reward = models.FloatField(default=0.0)
    policy = models.TextField(blank=True, max_length=POLICY_MAX_LENGTH)
    policy_done = models.BooleanField(default=False)
    questionnaire_answers = models.JSONField(
        default=dict, blank=True, help_text="The questionnaire's answers by item id."
    )
    questionnaire_done = models.BooleanField(default=False)
    attention_failed = models.JSONField(
        default=list, blank=True, help_text="Ids of the attention checks answered wrongly."
    )
    debrief_seen = models.BooleanField(default=False)
    late_answers = models.JSONField(
        default=list,
        blank=True,
        help_text="Answers (policy, questionnaire) submitted after the idle sweep had dropped the "
        'person, kept and flagged: [{"step", "at"}].',
    )
    end_reason = models.CharField(
        max_length=200,
        blank=True,
        help_text="Why the person's study ended as it did (stopped, idle at a table, screened "
        "by an attention check, ...); the export's reason column.",
    )

    visited_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    last_seen_at = models.DateTimeField(null=True, blank=True)

    payment_amount = models.DecimalField(max_digits=8, decimal_places=2, null=True, blank=True)
    bonus = models.DecimalField(max_digits=8, decimal_places=2, null=True, blank=True)
    # Everything owed is paid (base and bonus); the two parts are recorded apart below, because
    # on Prolific they are paid apart: the base by approving the submission, the rest as a bonus.
    paid = models.BooleanField(default=False)
    paid_at = models.DateTimeField(null=True, blank=True)
    base_paid_at = models.DateTimeField(
        null=True, blank=True, help_text="When the submission was approved (the base pay)."
    )
    bonus_paid_at = models.DateTimeField(
        null=True, blank=True, help_text="When what is paid as a bonus was paid."
    )
    bonus_batch_id = models.CharField(
        max_length=64,
        blank=True,
        help_text="The recruiter's bulk bonus payment this bonus belongs to, once created; a "
        "later run pays this one again rather than create a second.",
    )
    payment_error = models.TextField(
        blank=True, help_text="What the recruiter's API answered the last time it refused."
    )

    class Meta:
        indexes = [models.Index(fields=["study", "status"])]
        constraints = [
            # On Prolific the PROLIFIC_PID is the person: one participant per ID and study, which
            # a second browser with the same link rejoins (identity.returning_participant).
            models.UniqueConstraint(
                fields=["study", "prolific_pid"],
                condition=~Q(prolific_pid=""),
                name="one_participant_per_prolific_id",
            )
        ]

    def __str__(self) -> str:
        return self.public_id

    @property
    def has_consented(self) -> bool:
        return self.consented_at is not None and self.consent_version == self.study.consent_version

    @property
    def time_spent(self) -> timedelta | None:
        """From consent to the end, or to the last page seen for someone who left early."""
        end = self.finished_at or self.last_seen_at
        if self.started_at is None or end is None:
            return None
        return end - self.started_at

    @property
    def payment_status(self) -> str:
        if self.is_pilot:
            return "pilot"  # a simulated participant is never paid
        if self.paid:
            return "paid"
        if self.status == self.Status.SCREENED and not (self.payment_amount or self.bonus):
            return "not due"  # the study pays nothing to those screened out
        return "owed" if self.status in self.PAYABLE else "not due"

    @property
    def completion_code(self) -> str:
        study = self.study
        if self.status == self.Status.FINISHED:
            return study.code_finished
        if self.status in (self.Status.DROPPED, self.Status.WITHDRAWN):
            return study.code_dropped
        if self.status == self.Status.SCREENED:
            return study.code_screened
        if self.status == self.Status.FAILED_CHECKS:
            return study.code_failed_checks
        if self.status == self.Status.LOBBY_TIMEOUT:
            return study.code_lobby_timeout
        return ""

    @property
    def code_label(self) -> str:
        """What the code is called on the last page: the recruiter pays each kind differently, so
        someone who stopped early must not read that they completed the study."""
        if self.status in (self.Status.DROPPED, self.Status.WITHDRAWN, self.Status.LOBBY_TIMEOUT):
            return _("Your code for the time you gave")
        if self.status in (self.Status.DECLINED, self.Status.SCREENED):
            return _("Your code")
        return _("Your completion code")

    def settle_payment(self) -> None:
        """Fix what is owed when the person stops: the full amount plus the bonus rule for those
        who finished, the share of rounds played for those who dropped out (paid for their time)."""
        study = self.study
        cents = Decimal("0.01")
        if self.status == self.Status.SCREENED and study.screened_pay == "none":
            self.payment_amount = self.bonus = Decimal("0.00")
            return
        if self.status == self.Status.FINISHED or (
            self.status == self.Status.SCREENED and study.screened_pay == "full"
        ):
            self.payment_amount = study.payment_amount
        else:
            share = Decimal(self.rounds_finished) / Decimal(max(study.rounds, 1))
            self.payment_amount = (study.payment_amount * share).quantize(cents, ROUND_HALF_UP)
        bonus = study.bonus_per_reward * Decimal(str(round(self.total_reward, 4)))
        self.bonus = bonus.quantize(cents, ROUND_HALF_UP)

    @property
    def base_by_approval(self) -> bool:
        """Whether the base pay is paid by approving the submission: only for those who finished.
        Whoever stopped early (dropped, withdrew, lobby timed out) is paid the share they earned
        as a bonus, because their submission is returned or timed out on the recruiter's side."""
        return self.status == self.Status.FINISHED

    @property
    def bonus_due(self) -> Decimal:
        """What is paid as a bonus: the bonus rule's amount, plus the pro-rated base pay of someone
        who stopped early. Zero for pilots and for people who are owed nothing."""
        if self.is_pilot or self.status not in self.PAYABLE:
            return Decimal("0.00")
        due = self.bonus or Decimal("0.00")
        if not self.base_by_approval:
            due += self.payment_amount or Decimal("0.00")
        return due

    @property
    def base_settled(self) -> bool:
        return self.paid or not self.base_by_approval or self.base_paid_at is not None

    @property
    def bonus_settled(self) -> bool:
        return self.paid or self.bonus_due <= 0 or self.bonus_paid_at is not None

    def mark_paid(self) -> None:
        now = timezone.now()
        self.paid = True
        self.paid_at = now
        if self.base_by_approval and self.base_paid_at is None:
            self.base_paid_at = now
        if self.bonus_due > 0 and self.bonus_paid_at is None:
            self.bonus_paid_at = now
        self.save(update_fields=["paid", "paid_at", "base_paid_at", "bonus_paid_at"])

    def record_payment(self, *, base: bool = False, bonus: bool = False) -> None:
        """Record that the base pay (an approved submission) or the bonus was paid; the
        participant counts as paid once both parts are settled."""
        now = timezone.now()
        if base:
            self.base_paid_at = now
        if bonus:
            self.bonus_paid_at = now
        self.payment_error = ""
        if self.base_settled and self.bonus_settled and not self.paid:
            self.paid, self.paid_at = True, now
        self.save(
            update_fields=["base_paid_at", "bonus_paid_at", "payment_error", "paid", "paid_at"]
        )
