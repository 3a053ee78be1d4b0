"""The people's own frames of an export: participants, their questionnaire answers and the
consent versions they agreed to. A person is named only by the participant's public id (through
:mod:`studyapp.participants.pseudonyms`), never by a recruiter ID, a user or a session key."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import Any

import pandas as pd

from analysis.frames import typed
from studyapp.dashboard.records.queries import started
from studyapp.participants import outcomes, questionnaire
from studyapp.participants.models import Participant, Study
from studyapp.participants.pseudonyms import public_record

PARTICIPANT_COLUMNS: dict[str, tuple[str, str]] = {
    "player": ("string", "pseudonymous participant id (the player column of games and turns)"),
    "study": ("string", "study slug"),
    "condition": ("string", "the condition the participant was assigned to; empty in one arm"),
    "randomisation_unit": (
        "string",
        "what was randomised to the condition: person (on arrival) or group (formed in the "
        "first round's lobby of a group design); empty in one arm",
    ),
    "group": ("Int64", "the number of the participant's group in a group design, else empty"),
    "agents_disclosed": (
        "boolean",
        "whether the study showed people which seats were agents (false: blinded during play, "
        "disclosed at the end)",
    ),
    "status": (
        "string",
        "where the person's study ended: finished, screened (an attention check failed under "
        "attention_failure = screen), dropped, lobby_timeout, failed_checks, full, or consented "
        "and playing for people still taking part",
    ),
    "reason": ("string", "why the study ended so for this person, in words"),
    "consent_version": ("string", "version of the consent text agreed to"),
    "consented_at": ("string", "ISO-8601 time of consent"),
    "rounds": ("Int64", "rounds the study asks of each participant"),
    "rounds_finished": ("Int64", "rounds played to the end"),
    "total_reward": ("float64", "sum of round rewards"),
    "pilot": ("boolean", "a pilot bot, not a recruited person"),
    "policy": ("string", "the participant's written advice to a newcomer, if asked"),
    "time_spent_s": ("float64", "seconds from consent to the end (or to the last page seen)"),
    "payment_status": ("string", "owed, paid, not due, or pilot (a pilot is never paid)"),
    "base_pay": (
        "float64",
        "base pay settled when the person stopped (pro-rated for those who stopped early); "
        "empty for pilots and for people not settled yet",
    ),
    "bonus": ("float64", "performance bonus settled by the study's rule; empty as base_pay"),
    "bonus_due": (
        "float64",
        "what is still to be paid as a bonus: the bonus plus the base share of someone whose "
        "submission is not approved (paid as a bonus); 0 once paid, for pilots and for people "
        "owed nothing",
    ),
    "pay_rule": (
        "string",
        "the study's pay rule for how this person's study ended: full, played (the share of "
        "the games finished), time (the minutes given) or none; empty while taking part and "
        "for pilots",
    ),
    "code_action": (
        "string",
        "the Prolific action the person's code needs: approve (the reward paid by approval), "
        "return (what is owed paid as a bonus) or reject; empty as pay_rule",
    ),
    "currency": ("string", "currency of the amounts"),
    "paid": ("boolean", "recorded as paid (base and bonus settled)"),
    "attention_failed": (
        "string",
        "ids of the questionnaire's attention checks answered wrongly, joined by '; ' (empty: "
        "none failed, or no questionnaire reached)",
    ),
}
QUESTIONNAIRE_COLUMNS: dict[str, tuple[str, str]] = {
    "player": ("string", "pseudonymous participant id"),
    "item": ("string", "the questionnaire item's id ('policy': the policy question)"),
    "answer": ("string", "the answer as given; several choices joined by '; '"),
    "attention_check": ("boolean", "the item is an attention check (it has an expected answer)"),
    "passed": (
        "boolean",
        "an attention check answered as expected (empty for other items); the failed ones are "
        "the participant's attention_failed",
    ),
}


CONSENT_VERSION_COLUMNS: dict[str, tuple[str, str]] = {
    "study": ("string", "study slug"),
    "version": ("string", "consent version (the participants' consent_version)"),
    "text": ("string", "the consent text of this version, as people agreed to it"),
    "created_at": ("string", "ISO-8601 time the version was first saved"),
    "participants": ("Int64", "participants in this export who agreed to this version"),
}


def participants_frame(participants: Iterable[Participant]) -> pd.DataFrame:
    rows = []
    for participant in participants:
        row = public_record(participant)
        row["player"] = row.pop("public_id")
        row["condition"] = participant.condition
        drawn = participant.assignment or {}
        # Arrivals drawn before groups existed carry no unit: a person was randomised.
        row["randomisation_unit"] = drawn.get("unit", "person") if drawn else ""
        row["group"] = drawn.get("group")
        row["agents_disclosed"] = bool(participant.study.agents_disclosed)
        row["pilot"] = bool(participant.is_pilot)
        row["rounds"] = participant.study.rounds
        consented = participant.consented_at
        row["consented_at"] = consented.isoformat() if consented else None
        row["attention_failed"] = "; ".join(participant.attention_failed or [])
        row["reason"] = outcomes.reason(participant)
        row |= _amounts(participant)
        rows.append(row)
    frame = pd.DataFrame(rows, columns=list(PARTICIPANT_COLUMNS))
    return typed(frame, PARTICIPANT_COLUMNS)


def consent_versions_frame(study: Study, include_pilots: bool = False) -> pd.DataFrame:
    """Every consent version of the study with its text (consent_versions.csv)."""
    agreed: dict[str, int] = defaultdict(int)
    for version in started(study, include_pilots).values_list("consent_version", flat=True):
        agreed[version] += 1
    rows = [
        {
            "study": study.slug,
            "version": v.version,
            "text": v.text,
            "created_at": v.created_at.isoformat(),
            "participants": agreed.get(v.version, 0),
        }
        for v in study.consent_versions.all()
    ]
    frame = pd.DataFrame(rows, columns=list(CONSENT_VERSION_COLUMNS))
    return typed(frame, CONSENT_VERSION_COLUMNS)


def questionnaire_frame(participants: Iterable[Participant]) -> pd.DataFrame:
    """One row per answered item of each participant, the policy question first (item
    ``policy``), then the questionnaire in the order it was asked."""
    rows = []
    for participant in participants:
        if participant.policy:
            rows.append(
                {
                    "player": participant.public_id,
                    "item": "policy",
                    "answer": participant.policy,
                    "attention_check": False,
                }
            )
        items = participant.study.questionnaire or []
        checks = {item["id"] for item in questionnaire.checks(items)}
        failed = set(participant.attention_failed or [])
        answers = participant.questionnaire_answers or {}
        ordered = {item["id"]: answers[item["id"]] for item in items if item["id"] in answers}
        for row in questionnaire.export_rows(participant.public_id, ordered):
            check = row["item"] in checks
            rows.append(
                {
                    "player": row["participant"],
                    "item": row["item"],
                    "answer": str(row["answer"]),
                    "attention_check": check,
                    "passed": (row["item"] not in failed) if check else None,
                }
            )
    frame = pd.DataFrame(rows, columns=list(QUESTIONNAIRE_COLUMNS))
    return typed(frame, QUESTIONNAIRE_COLUMNS)


def _amounts(participant: Participant) -> dict[str, Any]:
    """What the participant is owed or was paid (nothing for a pilot)."""
    pilot = bool(participant.is_pilot)

    def money(value: Any) -> float | None:
        return None if pilot or value is None else float(value)

    return {
        "payment_status": participant.payment_status,
        "base_pay": money(participant.payment_amount),
        "bonus": money(participant.bonus),
        "bonus_due": float(participant.bonus_due),
        "pay_rule": "" if pilot or participant.ending is None else participant.pay_rule,
        "code_action": "" if pilot or participant.ending is None else participant.code_action,
        "currency": participant.study.currency,
        "paid": bool(participant.paid),
    }
