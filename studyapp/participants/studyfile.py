"""A study as a TOML file: what ``manage.py study export`` writes and ``study apply`` reads.

The file's keys are the study's own field names (the admin form edits the same fields), plus
``design`` (the table design), ``checks`` (the comprehension checks) and ``conditions`` (each
with ``name``, ``quota``, ``group_quota``, ``position`` and ``overrides``). TOML has no null, so a missing key
means "empty": a seat without ``policy`` has none, an absent ``estimated_minutes`` is computed.
docs/studies.md shows the format with two examples.

Applying a file to a study that already has participants refuses any change that would make
their data incomparable with what comes next (the game, the table design, the word sequence's
seed, the number of rounds, the oracle, the conditions' overrides); ``--new-version`` saves such a
change as a new study (``<slug>-v<N>``) that points back at the old one, whose link is closed.
A consent text changed after people agreed to its version is saved as a new consent version
(:meth:`Study.save`), and the result says so.
"""

from __future__ import annotations

import tomllib
from decimal import Decimal, InvalidOperation
from typing import Any

import tomli_w
from django.core.exceptions import ValidationError
from django.db import transaction

from studyapp.participants.models import Condition, Participant, Study

SCALAR_FIELDS = [
    "slug",
    "title",
    "game",
    "language",
    "active",
    "version",
    "rounds",
    "seed",
    "oracle_spec",
    "estimated_minutes",
    "payment_amount",
    "currency",
    "bonus_per_reward",
    "consent_version",
    "consent_text",
    "instructions",
    "shown_policy",
    "check_attempts",
    "policy_question",
    "attention_failure",
    "debrief_text",
    "about_agents_text",
    "welcome_text",
    "turn_deadline_seconds",
    "dropout",
    "idle_limit_seconds",
    "assignment_seed",
    "agents_disclosed",
    "agent_think_seconds",
    "completion_url",
    "code_finished",
    "code_dropped",
    "code_screened",
    "code_failed_checks",
    "code_lobby_timeout",
]
MONEY_FIELDS = ("payment_amount", "bonus_per_reward")
# What makes collected data incomparable with what would come after a change.
PROTECTED_FIELDS = ("game", "design", "seed", "rounds", "oracle_spec")
KNOWN_KEYS = set(SCALAR_FIELDS) | {"design", "checks", "conditions", "questionnaire"}


class StudyFileError(ValueError):
    """A file that cannot be applied; the message says what and where."""


