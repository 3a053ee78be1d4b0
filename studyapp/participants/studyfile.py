"""A study as a TOML file: what ``manage.py study export`` writes and ``study apply`` reads.

The file's keys are the study's own field names (the admin form edits the same fields), plus
``design`` (the table design), ``checks`` (the comprehension checks) and ``conditions`` (each
with ``name``, ``quota``, ``group_quota``, ``position`` and ``overrides``). The file is the whole
study: a key it leaves out is the field's default ("empty": no questionnaire, no conditions, no
debrief, no codes; an absent ``estimated_minutes`` is computed), except ``version`` and
``consent_version``, which the app manages. ``apply`` says what it changed, key by key.
docs/studies.md shows the format with two examples.

Applying a file to a study that already has participants refuses any change that would make
their data incomparable with what comes next (the game, the table design, the word sequence's
seed, the number of rounds, the oracle, the conditions) or change what they read or were
promised (instructions, checks, questions, debrief, disclosure, lower pay); ``--new-version`` saves such a
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
from django.db import models, transaction

from studyapp.participants.models import Condition, Participant, Study
from studyapp.participants.models.validation import parse_amount
from studyapp.participants.numbers import LARGEST, NotAWholeNumber, whole_number

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
    "screened_pay",
    "dropped_pay",
    "lobby_timeout_pay",
    "code_actions",
    "debrief_text",
    "about_agents_text",
    "welcome_text",
    "turn_deadline_seconds",
    "dropout",
    "missed_turns_limit",
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
    "model_budget",
    "model_prices",
    "over_budget",
]
MONEY_FIELDS = ("payment_amount", "bonus_per_reward", "model_budget")
# What makes collected data incomparable with what would come after a change.
PROTECTED_FIELDS = ("game", "design", "seed", "rounds", "oracle_spec")
# What people who already took part read or were promised: once they have, a change would
# mix two studies under one name (the consent text has versions of its own, and pay may rise but
# not fall).
SEEN_FIELDS = (
    "language",
    "instructions",
    "checks",
    "check_attempts",
    "shown_policy",
    "policy_question",
    "questionnaire",
    "attention_failure",
    "screened_pay",
    "dropped_pay",
    "lobby_timeout_pay",
    "debrief_text",
    "agents_disclosed",
    "agent_think_seconds",
    "turn_deadline_seconds",
    "dropout",
    "missed_turns_limit",
    "assignment_seed",
    "currency",
)
# Kept when the file leaves them out: the app manages them (--new-version raises ``version``; a
# changed consent text is saved under a new consent version, see Study.save).
MANAGED_FIELDS = ("version", "consent_version")
LIST_KEYS = ("design", "checks", "questionnaire", "conditions")
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
        if field in MONEY_FIELDS and value is not None:
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
    currency = data.get("currency", "USD")
    if not isinstance(currency, str) or not currency:
        raise StudyFileError("currency must be a three-letter code such as 'GBP'")
    for field in MONEY_FIELDS:
        if field in data:
            if isinstance(data[field], float):
                raise StudyFileError(
                    f"{field} = {data[field]!r} is a TOML number with a fraction or an exponent: "
                    'write amounts as strings, such as "10.00", so they stay exact'
                )
            try:
                data[field] = parse_amount(data[field], field, currency)
            except ValidationError as err:
                raise StudyFileError(" ".join(err.messages)) from None
    conditions = data.get("conditions", [])
    if not isinstance(conditions, list) or not all(isinstance(c, dict) for c in conditions):
        raise StudyFileError("conditions must be a list of tables ([[conditions]])")
    try:
        _whole_numbers(data, conditions)
    except NotAWholeNumber as err:
        raise StudyFileError(str(err)) from None
    names = [c.get("name") for c in conditions]
    if any(not name for name in names) or len(set(names)) != len(names):
        raise StudyFileError("every condition needs a name of its own")
    return data


def _whole_numbers(data: dict[str, Any], conditions: list[dict[str, Any]]) -> None:
    """The file's whole-number fields (the study's integer fields, each condition's quotas and
    position) read as ints, or :class:`NotAWholeNumber` naming the first that is not one; the
    design's own (players, wait_seconds, a seat's policy) are read by the design."""
    for field in SCALAR_FIELDS:
        model_field = Study._meta.get_field(field)
        if data.get(field) is None or not isinstance(model_field, models.IntegerField):
            continue
        kind = model_field.get_internal_type()  # PositiveSmallIntegerField, IntegerField, ...
        positive, small = kind.startswith("Positive"), "Small" in kind
        data[field] = whole_number(
            data[field],
            field,
            minimum=0 if positive else -LARGEST - 1,
            maximum=2**15 - 1 if small else LARGEST,
        )
    for condition in conditions:
        for field in ("quota", "group_quota", "position"):
            if condition.get(field) is not None:
                where = f"condition {condition.get('name')}: {field}"
                condition[field] = whole_number(condition[field], where)


def has_data(study: Study) -> bool:
    """Someone other than a pilot has started: changing the design now would mix two studies."""
    return study.participants.filter(is_pilot=False, status__in=Participant.STARTED).exists()


def _conditions_key(conditions: list[dict[str, Any]]) -> list[tuple[str, Any]]:
    return sorted((c["name"], _drop_none(c.get("overrides") or {})) for c in conditions)


def default(field: str) -> Any:
    """What a key the file leaves out means: the field's default (empty for lists and texts)."""
    if field == "design":
        return {}
    if field in ("checks", "questionnaire", "conditions"):
        return []
    value = Study._meta.get_field(field).get_default()
    return str(value) if field in MONEY_FIELDS and value is not None else value


