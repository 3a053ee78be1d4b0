"""The Prolific study made from the site's study (``manage.py prolific draft|check|publish SLUG``
and the study admin's actions): a draft with the study's title, description, link (with
``PROLIFIC_PID``, ``STUDY_ID`` and ``SESSION_ID``), estimated time, reward in the currency's minor
unit, places and every ending's completion code with the action it needs (``code_actions``);
then a check of what Prolific holds against the site, difference by difference; and publishing,
only when the check finds none. Prolific's study id is kept on the study (``prolific_study``), so
a study is drafted once.

The site's actions map to Prolific's completion-code actions so: ``approve`` is
``MANUALLY_REVIEW`` (``manage.py prolific approve`` approves, so the ledger records every
approval), ``return`` is ``REQUEST_RETURN`` (Prolific asks the person to return the submission,
with a reason that says what the ending's pay rule gives: paid as a bonus, or nothing) and ``reject`` is ``MANUALLY_REVIEW`` (staff reject it).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from django.db import transaction
from django.urls import reverse

from studyapp.participants import payrules
from studyapp.participants.models import Study
from studyapp.participants.models.validation import currency_decimals
from studyapp.participants.prolific.client import ProlificClient, ProlificError

# The study link's query: Prolific fills each placeholder for every participant.
LINK_PARAMETERS = (
    "PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}"
)
# Prolific's code type of each ending's code.
CODE_TYPES = {
    "finished": "COMPLETED",
    "dropped": "OTHER",
    "screened": "FAILED_ATTENTION_CHECK",
    "failed_checks": "OTHER",
    "lobby_timeout": "OTHER",
}


class LaunchError(ValueError):
    """A draft, check or publish that cannot go ahead; the message says why."""


def study_link(study: Study, site_url: str) -> str:
    """The study link Prolific sends people to, with its three parameters."""
    parts = urlsplit(site_url or "")
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise LaunchError(
            f"the site's address {site_url!r} is not a web address such as "
            "https://games.example.org: set SITE_URL (or pass --site)"
        )
    path = reverse("participants:study_link", args=[study.slug])
    return f"{parts.scheme}://{parts.netloc}{path}?{LINK_PARAMETERS}"


def reward_minor(study: Study) -> int:
    """The reward in the currency's minor unit (cents, pence; yen as they are)."""
    return int(study.payment_amount.scaleb(currency_decimals(study.currency)))


def return_reason(rule: str) -> str:
    """What Prolific tells a person asked to return their submission, from the pay rule of
    their ending (:data:`studyapp.participants.payrules.RULE_WORDS`): nothing is promised to
    people whose ending pays nothing."""
    if rule == "none":
        return f"Please return your submission: this study pays {payrules.RULE_WORDS['none']} here."
    return f"Please return your submission: you are paid {payrules.RULE_WORDS[rule]}, as a bonus."


def _actions(action: str, rule: str) -> list[dict[str, str]]:
    if action == "return":
        return [{"action": "REQUEST_RETURN", "return_reason": return_reason(rule)}]
    return [{"action": "MANUALLY_REVIEW"}]


def completion_codes(study: Study) -> list[dict[str, Any]]:
    """Every ending's code with its code type and actions; two endings that share a code must
    need the same action."""
    found: dict[str, dict[str, Any]] = {}
    for row in payrules.table(study):
        code = row["code"]
        if not code:
            continue
        entry = {
            "code": code,
            "code_type": CODE_TYPES.get(row["ending"], "OTHER"),
            "actions": _actions(payrules.action(study, row["ending"]), row["rule"]),
        }
        if code in found and found[code]["actions"] != entry["actions"]:
            raise LaunchError(
                f"the code {code} ends two endings that need different Prolific actions (or "
                "pay differently, so Prolific's return reason differs): give each ending a code "
                "of its own"
            )
        found.setdefault(code, entry)
    if not found:
        raise LaunchError("the study has no completion codes: set code_finished and the others")
    return list(found.values())


def draft_body(study: Study, places: int, site_url: str) -> dict[str, Any]:
    """What ``POST studies/`` is sent for the study."""
    description = study.welcome_text.strip() or (
        f"{study.title}: play {study.rounds} short game(s) in your browser, with other players. "
        f"About {study.duration_minutes} minutes."
    )
    return {
        "name": study.title,
        "internal_name": f"{study.slug} (version {study.version})",
        "description": description,
        "external_study_url": study_link(study, site_url),
        "prolific_id_option": "url_parameters",
        "completion_codes": completion_codes(study),
        "estimated_completion_time": study.duration_minutes,
        "reward": reward_minor(study),
        "total_available_places": places,
    }


