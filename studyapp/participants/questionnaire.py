"""The questionnaire after the rounds: items defined in the study file (``[[questionnaire]]``) or
the admin, answers read from a posted form, attention checks judged. Plain functions (Django only
for translating what participants read): the view turns a posted form into a mapping, and the
questionnaire step (:func:`studyapp.participants.steps.answer_questionnaire`) reads it with
:func:`read_answers` and stores what it returns.

An item is a mapping with

- ``id``: letters, digits, ``_`` and ``-``, unique in the study (the column of the export);
- ``question``: the text shown;
- ``kind``: ``choice`` (one of ``options``), ``multi`` (any of ``options``), ``likert`` (one point
  of ``options``, by default a five-point agreement scale), ``text`` or ``number`` (with optional
  ``min`` and ``max``);
- ``required`` (default true);
- ``expected``, for an attention check: the one right answer (a list of options for ``multi``,
  a number for ``number``, a text matched without case and outer spaces for ``text``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from studyapp.text import character_problem

KINDS = ("choice", "multi", "likert", "text", "number")
LIKERT = [
    gettext_noop("Strongly disagree"),
    gettext_noop("Disagree"),
    gettext_noop("Neither agree nor disagree"),
    gettext_noop("Agree"),
    gettext_noop("Strongly agree"),
]
ITEM_KEYS = {"id", "question", "kind", "options", "required", "expected", "min", "max"}
ID = re.compile(r"^[A-Za-z0-9_-]{1,40}$")
TEXT_MAX = 2000
FAILURE_POLICIES = ("flag", "screen")
# What a participant reads for each problem with an answer (translated when shown).
ANSWER_PROBLEMS = {
    "choose one of the options": gettext_noop("Please choose one of the options."),
    "choose among the options": gettext_noop("Please choose among the options."),
    "give a number": gettext_noop("Please give a number."),
    "give a text": gettext_noop("Please give a text."),
}


class QuestionnaireError(ValueError):
    """An item list that cannot be asked; the message says which item and why."""


def options_of(item: Mapping[str, Any]) -> list[str]:
    """The answers an item accepts and stores. The default agreement scale is stored in its
    canonical (English) form whatever language the page is in, so a German and an English
    study's answers are the same values; staff's own options are stored as written."""
    if item.get("kind") == "likert" and not item.get("options"):
        return list(LIKERT)
    return [str(o) for o in item.get("options") or []]


def choices_of(item: Mapping[str, Any]) -> list[tuple[str, str]]:
    """``(value, label)`` of each option as the page shows it: the default scale's labels in the
    study's language, its values canonical (:func:`options_of`)."""
    if item.get("kind") == "likert" and not item.get("options"):
        return [(label, _(label)) for label in LIKERT]
    return [(option, option) for option in options_of(item)]


def validate(items: Any) -> list[dict[str, Any]]:
    """The items, checked (every problem named with its item); raises QuestionnaireError."""
    if items in (None, ""):
        return []
    if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
        raise QuestionnaireError("the questionnaire must be a list of items ([[questionnaire]])")
    seen: set[str] = set()
    checked = []
    for n, item in enumerate(items, 1):
        name = f"questionnaire item {n}"
        unknown = set(item) - ITEM_KEYS
        if unknown:
            raise QuestionnaireError(f"{name}: unknown keys {', '.join(sorted(unknown))}")
        item_id = item.get("id")
        if not isinstance(item_id, str) or not ID.match(item_id):
            raise QuestionnaireError(
                f"{name}: 'id' must be 1-40 letters, digits, '_' or '-' (it names the column)"
            )
        name = f"questionnaire item {item_id!r}"
        if item_id in seen:
            raise QuestionnaireError(f"{name}: the id is used twice")
        if item_id == "policy":
            raise QuestionnaireError(f"{name}: 'policy' is the policy question's own id")
        seen.add(item_id)
        if not isinstance(item.get("question"), str) or not item["question"].strip():
            raise QuestionnaireError(f"{name}: needs a 'question'")
        kind = item.get("kind")
        if kind not in KINDS:
            raise QuestionnaireError(f"{name}: 'kind' must be one of {', '.join(KINDS)}")
        if not isinstance(item.get("required", True), bool):
            raise QuestionnaireError(f"{name}: 'required' must be true or false")
        options = item.get("options")
        if options is not None and (
            not isinstance(options, list)
            or not all(isinstance(o, str) and o.strip() for o in options)
            or len(set(options)) != len(options)
        ):
            raise QuestionnaireError(f"{name}: 'options' must be a list of distinct texts")
        if kind in ("choice", "multi") and len(options or []) < 2:
            raise QuestionnaireError(f"{name}: a {kind} item needs at least two options")
        if kind in ("text", "number") and options:
            raise QuestionnaireError(f"{name}: a {kind} item has no options")
        for bound in ("min", "max"):
            if bound in item and (kind != "number" or not _is_number(item[bound])):
                raise QuestionnaireError(f"{name}: '{bound}' is a number, for number items")
        if "min" in item and "max" in item and item["min"] > item["max"]:
            raise QuestionnaireError(f"{name}: 'min' is above 'max'")
        if "expected" in item:
            problem = _answer_problem(item, item["expected"])
            if problem:
                raise QuestionnaireError(f"{name}: 'expected' is not a possible answer ({problem})")
        checked.append(dict(item))
    return checked


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _answer_problem(item: Mapping[str, Any], answer: Any) -> str | None:
    kind = item["kind"]
    options = options_of(item)
    if kind in ("choice", "likert"):
        return None if answer in options else "choose one of the options"
    if kind == "multi":
        if not isinstance(answer, list) or not all(a in options for a in answer):
            return "choose among the options"
        return None
    if kind == "number":
        if not _is_number(answer):
            return "give a number"
        if "min" in item and answer < item["min"]:
            return f"give a number of at least {item['min']}"
        if "max" in item and answer > item["max"]:
            return f"give a number of at most {item['max']}"
        return None
    return None if isinstance(answer, str) else "give a text"


