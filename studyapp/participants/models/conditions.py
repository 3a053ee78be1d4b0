"""The arms of a study (:class:`Condition`) and, in a group design, the groups randomised to
them as one unit (:class:`StudyGroup`)."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import models
from django.utils import timezone

from studyapp.participants import design
from studyapp.participants.models.studies import Study


class Condition(models.Model):
    """One arm of a study: a name, a quota and overrides of the study's design, oracle spec or
    the policy shown to people (keys ``design``, ``oracle_spec``, ``shown_policy``)."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="conditions")
    name = models.SlugField(max_length=64)
    quota = models.PositiveIntegerField(
        default=0, help_text="How many people this condition takes (0 = no limit)."
    )
    group_quota = models.PositiveIntegerField(
        default=0,
        help_text="In a group design (several people at a table): how many groups this "
        "condition takes (0 = no limit). The people quota counts too.",
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


class StudyGroup(models.Model):
    """The people of a group design who met in the first round's lobby: the unit that is
    randomised to a condition (see :mod:`studyapp.participants.groups`)."""

    study = models.ForeignKey(Study, on_delete=models.PROTECT, related_name="groups")
    number = models.PositiveIntegerField(help_text="1-based, in the order groups formed.")
    is_pilot = models.BooleanField(default=False)
    condition = models.CharField(max_length=64, blank=True)
    size = models.PositiveSmallIntegerField(help_text="How many people the group formed with.")
    assignment = models.JSONField(
        default=dict, blank=True, help_text="How the condition was drawn: block, position, seed."
    )
    lobby_table = models.PositiveIntegerField(
        null=True, blank=True, help_text="The lobby table the group formed at."
    )
    formed_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["study", "number"]
        constraints = [
            models.UniqueConstraint(fields=["study", "number"], name="unique_group_number")
        ]

    def __str__(self) -> str:
        return f"{self.study.slug} group {self.number}"