def _drop_none(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _drop_none(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_drop_none(v) for v in value]
    return value


def study_dict(study: Study) -> dict[str, Any]:
    data: dict[str, Any] = {}
    for field in SCALAR_FIELDS:
        value = getattr(study, field)
        if field in MONEY_FIELDS:
            value = str(value)
        data[field] = value
    data["design"] = study.design or {}
    data["checks"] = study.checks or []
    data["questionnaire"] = study.questionnaire or []
    data["conditions"] = [
        {
            "name": c.name,
            "quota": c.quota,
            "group_quota": c.group_quota,
            "position": c.position,
            "overrides": c.overrides,
        }
        for c in study.conditions.all()
    ]
    return _drop_none(data)


def dumps(study: Study) -> str:
    header = f"# Study file of {study.slug} (manage.py study apply FILE); see docs/studies.md\n"
    return header + tomli_w.dumps(study_dict(study), multiline_strings=True)


def loads(text: str) -> dict[str, Any]:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise StudyFileError(f"not valid TOML: {err}") from None
    unknown = set(data) - KNOWN_KEYS
    if unknown:
        raise StudyFileError(f"unknown keys: {', '.join(sorted(unknown))}")
    for key in ("slug", "title", "consent_text"):
        if not data.get(key):
            raise StudyFileError(f"the file needs {key!r}")
    for field in MONEY_FIELDS:
        if field in data:
            try:
                data[field] = Decimal(str(data[field]))
            except InvalidOperation:
                raise StudyFileError(f"{field} must be an amount such as '10.00'") from None
    conditions = data.get("conditions", [])
    if not isinstance(conditions, list) or not all(isinstance(c, dict) for c in conditions):
        raise StudyFileError("conditions must be a list of tables ([[conditions]])")
    names = [c.get("name") for c in conditions]
    if any(not name for name in names) or len(set(names)) != len(names):
        raise StudyFileError("every condition needs a name of its own")
    return data


def has_data(study: Study) -> bool:
    """Someone other than a pilot has started: changing the design now would mix two studies."""
    return study.participants.filter(is_pilot=False, status__in=Participant.STARTED).exists()


def _conditions_key(conditions: list[dict[str, Any]]) -> list[tuple[str, Any]]:
    return sorted((c["name"], _drop_none(c.get("overrides") or {})) for c in conditions)


def protected_changes(study: Study, data: dict[str, Any]) -> list[str]:
    current = study_dict(study)
    changed = [
        field
        for field in PROTECTED_FIELDS
        if field in data
        and _drop_none(data[field]) != current.get(field, {} if field == "design" else None)
    ]
    if "conditions" in data and _conditions_key(data["conditions"]) != _conditions_key(
        current["conditions"]
    ):
        changed.append("conditions")
    return changed


def next_slug(slug: str) -> tuple[str, int]:
    base, _, tail = slug.rpartition("-v")
    if not (base and tail.isdigit()):
        base = slug
    version = 2
    while Study.objects.filter(slug=f"{base}-v{version}").exists():
        version += 1
    return f"{base}-v{version}", version


def apply(data: dict[str, Any], *, new_version: bool = False) -> tuple[Study, str]:
    """Create or update the study the file describes; returns it and what was done."""
    existing = Study.objects.filter(slug=data["slug"]).first()
    previous = None
    action = "created"
    if existing is not None:
        changes = protected_changes(existing, data)
        if changes and has_data(existing) and not new_version:
            raise StudyFileError(
                f"{existing.slug} already has participants; changing {', '.join(changes)} would "
                "make their data incomparable with what follows. Apply with --new-version to "
                "save this as a new version of the study (a new slug and link)."
            )
        if new_version:
            previous = existing
            slug, version = next_slug(existing.slug)
            data = {**data, "slug": slug, "version": version}
            existing = None
            action = f"created as a new version of {previous.slug}"
        else:
            action = "updated"
    study = existing or Study()
    for field in SCALAR_FIELDS:
        if field in data:
            setattr(study, field, data[field])
    study.design = data.get("design", study.design if existing else {})
    study.checks = data.get("checks", study.checks if existing else [])
    study.questionnaire = data.get("questionnaire", study.questionnaire if existing else [])
    if previous is not None:
        study.previous = previous
    conditions = data.get("conditions")
    with transaction.atomic():
        active = study.active
        study.active = False  # checked again below, with the conditions in place
        _full_clean(study, "study")
        study.save()
        if conditions is not None:
            keep = []
            for position, item in enumerate(conditions):
                condition = study.conditions.filter(name=item["name"]).first() or Condition(
                    study=study, name=item["name"]
                )
                condition.quota = item.get("quota", 0)
                condition.group_quota = item.get("group_quota", 0)
                condition.position = item.get("position", position)
                condition.overrides = item.get("overrides") or {}
                _full_clean(condition, f"condition {item['name']}", exclude=["study"])
                condition.save()
                keep.append(condition.pk)
            study.conditions.exclude(pk__in=keep).delete()
        study.active = active
        _full_clean(study, "study")
        study.save(update_fields=["active"])
        if previous is not None:
            Study.objects.filter(pk=previous.pk).update(active=False)
    asked = data.get("consent_version")
    if asked is not None and study.consent_version != asked:
        action += (
            f" (people already agreed to consent version {asked} with another text: the "
            f"changed consent text is consent version {study.consent_version}; put that "
            "number in the file)"
        )
    return study, action


def _full_clean(obj: Any, where: str, exclude: list[str] | None = None) -> None:
    try:
        obj.full_clean(exclude=exclude)
    except ValidationError as err:
        parts = []
        for field, messages in err.message_dict.items():
            parts.append(f"{field}: {' '.join(messages)}")
        raise StudyFileError(f"{where}: " + "; ".join(parts)) from None