def read_answers(
    items: Sequence[Mapping[str, Any]], posted: Mapping[str, list[str]]
) -> tuple[dict[str, Any], dict[str, str]]:
    """The answers of a posted form (field ``q_<id>``, each with its list of values) and the
    errors per item id. Nothing is kept unless there are no errors."""
    answers: dict[str, Any] = {}
    errors: dict[str, str] = {}
    for item in items:
        item_id, kind = item["id"], item["kind"]
        values = [v for v in posted.get(f"q_{item_id}", []) if v.strip()]
        if not values:
            if item.get("required", True):
                errors[item_id] = _("Please answer this question.")
            continue
        if kind == "multi":
            answer: Any = list(dict.fromkeys(values))
        elif len(values) > 1:
            errors[item_id] = _("Please give one answer.")
            continue
        elif kind == "number":
            try:
                answer = float(values[0].strip().replace(",", "."))
            except ValueError:
                errors[item_id] = _("Please give a number.")
                continue
            if answer != answer or answer in (float("inf"), float("-inf")):
                errors[item_id] = _("Please give a number.")
                continue
            if answer.is_integer():
                answer = int(answer)
            if "min" in item and answer < item["min"]:
                errors[item_id] = _("Please give a number of at least %(n)s.") % {"n": item["min"]}
                continue
            if "max" in item and answer > item["max"]:
                errors[item_id] = _("Please give a number of at most %(n)s.") % {"n": item["max"]}
                continue
        elif kind == "text":
            answer = values[0].strip()
            if len(answer) > TEXT_MAX:
                errors[item_id] = _("Please keep it under %(n)d characters.") % {"n": TEXT_MAX}
                continue
            problem = character_problem(answer)
            if problem:
                errors[item_id] = _("This cannot be accepted: %(problem)s.") % {"problem": problem}
                continue
        else:
            answer = values[0]
        problem = _answer_problem(item, answer)
        if problem:
            errors[item_id] = _(ANSWER_PROBLEMS.get(problem, problem))
            continue
        answers[item_id] = answer
    return ({} if errors else answers), errors


def checks(items: Sequence[Any] | None) -> list[Mapping[str, Any]]:
    """The attention checks among a questionnaire's items: those with an expected answer."""
    return [item for item in items or [] if isinstance(item, Mapping) and "expected" in item]


def failed_checks(items: Sequence[Mapping[str, Any]], answers: Mapping[str, Any]) -> list[str]:
    """The ids of the attention checks answered otherwise than expected (or not at all)."""
    failed = []
    for item in checks(items):
        given, expected = answers.get(item["id"]), item["expected"]
        if item["kind"] == "multi":
            right = isinstance(given, list) and sorted(given) == sorted(expected)
        elif item["kind"] == "text":
            right = (
                isinstance(given, str) and given.strip().casefold() == expected.strip().casefold()
            )
        elif item["kind"] == "number":
            right = _is_number(given) and float(given) == float(expected)
        else:
            right = given == expected
        if not right:
            failed.append(item["id"])
    return failed


ATTENTION_FAILED = "attention check failed"


def attention_failed_text(failed: Sequence[str], flagged: bool = False) -> str:
    """A failed attention check in words, with the ids of the checks missed: a screened
    person's ``end_reason`` (and the export's reason), or with ``flagged`` the note the export
    adds for a person who went on."""
    return f"{ATTENTION_FAILED}{' (flagged)' if flagged else ''}: {', '.join(failed)}"


def export_rows(participant: str, answers: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Long form, one row per answered item: multi answers joined with '; '."""
    rows = []
    for item_id, answer in answers.items():
        text = "; ".join(answer) if isinstance(answer, list) else answer
        rows.append({"participant": participant, "item": item_id, "answer": text})
    return rows
