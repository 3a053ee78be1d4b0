"""Studies, the people who take part in them, and personal invites.

A participant record is the only place that holds a recruiter's IDs (needed to pay the person);
everything that leaves for analysis goes through :mod:`studyapp.participants.pseudonyms`, which
knows only the random public id.
"""

from __future__ import annotations

import secrets
from datetime import timedelta
from decimal import ROUND_HALF_UP, Decimal
from urllib.parse import urlencode

from django.core.exceptions import ValidationError
from django.core.validators import URLValidator
from django.db import models
from django.db.models import Q
from django.utils import timezone

from studyapp.participants import questionnaire

POLICY_MAX_LENGTH = 4000
RECRUITER_ID_MAX_LENGTH = 64
# The welcome page's time estimate when staff give none: a Twenty Questions round takes a few
# minutes, and consent, instructions and the practice question a few more.
MINUTES_PER_ROUND = 3
MINUTES_SETUP = 5


def new_public_id() -> str:
    """A pseudonym that says nothing about the person and cannot be guessed from another one."""
    return "p" + secrets.token_hex(8)


def new_invite_token() -> str:
    return secrets.token_urlsafe(24)


def validate_completion_url(value: str) -> None:
    """A recruiter's full address, or a path on this site (the demo study, which has no real
    recruiter, returns people to a local page that shows their code).

    Browsers read a backslash as a slash, so ``/\\evil.example/x`` and ``\\\\evil.example`` go to
    another site just like ``//evil.example``: backslashes, control characters and spaces are
    refused everywhere, and a path must not start with two slashes."""
    if "\\" in value or any(ch.isspace() or ord(ch) < 32 or ord(ch) == 127 for ch in value):
        raise ValidationError("A completion address may not contain backslashes or spaces.")
    if value.startswith("/") and not value.startswith("//"):
        return
    try:
        URLValidator(schemes=["http", "https"])(value)
    except ValidationError:
        raise ValidationError(
            "Enter a full address (https://…) or a path on this site (/…)."
        ) from None


def duration_text(minutes: int) -> str:
    """'about 45 minutes', 'about 1 hour 5 minutes': how long a study takes, in words."""
    hours, rest = divmod(minutes, 60)
    parts = []
    if hours:
        parts.append(f"{hours} hour{'s' if hours > 1 else ''}")
    if rest or not hours:
        parts.append(f"{rest} minute{'s' if rest != 1 else ''}")
    return "about " + " ".join(parts)


