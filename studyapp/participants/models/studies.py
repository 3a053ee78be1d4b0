"""Studies as staff set them up: the game, the rounds, consent and its versions, the codes and pay.

A study's consent text is kept per version as people agreed to it
(:class:`~studyapp.participants.models.consent.ConsentVersion`), so changing the text after anyone
agreed never rewrites what they saw. What the fields may hold is
:mod:`~studyapp.participants.models.validation`.
"""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator
from django.db import models, transaction
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from studyapp.participants import design, payrules, questionnaire
from studyapp.participants.models.consent import ConsentVersion, next_consent_version
from studyapp.participants.models.people import Participant
from studyapp.participants.models.recruitment import BUDGET_INPUTS, StudyRecruitment
from studyapp.participants.models.validation import (
    check_list_problem,
    parse_amount,
    validate_currency,
)
from studyapp.tables import think

# The idle policy's bounds (docs/studies.md): turns missed in a row, and seconds without a sign of
# life (a day at most: a longer "limit" is a typo, not a policy).
MAX_MISSED_TURNS = 20
MAX_IDLE_LIMIT_SECONDS = 24 * 3600

# The welcome page's time estimate when staff give none: a Twenty Questions round takes a few
# minutes, and consent, instructions and the practice question a few more.
MINUTES_PER_ROUND = 3
MINUTES_SETUP = 5


def default_think_seconds() -> dict[str, list[float]]:
    """How long a blinded agent waits before a move, by kind of move, as people take: a vote or
    a yes/no answer is quicker than a clue or a question typed with care
    (:data:`studyapp.tables.think.DEFAULT_THINK_SECONDS`)."""
    return think.default_bounds()


def think_seconds_problem(value: object) -> str:
    """Why ``value`` is not think-time bounds ('' when it is): one [shortest, longest] pair for
    every move, or a table of pairs by kind of move (:func:`studyapp.tables.think.bounds_problem`)."""
    return think.bounds_problem(value)


def duration_text(minutes: int) -> str:
    """'about 45 minutes', 'about 1 hour 5 minutes': how long a study takes, in words (in the
    language active now)."""
    hours, rest = divmod(minutes, 60)
    parts = []
    if hours:
        parts.append(ngettext("%(n)d hour", "%(n)d hours", hours) % {"n": hours})
    if rest or not hours:
        parts.append(ngettext("%(n)d minute", "%(n)d minutes", rest) % {"n": rest})
    return _("about %(duration)s") % {"duration": " ".join(parts)}


