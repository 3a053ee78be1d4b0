"""What a study tells its recruiter and pays, and what its launch spends: the reward, the
endings' codes and the Prolific action each needs, the return link; the places asked of Prolific
and the Prolific study drafted for it; the cap on model spend and what happens when it is reached
(docs/participants.md, Launching a study). An abstract part of
:class:`~studyapp.participants.models.studies.Study`, kept here so each module stays readable."""

from __future__ import annotations

from decimal import Decimal
from urllib.parse import urlencode

from django.core.exceptions import ValidationError
from django.db import models
from django.utils.translation import gettext as _

from studyapp.participants import design, payrules, prices, questionnaire
from studyapp.participants.models.validation import (
    validate_amount,
    validate_code,
    validate_completion_url,
)

# What a study does once its model budget could be passed by its next table
# (studyapp.participants.budget).
OVER_BUDGET_CHOICES = [
    ("full", "show the study as full: nobody new starts"),
    ("stand-in", "seat the design's stand-in agent in the model's place"),
]


# The fields whose change clears a reached budget (StudyRecruitment.budget_reopened).
BUDGET_INPUTS = ("model_budget", "model_prices", "currency", "over_budget")


class StudyRecruitment(models.Model):
    """The recruitment, pay and launch fields of a study (abstract: they are the study's own
    columns)."""

    payment_amount = models.DecimalField(
        max_digits=8, decimal_places=2, default=Decimal("10.00"), validators=[validate_amount]
    )
    currency = models.CharField(max_length=3, default="USD")
    bonus_per_reward = models.DecimalField(
        max_digits=8,
        decimal_places=2,
        default=Decimal("0.00"),
        validators=[validate_amount],
        help_text="Optional bonus rule: this amount per point of total reward (0 = no bonus).",
    )
    screened_pay = models.CharField(
        max_length=8,
        choices=payrules.RULE_CHOICES,
        default="none",
        help_text="What people screened out by a failed attention check are paid (say so in "
        "the consent text); the page that ends their study tells them.",
    )
    dropped_pay = models.CharField(
        max_length=8,
        choices=payrules.RULE_CHOICES,
        default="played",
        help_text="What people who stop before the end are paid (they stopped, the idle policy "
        "dropped them, staff marked them dropped, or they withdrew); every page that tells "
        "them what they are paid says this rule.",
    )
    lobby_timeout_pay = models.CharField(
        max_length=8,
        choices=payrules.RULE_CHOICES,
        default="time",
        help_text="What people whose lobby timed out (lobby_timeout = exit) are paid: by "
        "default the minutes they gave, since they waited through no fault of theirs.",
    )
    code_actions = models.JSONField(
        default=payrules.default_actions,
        blank=True,
        help_text="The Prolific action each ending's code needs, by ending (finished, dropped, "
        "screened, lobby_timeout, failed_checks): approve (Prolific pays the reward; the "
        "ending must pay in full), return (what is owed is paid as a bonus) or reject (nothing "
        "paid). Set each code on Prolific with this action. See docs/participants.md.",
    )
    completion_url = models.CharField(
        max_length=200,
        blank=True,
        validators=[validate_completion_url],
        help_text="Where finishing sends people, e.g. https://app.prolific.com/submissions/complete "
        "(the code is added as ?cc=CODE), or a path on this site.",
    )
    code_finished = models.CharField(max_length=64, blank=True, validators=[validate_code])
    code_dropped = models.CharField(
        max_length=64,
        blank=True,
        validators=[validate_code],
        help_text="For people who stop early; paid by the study's dropped_pay rule.",
    )
    code_screened = models.CharField(
        max_length=64,
        blank=True,
        validators=[validate_code],
        help_text="For people screened out by a failed attention check (attention_failure = "
        "screen).",
    )
    code_failed_checks = models.CharField(
        max_length=64,
        blank=True,
        validators=[validate_code],
        help_text="For people who fail the comprehension checks (recruiters usually ask them to "
        "return the study instead; leave empty for that).",
    )
    code_lobby_timeout = models.CharField(
        max_length=64,
        blank=True,
        validators=[validate_code],
        help_text="For people whose lobby timed out before a table formed; paid by the study's "
        "lobby_timeout_pay rule.",
    )
    places = models.PositiveIntegerField(
        null=True,
        blank=True,
        help_text="The places asked of Prolific (set by manage.py prolific draft --places N).",
    )
    prolific_study = models.CharField(
        max_length=64,
        blank=True,
        help_text="Prolific's id of the study drafted for this one (manage.py prolific draft); "
        "empty until drafted.",
    )
    model_budget = models.DecimalField(
        max_digits=10,
        decimal_places=2,
        null=True,
        blank=True,
        validators=[validate_amount],
        help_text="The most this study may spend on model calls, in its currency (empty: no "
        "cap). No new table opens with a model once its next table could pass it.",
    )
    model_prices = models.JSONField(
        default=dict,
        blank=True,
        help_text="Prices per million tokens, in the study's currency, that replace the site's "
        '(MODEL_PRICES), by model spec: {"openai:gpt-4o-mini": ["0.15", "0.60"]} (input, output).',
    )
    over_budget = models.CharField(
        max_length=8,
        choices=OVER_BUDGET_CHOICES,
        default="full",
        help_text="What happens once the model budget is reached; a game in play is never cut.",
    )
    budget_reached_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="When the model budget was first reached (staff were told then).",
    )

    class Meta:
        abstract = True

    def setup_problems(self) -> list[tuple[str, str]]:
        """``(field, why)`` for an active study that returns people to Prolific without the codes
        they need there (finished; dropped, since those who stop are paid by the study's
        dropped_pay rule or asked to return; screened, when an attention check can screen people
        out). Amounts and the codes' form are
        the fields' own validators (:data:`validate_amount`, :data:`validate_code`)."""
        problems = []
        if self.active and self.recruiter_name == "Prolific":
            needed = ["code_finished", "code_dropped"]
            screens = self.attention_failure == "screen" and bool(
                questionnaire.checks(self.questionnaire)
            )
            if screens:
                needed.append("code_screened")
            for field in needed:
                if not getattr(self, field):
                    problems.append(
                        (field, "An active Prolific study needs this code: Prolific pays by it.")
                    )
            if self.payment_amount is not None and self.payment_amount <= 0:
                problems.append(
                    (
                        "payment_amount",
                        "An active Prolific study pays a reward above zero (Prolific pays it "
                        "when a submission is approved).",
                    )
                )
        return problems

    def budget_reopened(self) -> bool:
        """Clear ``budget_reached_at`` when the budget, the prices, the currency or what happens
        past the budget changed since the stored row: the budget is then checked afresh as the
        next table opens (and reached again, and told again, if the new one could still be
        passed). True when it was cleared."""
        if self.pk is None or self.budget_reached_at is None:
            return False
        stored = type(self).objects.filter(pk=self.pk).values(*BUDGET_INPUTS).first()
        if stored is None or all(stored[f] == getattr(self, f) for f in BUDGET_INPUTS):
            return False
        self.budget_reached_at = None
        return True

    def launch_problems(self) -> list[tuple[str, str]]:
        """``(field, why)`` for model prices that are not pairs of amounts per million tokens
        (input, output), and a model budget that could not be held: one of the study's models
        has no price to count its spend by."""
        problems = [("model_prices", why) for why in prices.price_problems(self.model_prices)]
        if self.model_budget is not None and not problems:
            found = design.model_specs(self) if self.pk else design.own_specs(self)
            specs = {spec for _, spec, _ in found}
            unpriced = sorted(spec for spec in specs if prices.price_of(self, spec) is None)
            if unpriced:
                problems.append(
                    (
                        "model_budget",
                        f"A model budget needs a price for every model the study calls; none for "
                        f"{', '.join(unpriced)} in {self.currency}: add it to model_prices.",
                    )
                )
        return problems

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
        return (
            "Prolific" if "prolific" in self.completion_url.lower() else _("the recruitment site")
        )

    @property
    def return_instruction(self) -> str:
        """What people who cannot take part do instead of entering a code (Prolific's way)."""
        return _(
            "Please return the study on %(recruiter)s (the Return button on the study's page "
            "there), so your place goes to someone else. You need no completion code."
        ) % {"recruiter": self.recruiter_name}