def declared(data: dict[str, Any], current: dict[str, Any] | None = None) -> dict[str, Any]:
    """The whole study the file declares, as :func:`study_dict` writes one: every key the file
    leaves out at its default (``version`` and ``consent_version`` kept from ``current``)."""
    full: dict[str, Any] = {}
    for field in [*SCALAR_FIELDS, *LIST_KEYS]:
        if field in data:
            value = data[field]
        elif field in MANAGED_FIELDS and current and field in current:
            value = current[field]
        else:
            value = default(field)
        if field in MONEY_FIELDS and value is not None:
            value = str(Decimal(str(value)).quantize(Decimal("0.01")))
        full[field] = value
    full["conditions"] = [
        {
            "name": c["name"],
            "quota": c.get("quota", 0),
            "group_quota": c.get("group_quota", 0),
            "position": c.get("position", position),
            "overrides": c.get("overrides") or {},
        }
        for position, c in enumerate(full["conditions"])
    ]
    return _drop_none(full)


def differences(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """What applying changes, one line per key: ``key: old -> new`` (long values shortened)."""

    def shown(value: Any) -> str:
        text = repr(value)
        return text if len(text) <= 60 else text[:57] + "..."

    lines = []
    for key in [*SCALAR_FIELDS, *LIST_KEYS]:
        old, new = before.get(key), after.get(key)
        if old != new:
            lines.append(f"{key}: {shown(old)} -> {shown(new)}")
    return lines


def _lower(old: Any, new: Any) -> bool:
    try:
        return Decimal(str(new)) < Decimal(str(old))
    except (InvalidOperation, TypeError):
        return True


def protected_changes(study: Study, data: dict[str, Any]) -> list[str]:
    """The changes a study with data refuses: to what makes data comparable, to what people
    read or were promised, and a cut in pay."""
    current = study_dict(study)
    wanted = declared(data, current)
    changed = [
        field
        for field in (*PROTECTED_FIELDS, *SEEN_FIELDS)
        if wanted.get(field) != current.get(field, default(field))
    ]
    if _conditions_key(wanted["conditions"]) != _conditions_key(current["conditions"]):
        changed.append("conditions")
    for field in ("payment_amount", "bonus_per_reward"):  # pay (a model budget may fall)
        if _lower(current.get(field), wanted.get(field)):
            changed.append(f"{field} (lowered)")
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
    """Make the study the file describes (create it, or update it to equal the file); returns it
    and what was done: a first line, then one line per key that changed (``key: old -> new``)."""
    existing = Study.objects.filter(slug=data["slug"]).first()
    previous = None
    action = "created"
    before = study_dict(existing) if existing is not None else {}
    data = {**declared(data, before)}
    if existing is not None:
        changes = protected_changes(existing, data)
        if changes and has_data(existing) and not new_version:
            raise StudyFileError(
                f"{existing.slug} already has participants; changing {', '.join(changes)} would "
                "make their data incomparable with what follows, or change what they read or "
                "were promised. Apply with --new-version to save this as a new version of the "
                "study (a new slug and link)."
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
            value = data[field]
            setattr(study, field, Decimal(value) if field in MONEY_FIELDS else value)
        else:  # declared() leaves out only what is None: an empty optional number
            setattr(study, field, None)
    study.design = data["design"]
    study.checks = data["checks"]
    study.questionnaire = data["questionnaire"]
    if previous is not None:
        study.previous = previous
    conditions = data["conditions"]
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
    changed = differences(before, study_dict(study)) if existing is not None else []
    if existing is not None and not changed:
        action += ", nothing changed"
    asked = data.get("consent_version")
    if asked is not None and study.consent_version != asked:
        action += (
            f" (people already agreed to consent version {asked} with another text: the "
            f"changed consent text is consent version {study.consent_version}; put that "
            "number in the file)"
        )
    # One line per change below the first: what the study was, and what it is now.
    return study, "\n".join([action, *(f"  {line}" for line in changed)])


def _full_clean(obj: Any, where: str, exclude: list[str] | None = None) -> None:
    try:
        obj.full_clean(exclude=exclude)
    except ValidationError as err:
        parts = []
        for field, messages in err.message_dict.items():
            parts.append(f"{field}: {' '.join(messages)}")
        raise StudyFileError(f"{where}: " + "; ".join(parts)) from None