class Study(StudyRecruitment):
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
        help_text="What happens to a person's seat when they leave the study (they stop, or are "
        "past the idle policy below): an agent takes it over, its turns are skipped, or the "
        "game ends.",
    )
    missed_turns_limit = models.PositiveSmallIntegerField(
        default=3,
        validators=[MaxValueValidator(MAX_MISSED_TURNS)],
        help_text="A missed turn deadline is a missed turn: the table plays that turn for the "
        "person (a pass) and they keep their seat. This many missed in a row and they count as "
        "having left the study (dropped out). 0: never for missed turns alone.",
    )
    idle_limit_seconds = models.PositiveIntegerField(
        default=600,
        validators=[MaxValueValidator(MAX_IDLE_LIMIT_SECONDS)],
        help_text="A person who shows no sign of life this long (no move at their table, their "
        "missed turns included; between games no page open, its heartbeat included) is marked "
        "as dropped out. The site's own outages do not count. 0: no limit.",
    )
    agents_disclosed = models.BooleanField(
        default=True,
        help_text="People see which seats are agents. Off: during play every seat shows only its "
        "player name, agents take a person's think time (below), and the last page discloses "
        "that some players were agents.",
    )
    agent_think_seconds = models.JSONField(
        default=default_think_seconds,
        blank=True,
        help_text="When agents are not disclosed: each agent move waits a time drawn from "
        "[shortest, longest] seconds, as a person would think: one pair for every move, or pairs "
        'by kind of move, e.g. {"clue": [5, 40], "vote": [3, 20]} (a kind left out takes its '
        "default).",
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
    about_agents_text = models.TextField(
        blank=True,
        help_text="The 'About the other players' block of the last page (the debrief, else the "
        "page with the code): what the agents were. Empty: the built-in text, which says whether "
        "agents were marked during play and names them (rule-based programs, or the model).",
    )
    welcome_text = models.TextField(
        blank=True,
        help_text="The welcome page's opening paragraph (what the study is). Empty: the built-in "
        "text, which names the game and, for Who is Undercover, says that the other players are "
        "people and computer agents.",
    )
    language = models.CharField(
        max_length=8,
        choices=settings.LANGUAGES,
        default="en",
        help_text="The language of the participant pages and game pages (consent, instructions "
        "and questions are shown as written: write them in this language).",
    )
    active = models.BooleanField(default=True, help_text="Inactive studies accept nobody new.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name_plural = "studies"

    def __str__(self) -> str:
        return self.title

    def clean(self) -> None:
        """A design that could not be played, checks without a right answer, or custom instructions
        without checks of their own are refused; an active study must have every model spec usable (parsed, offline names known, provider
        configured). ``manage.py study apply`` and the admin both save through this."""
        errors: dict[str, list[str]] = {}
        try:
            design.normalise(self.game, self.design, self.oracle_spec)
        except design.DesignError as err:
            errors.setdefault("design", []).append(str(err))
        problem = check_list_problem(self.checks)
        if problem:
            errors.setdefault("checks", []).append(problem)
        if (
            self.language != "en"
            and self.game == "twenty-questions"
            and self.oracle_spec.startswith("offline:")
        ):
            errors.setdefault("language", []).append(
                "The offline oracle reads English questions only: a Twenty Questions study in "
                "another language needs a model oracle (e.g. openai:gpt-4o-mini)."
            )
        elif self.language != "en":
            for problem in design.language_problems(self):
                errors.setdefault("language", []).append(problem)
        for problem in design.deadline_problems(self):
            errors.setdefault("turn_deadline_seconds", []).append(problem)
        problem = think_seconds_problem(self.agent_think_seconds)
        if problem:
            errors.setdefault("agent_think_seconds", []).append(problem)
        if self.instructions.strip() and not self.checks:
            # The default checks ask the game's default rules (games/<game>/rules.py), which
            # custom instructions replace: they could ask about a rule these do not state.
            errors.setdefault("checks", []).append(
                "A study with its own instructions needs its own comprehension checks: the "
                "default checks ask about the default rules, which these instructions replace."
            )
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
                ] + design.seating_problems(self)
            if problems:
                errors.setdefault("active", []).append(
                    "This study cannot be active while a model spec fails or an arm cannot seat "
                    "its people: " + "; ".join(problems)
                )
        try:
            validate_currency(self.currency)
        except ValidationError as err:
            errors.setdefault("currency", []).extend(err.messages)
        for field in ("payment_amount", "bonus_per_reward", "model_budget"):
            value = getattr(self, field)
            if value is None:
                continue
            try:
                parse_amount(value if isinstance(value, str) else str(value), field, self.currency)
            except ValidationError as err:
                errors.setdefault(field, []).extend(err.messages)
        for field, problem in payrules.problems(self):
            errors.setdefault(field, []).append(problem)
        for field, problem in [*self.setup_problems(), *self.launch_problems()]:
            errors.setdefault(field, []).append(problem)
        if errors:
            raise ValidationError(errors)

    @property
    def idle_limit_minutes(self) -> int:
        """The idle limit as people read it, in whole minutes (rounded up; 0: no limit)."""
        return -(-int(self.idle_limit_seconds or 0) // 60)

    def save(self, *args: object, **kwargs: object) -> None:
        """Save, keeping consent versions honest: a consent text that changes after anyone agreed
        to its version is saved under a new version (:meth:`settled_consent_version`), and every
        version's text is kept (:class:`ConsentVersion`). Every path that edits a study (the
        admin, ``study apply``, the shell) comes through here. A change to the budget or the
        prices clears a reached budget (:meth:`budget_reopened`)."""
        update_fields = kwargs.get("update_fields")
        budget_fields = update_fields is None or bool(set(BUDGET_INPUTS) & set(update_fields))
        if budget_fields and self.budget_reopened() and update_fields is not None:
            kwargs["update_fields"] = update_fields = [*update_fields, "budget_reached_at"]
        consent = {"consent_text", "consent_version"}
        if update_fields is not None and not consent & set(update_fields):
            super().save(*args, **kwargs)
            return
        with transaction.atomic():
            self.consent_version = self.settled_consent_version()
            if update_fields is not None:
                kwargs["update_fields"] = list(set(update_fields) | consent)
            super().save(*args, **kwargs)
            ConsentVersion.record(self)

    def settled_consent_version(self) -> str:
        """The version this study's consent text is saved under. It stays as given unless people
        already agreed to that version with another text: then the text is the version it was
        agreed to before (a change undone), or a new version (:func:`next_consent_version`).
        A version nobody agreed to yet is a draft whose text may still change."""
        if self.pk is None:
            return self.consent_version
        texts = dict(
            ConsentVersion.objects.filter(study_id=self.pk)
            .order_by("created_at", "pk")
            .values_list("version", "text")
        )
        stored = Study.objects.filter(pk=self.pk).values("consent_version", "consent_text").first()
        if stored:  # a study saved before versions were recorded
            texts.setdefault(stored["consent_version"], stored["consent_text"])
        recorded = texts.get(self.consent_version)
        if recorded is None or recorded == self.consent_text:
            return self.consent_version
        agreed = Participant.objects.filter(
            study_id=self.pk, consent_version=self.consent_version, consented_at__isnull=False
        ).exists()
        if not agreed:
            return self.consent_version
        same = [version for version, text in texts.items() if text == self.consent_text]
        return same[-1] if same else next_consent_version(self.consent_version, set(texts))

    @property
    def duration_minutes(self) -> int:
        return self.estimated_minutes or MINUTES_SETUP + MINUTES_PER_ROUND * self.rounds

    @property
    def duration(self) -> str:
        return duration_text(self.duration_minutes)

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