def draft(study: Study, client: ProlificClient, places: int, site_url: str) -> str:
    """Create the Prolific draft and keep its id on the study; refused when the study has one."""
    if places < 1:
        raise LaunchError("--places must be a whole number of at least 1")
    body = draft_body(study, places, site_url)
    with transaction.atomic():
        locked = Study.objects.select_for_update().get(pk=study.pk)
        if locked.prolific_study:
            raise LaunchError(
                f"{study.slug} was drafted on Prolific already (study {locked.prolific_study}): "
                "nothing was sent; check it with `prolific check`"
            )
        created = client.create_study(body)
        locked.prolific_study = created["id"]
        locked.places = places
        locked.save(update_fields=["prolific_study", "places"])
    study.prolific_study, study.places = created["id"], places
    return created["id"]


def _codes_by_code(codes: Any) -> dict[str, tuple[str, tuple[tuple[str, str], ...]]]:
    found = {}
    for entry in codes if isinstance(codes, list) else []:
        if not isinstance(entry, dict):
            continue
        actions = tuple(
            sorted(
                (str(a.get("action", "")), str(a.get("return_reason", "") or ""))
                for a in entry.get("actions") or []
                if isinstance(a, dict)
            )
        )
        found[str(entry.get("code", ""))] = (str(entry.get("code_type", "")), actions)
    return found


def _action_words(actions: tuple[tuple[str, str], ...]) -> str:
    return ", ".join(action for action, _ in actions) or "no action"


def differences(study: Study, shown: dict[str, Any], site_url: str) -> list[str]:
    """Every way the Prolific study ``shown`` differs from what the site would draft."""
    found = []
    if not study.active:
        found.append("the site's study is inactive: its link accepts nobody")
    expected = draft_body(study, study.places or 0, site_url)
    for key, label in (
        ("external_study_url", "study link"),
        ("reward", "reward (minor units)"),
        ("total_available_places", "places"),
        ("estimated_completion_time", "estimated minutes"),
    ):
        if shown.get(key) != expected[key]:
            found.append(f"{label}: Prolific has {shown.get(key)!r}, the site {expected[key]!r}")
    theirs = _codes_by_code(shown.get("completion_codes"))
    ours = _codes_by_code(expected["completion_codes"])
    for code, (kind, actions) in sorted(ours.items()):
        if code not in theirs:
            found.append(
                f"code {code}: missing on Prolific (the site needs {_action_words(actions)})"
            )
            continue
        their_kind, their_actions = theirs[code]
        if their_actions != actions:
            found.append(
                f"code {code}: Prolific's actions are {_action_words(their_actions)}, the "
                f"site's {_action_words(actions)}"
            )
        if their_kind != kind:
            found.append(f"code {code}: Prolific's code type is {their_kind}, the site's {kind}")
    for code in sorted(set(theirs) - set(ours)):
        found.append(f"code {code}: on Prolific but no ending of the site's study gives it")
    return found


def check(study: Study, client: ProlificClient, site_url: str) -> tuple[dict[str, Any], list[str]]:
    """The Prolific study and every difference from the site."""
    if not study.prolific_study:
        raise LaunchError(f"{study.slug} has no Prolific study yet: run `prolific draft` first")
    shown = client.study(study.prolific_study)
    return shown, differences(study, shown, site_url)


def publish(study: Study, client: ProlificClient, site_url: str) -> dict[str, Any]:
    """Publish the draft, only when the check finds no difference."""
    shown, found = check(study, client, site_url)
    if found:
        raise LaunchError(
            f"not published: the check found {len(found)} difference(s): " + "; ".join(found)
        )
    if str(shown.get("status", "")).upper() not in ("", "UNPUBLISHED"):
        raise LaunchError(f"not published: Prolific shows the study as {shown.get('status')}")
    return client.publish_study(study.prolific_study)


def cost_in_minor(study: Study, client: ProlificClient, places: int) -> int:
    """Prolific's total for the study (reward × places with its VAT and fee), in minor units."""
    return client.study_cost(reward_minor(study), places)


__all__ = ["LaunchError", "ProlificError", "check", "draft", "publish", "study_link"]