class Study(models.Model):
    """What staff set up in the admin: the game, how many cumulative rounds, the consent text, pay."""

    GAME_CHOICES = [
        ("twenty-questions", "Twenty Questions"),
        ("undercover", "Who is Undercover"),
    ]
    DROPOUT_CHOICES = [
        ("replace", "replace the person by the study's agent"),
        ("skip", "skip the person's turns"),
        ("end", "end the table"),
    ]

    # Admin help text is HTML, so no angle brackets here: "<slug>" would vanish as a tag.
    slug = models.SlugField(
        unique=True, help_text="The study link is /s/ followed by this slug, e.g. /s/demo/."
    )
    title = models.CharField(max_length=200)
    game = models.CharField(max_length=32, choices=GAME_CHOICES, default="twenty-questions")
    rounds = models.PositiveIntegerField(default=20, help_text="Cumulative rounds per participant.")
    oracle_spec = models.CharField(
        max_length=200, default="offline:kb", help_text="Model spec of the answering seat."
    )
    seed = models.IntegerField(
        default=0,
        help_text="Round k of every participant plays case k-1 of a model experiment with this "
        "seed (games.cases), so people and models meet the same words.",
    )
    design = models.JSONField(
        default=dict,
        blank=True,
        help_text="The table design: seats (each a person or an agent with spec, setting and "
        "policy), Undercover players and lobby wait_seconds, replacement agent spec. Empty: "
        "a person asks and the oracle spec answers. See docs/studies.md.",
    )
    shown_policy = models.TextField(
        blank=True,
        help_text="A strategy text shown to people before and during the rounds (a condition "
        "can override it). Empty: none.",
    )
    turn_deadline_seconds = models.PositiveIntegerField(
        default=120, help_text="How long a person may take for one turn."
    )
    dropout = models.CharField(
        max_length=16,
        choices=DROPOUT_CHOICES,
        default="replace",
        help_text="What happens to a table when a person misses a turn deadline or leaves.",
    )
    idle_limit_seconds = models.PositiveIntegerField(
        default=600,
        help_text="A person idle this long inside a round is marked as dropped out.",
    )
    checks = models.JSONField(
        default=list,
        blank=True,
        help_text='Comprehension checks: a list of {"question", "options", "answer"}. Empty: none.',
    )
    check_attempts = models.PositiveIntegerField(
        default=2, help_text="Attempts at the comprehension checks before the failed-checks path."
    )
    assignment_seed = models.IntegerField(
        default=0, help_text="Seed of the blocked randomisation of arrivals to conditions."
    )
    version = models.PositiveIntegerField(
        default=1, help_text="Raised by `manage.py study apply --new-version`."
    )
    previous = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="The study this one is a new version of.",
    )
    estimated_minutes = models.PositiveIntegerField(
        null=True,
        blank=True,
        help_text="How long the study takes, shown on the welcome page. Empty: "
        f"{MINUTES_PER_ROUND} minutes a round plus {MINUTES_SETUP} for consent and instructions.",
    )
    payment_amount = models.DecimalField(max_digits=8, decimal_places=2, default=Decimal("10.00"))
    currency = models.CharField(max_length=3, default="USD")
    bonus_per_reward = models.DecimalField(
        max_digits=8,
        decimal_places=2,
        default=Decimal("0.00"),
        help_text="Optional bonus rule: this amount per point of total reward (0 = no bonus).",
    )
    consent_text = models.TextField()
    consent_version = models.CharField(max_length=32, default="1")
    instructions = models.TextField(blank=True)
    policy_question = models.TextField(
        blank=True,
        help_text="Asked after the last round, e.g. 'What strategy would you give a newcomer?' "
        "Leave empty to skip.",
    )
    questionnaire = models.JSONField(
        default=list,
        blank=True,
        help_text="Asked after the policy question: a list of items, each with id, question, "
        "kind (choice, multi, likert, text, number), options, required, and for an attention "
        "check expected. See docs/studies.md. Empty: none.",
    )
    attention_failure = models.CharField(
        max_length=8,
        choices=[
            ("flag", "go on; flag the participant in the export"),
            ("screen", "end with the screened code"),
        ],
        default="flag",
        help_text="What a failed attention check of the questionnaire leads to.",
    )
    debrief_text = models.TextField(
        blank=True,
        help_text="Shown after the questionnaire, before the code: what the study was about "
        "(and, where people were not told, which players were agents). Empty: no debrief page.",
    )
    completion_url = models.CharField(
        max_length=200,
        blank=True,
        validators=[validate_completion_url],
        help_text="Where finishing sends people, e.g. https://app.prolific.com/submissions/complete "
        "(the code is added as ?cc=CODE), or a path on this site.",
    )
    code_finished = models.CharField(max_length=64, blank=True)
    code_dropped = models.CharField(
        max_length=64, blank=True, help_text="For people who stop early; paid for their time."
    )
    code_screened = models.CharField(
        max_length=64, blank=True, help_text="For people who decline consent."
    )
    code_failed_checks = models.CharField(
        max_length=64,
        blank=True,
        help_text="For people who fail the comprehension checks (recruiters usually ask them to "
        "return the study instead; leave empty for that).",
    )
    code_lobby_timeout = models.CharField(
        max_length=64,
        blank=True,
        help_text="For people whose lobby timed out before a table formed; paid for their time.",
    )
    active = models.BooleanField(default=True, help_text="Inactive studies accept nobody new.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name_plural = "studies"

    def __str__(self) -> str:
        return self.title

    def clean(self) -> None:
        """A design that could not be played, or checks without a right answer, are refused; an
        active study must have every model spec usable (parsed, offline names known, provider
        configured). ``manage.py study apply`` and the admin both save through this."""
        from studyapp.participants import design

        errors: dict[str, list[str]] = {}
        try:
            design.normalise(self.game, self.design, self.oracle_spec)
        except design.DesignError as err:
            errors.setdefault("design", []).append(str(err))
        problem = check_list_problem(self.checks)
        if problem:
            errors.setdefault("checks", []).append(problem)
        try:
            self.questionnaire = questionnaire.validate(self.questionnaire)
        except questionnaire.QuestionnaireError as err:
            errors.setdefault("questionnaire", []).append(str(err))
        if self.active and not errors:
            problems = design.study_problems(self) if self.pk else []
            if not self.pk:
                problems = [
                    f"{where}: {why}"
                    for where, spec, role in design.own_specs(self)
                    if (why := design.spec_problem(spec, self.game, role))
                ]
            if problems:
                errors.setdefault("active", []).append(
                    "This study cannot be active while a model spec fails: " + "; ".join(problems)
                )
        if errors:
            raise ValidationError(errors)

    @property
    def duration_minutes(self) -> int:
        return self.estimated_minutes or MINUTES_SETUP + MINUTES_PER_ROUND * self.rounds

    @property
    def duration(self) -> str:
        return duration_text(self.duration_minutes)

    def completion_link(self, code: str) -> str:
        """The recruiter's return address with the code, or '' when the study has none."""
        if not self.completion_url:
            return ""
        try:  # a row saved past the admin form (before this check existed) must not redirect away
            validate_completion_url(self.completion_url)
        except ValidationError:
            return ""
        joiner = "&" if "?" in self.completion_url else "?"
        return f"{self.completion_url}{joiner}{urlencode({'cc': code})}"

    @property
    def recruiter_name(self) -> str:
        return "Prolific" if "prolific" in self.completion_url.lower() else "the recruitment site"

    @property
    def return_instruction(self) -> str:
        """What people who cannot take part do instead of entering a code (Prolific's way)."""
        return (
            f"Please return the study on {self.recruiter_name} (the Return button on the study's "
            "page there), so your place goes to someone else. You need no completion code."
        )

    def progress(self) -> dict[str, int]:
        """Counts for the admin's live view of the study."""
        statuses = self.participants.values_list("status", flat=True)
        counts = {status: 0 for status, _ in Participant.Status.choices}
        for status in statuses:
            counts[status] += 1
        started = sum(counts[s] for s in Participant.STARTED)
        return {
            "visited": len(statuses),
            "started": started,
            "playing": counts[Participant.Status.PLAYING] + counts[Participant.Status.CONSENTED],
            "finished": counts[Participant.Status.FINISHED],
            "dropped": counts[Participant.Status.DROPPED] + counts[Participant.Status.WITHDRAWN],
            "declined": counts[Participant.Status.DECLINED]
            + counts[Participant.Status.SCREENED]
            + counts[Participant.Status.FAILED_CHECKS]
            + counts[Participant.Status.FULL],
        }


def check_list_problem(checks: object) -> str:
    """Why a list of comprehension checks is malformed ('' when it is fine)."""
    if not isinstance(checks, list):
        return 'Checks must be a list of {"question", "options", "answer"}.'
    for number, check in enumerate(checks, start=1):
        if not isinstance(check, dict) or set(check) != {"question", "options", "answer"}:
            return f'Check {number} needs exactly "question", "options" and "answer".'
        options = check["options"]
        if not isinstance(options, list) or len(options) < 2:
            return f"Check {number} needs at least two options."
        if check["answer"] not in options:
            return f"Check {number}: the answer must be one of its options."
    return ""


class Condition(models.Model):
    """One arm of a study: a name, a quota and overrides of the study's design, oracle spec or
    the policy shown to people (keys ``design``, ``oracle_spec``, ``shown_policy``)."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="conditions")
    name = models.SlugField(max_length=64)
    quota = models.PositiveIntegerField(
        default=0, help_text="How many people this condition takes (0 = no limit)."
    )
    overrides = models.JSONField(default=dict, blank=True)
    position = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["study", "position", "id"]
        constraints = [
            models.UniqueConstraint(fields=["study", "name"], name="unique_condition_name")
        ]

    def __str__(self) -> str:
        return f"{self.study.slug}/{self.name}"

    def clean(self) -> None:
        """Overrides name only what a condition may change, and the merged design must play.
        Its model specs must be usable only while the study is active, as the study's own are
        (an inactive draft may name a provider whose key is not set yet)."""
        from studyapp.participants import design

        overrides = self.overrides or {}
        if not isinstance(overrides, dict):
            raise ValidationError({"overrides": "Overrides must be an object."})
        unknown = set(overrides) - design.OVERRIDE_KEYS
        if unknown:
            raise ValidationError(
                {
                    "overrides": f"Unknown keys {', '.join(sorted(unknown))}; a condition may "
                    "override design, oracle_spec and shown_policy."
                }
            )
        if self.study_id is None:
            return
        study = self.study
        merged = dict(study.design or {})
        merged.update(overrides.get("design") or {})
        oracle = overrides.get("oracle_spec") or study.oracle_spec
        try:
            normalised = design.normalise(study.game, merged, oracle)
        except design.DesignError as err:
            raise ValidationError({"overrides": str(err)}) from None
        if not study.active:
            return
        problems = [
            why
            for spec, role in design.design_specs(study.game, normalised)
            if (why := design.spec_problem(spec, study.game, role))
        ]
        if problems:
            raise ValidationError({"overrides": "; ".join(problems)})


class Invite(models.Model):
    """A single-use personal link. The token is the only secret; it is never derived from an id."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="invites")
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
    )
    ACTIVE = (Status.CONSENTED, Status.PLAYING)
    PAYABLE = (Status.FINISHED, Status.DROPPED, Status.WITHDRAWN, Status.LOBBY_TIMEOUT)

    study = models.ForeignKey(Study, on_delete=models.PROTECT, related_name="participants")
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
            # a second browser with the same link rejoins (flow.returning_participant).
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
            return "Your code for the time you gave"
        if self.status in (self.Status.DECLINED, self.Status.SCREENED):
            return "Your code"
        return "Your completion code"

    def settle_payment(self) -> None:
        """Fix what is owed when the person stops: the full amount plus the bonus rule for those
        who finished, the share of rounds played for those who dropped out (paid for their time)."""
        study = self.study
        cents = Decimal("0.01")
        if self.status == self.Status.FINISHED:
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


class Round(models.Model):
    """One game of a participant's sequence: round k of the study's cumulative rounds."""

    participant = models.ForeignKey(Participant, on_delete=models.CASCADE, related_name="round_set")
    number = models.PositiveIntegerField(help_text="1-based")
    table = models.ForeignKey("tables.Table", on_delete=models.PROTECT, related_name="+")
    seat = models.PositiveSmallIntegerField(
        default=0, help_text="The participant's seat at the table (people may share a table)."
    )
    reward = models.FloatField(null=True, blank=True)
    started_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["participant", "number"], name="one_table_per_round")
        ]
        ordering = ["number"]

    def __str__(self) -> str:
        return f"{self.participant} round {self.number}"
