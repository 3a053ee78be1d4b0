"""The participant's path through a study, step by step, as plain functions the views call.

landing → consent → instructions (practice question) → rounds 1..N → policy question →
questionnaire → debrief → completion. Every step is derived from the participant record
(:func:`next_step`), so someone who leaves and comes back lands where they stopped, and a crafted
request for a later step is sent back. Who the browser is lives in
:mod:`studyapp.participants.identity`; the rounds, and stopping early, in
:mod:`studyapp.participants.rounds`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.conf import settings
from django.contrib.sessions.backends.base import SessionBase
from django.db import IntegrityError, transaction
from django.utils import timezone

from games import default_checks
from games.twenty_questions import rules as twenty_questions_rules
from games.undercover import rules as undercover_rules
from studyapp.participants import assignment, design, identity, questionnaire
from studyapp.participants.models import Participant, Study
from studyapp.tables.models import SKIP_SPEC, Seat, Turn

# The comprehension check a study gets when staff wrote none: the one rule people most often miss,
# from the game package (games/<game>/rules.py), where the rules text people read comes from too.
DEFAULT_CHECKS = {
    **twenty_questions_rules.DEFAULT_CHECKS,
    "undercover": undercover_rules.DEFAULT_CHECKS,
}


# Why the sweep drops someone between games (studyapp.participants.rounds); an answer page they
# still had open is kept when they submit it late (:func:`late_step`).
IDLE_BETWEEN_GAMES = "idle between games past the study's idle limit"
# The answer pages a person may still be writing on when the sweep takes them for idle.
ANSWER_STEPS = ("policy", "questionnaire")


class StepRefused(Exception):
    """The participant asked for a step their record does not allow yet (or any more)."""


def next_step(participant: Participant) -> str:
    """The name of the page this participant should be on now; the single source of the order."""
    status = participant.status
    if status == Participant.Status.VISITED:
        return "consent"
    if status in (Participant.Status.FINISHED, Participant.Status.DECLINED):
        return "done"
    if status in (Participant.Status.DROPPED, Participant.Status.WITHDRAWN):
        return "done"
    if status in (
        Participant.Status.SCREENED,
        Participant.Status.FAILED_CHECKS,
        Participant.Status.LOBBY_TIMEOUT,
        Participant.Status.FULL,
    ):
        return "done"
    if not participant.practice_passed:
        return "instructions"
    if participant.rounds_finished < participant.study.rounds:
        return "play"
    study = participant.study
    if study.policy_question and not participant.policy_done:
        return "policy"
    if study.questionnaire and not participant.questionnaire_done:
        return "questionnaire"
    if study.debrief_text and not participant.debrief_seen:
        return "debrief"
    return "done"


def late_step(participant: Participant) -> str | None:
    """The answer page (policy question, questionnaire) a person dropped by the idle sweep between
    games was still on, or None. Someone writing a long answer may have been taken for idle
    (their page's heartbeat lost, a laptop asleep): what they submit afterwards is kept and
    flagged (:func:`note_late`), never answered "not open to you". Their ending stays as it was
    recorded (dropped), and nothing else of the study opens again."""
    if participant.status != Participant.Status.DROPPED:
        return None
    if participant.end_reason != IDLE_BETWEEN_GAMES or not participant.practice_passed:
        return None
    study = participant.study
    if participant.rounds_finished < study.rounds:
        return None
    if study.policy_question and not participant.policy_done:
        return "policy"
    if study.questionnaire and not participant.questionnaire_done:
        return "questionnaire"
    return None


def heartbeat(participant: Participant) -> dict[str, int]:
    """How an answer page tells the server its person is there (static/js/alive.js): a beat every
    PARTICIPANT_HEARTBEAT_SECONDS while the page is visible, until it has gone unused for as long
    as the study's idle limit (at least PARTICIPANT_HEARTBEAT_QUIET_SECONDS): a page left open
    with nobody at it does not keep its person in the study for ever."""
    quiet = max(participant.study.idle_limit_seconds, settings.PARTICIPANT_HEARTBEAT_QUIET_SECONDS)
    return {"alive_seconds": settings.PARTICIPANT_HEARTBEAT_SECONDS, "alive_quiet": quiet}


def note_late(participant: Participant, step: str) -> list[str]:
    """Flag an answer that came after the sweep dropped its author (``late_answers``: the step
    and when); returns the fields to save."""
    participant.late_answers = [
        *(participant.late_answers or []),
        {"step": step, "at": timezone.now().isoformat()},
    ]
    return ["late_answers"]


def require_step(participant: Participant, step: str) -> None:
    """Refuse a request for any page other than the one the participant is on (or, for someone
    the idle sweep dropped, the answer page they were still writing on: :func:`late_step`)."""
    if next_step(participant) != step and late_step(participant) != step:
        raise StepRefused(step)


def touch(participant: Participant) -> None:
    """Note activity, so the time spent of someone who drops out can be paid."""
    if participant.status in Participant.ACTIVE:
        participant.last_seen_at = timezone.now()
        participant.save(update_fields=["last_seen_at"])


def give_consent(session: SessionBase, participant: Participant, version: str) -> Participant:
    """Record consent to the version the person was shown; only now are recruiter IDs stored.

    Returns the participant to go on as: when another browser consented with the same Prolific ID
    first (the database holds one participant per ID and study), this visit's record is dropped
    and the person rejoins that participant.
    """
    require_step(participant, "consent")
    if version != participant.study.consent_version:
        raise StepRefused("consent changed")
    ids = identity.waiting_ids(session, participant)
    for field, value in ids.items():
        setattr(participant, field, value)
    now = timezone.now()
    participant.consent_version = version
    participant.consented_at = now
    participant.started_at = now
    participant.last_seen_at = now
    participant.status = Participant.Status.CONSENTED
    try:
        with transaction.atomic():
            participant.save()
    except IntegrityError:
        returning = identity.returning_participant(participant.study, ids)
        return identity.rejoin_instead(session, participant, returning)
    identity.drop_waiting_ids(session, participant)
    return participant


def decline_consent(session: SessionBase, participant: Participant) -> None:
    """A polite end: no recruiter IDs are kept, only that the visit ended in a decline."""
    require_step(participant, "consent")
    identity.drop_waiting_ids(session, participant)
    participant.status = Participant.Status.DECLINED
    participant.end_reason = "declined consent"
    participant.save(update_fields=["status", "end_reason"])


def study_checks(study: Study) -> list[dict[str, Any]]:
    """The study's comprehension checks, or the default one for its game and the person's seat."""
    if study.checks:
        return list(study.checks)
    if study.game == "undercover":
        return default_checks("undercover", "player", study.language)
    try:
        person = design.normalise(study.game, study.design, study.oracle_spec)["person"]
    except design.DesignError:
        person = "questioner"
    return default_checks(study.game, person, study.language)


def answer_checks(participant: Participant, answers: list[str]) -> str:
    """Mark the checks: "passed" (the condition is drawn now, at arrival in the study proper;
    in a group design it is drawn for the group that forms in the first lobby),
    "wrong" (attempts left), "failed" (the failed-checks path: no rounds, no payment) or "full"
    (every condition met its quota meanwhile)."""
    require_step(participant, "instructions")
    study = participant.study
    checks = study_checks(study)
    right = len(answers) == len(checks) and all(
        given == check["answer"] for given, check in zip(answers, checks, strict=True)
    )
    if not right:
        participant.check_attempts += 1
        if participant.check_attempts >= max(study.check_attempts, 1):
            participant.status = Participant.Status.FAILED_CHECKS
            participant.end_reason = (
                f"comprehension checks not passed in {participant.check_attempts} attempts"
            )
            participant.finished_at = timezone.now()
            participant.save(
                update_fields=["check_attempts", "status", "end_reason", "finished_at"]
            )
            return "failed"
        participant.save(update_fields=["check_attempts"])
        return "wrong"
    try:
        if not design.uses_group_lobby(participant):
            assignment.assign(participant)
        elif assignment.is_full(study, pilot=participant.is_pilot):
            raise assignment.StudyFull  # the group is drawn its condition in the lobby
    except assignment.StudyFull:
        participant.status = Participant.Status.FULL
        participant.end_reason = (
            assignment.CLOSED_FOR_NOW
            if assignment.closed_for_now(study)
            else "every condition had met its quota when the checks were passed"
        )
        participant.finished_at = timezone.now()
        participant.save(update_fields=["status", "end_reason", "finished_at"])
        return "full"
    participant.practice_passed = True
    participant.checks_passed = True
    participant.status = Participant.Status.PLAYING
    participant.save(update_fields=["practice_passed", "checks_passed", "status"])
    return "passed"


def save_policy(participant: Participant, text: str) -> None:
    require_step(participant, "policy")
    late = late_step(participant) == "policy"
    participant.policy = text
    participant.policy_done = True
    fields = ["policy", "policy_done", *(note_late(participant, "policy") if late else [])]
    participant.save(update_fields=fields)
    if not late and next_step(participant) == "done":
        finish(participant)


def debrief_agents(participant: Participant) -> dict[str, Any] | None:
    """The "About the other players" block of the last page, for a person who sat at a table:
    the study's own text (``about_agents_text``) or the built-in one, which says whether the
    agents were marked during play (``blinded``) and what they were: rule-based programs
    (``offline``, the offline agents) and the models named by their specs (``models``). None
    when there is nothing to tell (no table, no agent at any of this person's tables)."""
    table_ids = participant.round_set.values_list("table_id", flat=True)
    specs = set(
        Seat.objects.filter(table_id__in=table_ids, kind=Seat.Kind.AGENT)
        .exclude(agent_spec=SKIP_SPEC)
        .values_list("agent_spec", flat=True)
    )
    if not specs:
        return None
    specs = agents_who_moved(table_ids, specs)
    study = participant.study
    return {
        "text": study.about_agents_text.strip(),
        "blinded": not study.agents_disclosed,
        "offline": any(spec.startswith("offline:") for spec in specs),
        "models": sorted(
            spec.partition(":")[2] for spec in specs if not spec.startswith("offline:")
        ),
    }


def agents_who_moved(table_ids: Any, seated: set[str]) -> set[str]:
    """The agents that made moves at these tables, as each move credits them: a model that
    failed and whose move an offline agent made instead (``usage["stand_in"]``) did not play it,
    and a move the table made for a model that could not move (its ``error``, no stand-in) is
    nobody's. Seated agents that never had a turn (a game over first) are named as seated."""
    moved: set[str] = set()
    agent_turns = 0
    for actor, usage in (
        Turn.objects.filter(table_id__in=table_ids)
        .exclude(actor__in=("", "person"))
        .values_list("actor", "usage")
    ):
        agent_turns += 1
        usage = usage if isinstance(usage, dict) else {}
        if usage.get("stand_in"):
            moved.add(str(usage["stand_in"]))
        elif not usage.get("error"):
            moved.add(actor)
    return moved if agent_turns else seated


def show_debrief_agents(participant: Participant, page: str) -> dict[str, Any] | None:
    """The block on ``page`` ("debrief", "done" or "withdrawn"): once, on the debrief page of a
    study that has one, else on the last page."""
    if page == "done" and participant.debrief_seen:
        return None
    return debrief_agents(participant)


def answer_questionnaire(participant: Participant, posted: Mapping[str, list[str]]) -> dict:
    """Keep the questionnaire's answers, or return the errors per item (and keep nothing). A
    failed attention check is recorded; under the study's ``screen`` policy it ends the study
    with the screened code, otherwise the person goes on, flagged in the export."""
    require_step(participant, "questionnaire")
    late = late_step(participant) == "questionnaire"
    items = participant.study.questionnaire
    answers, errors = questionnaire.read_answers(items, posted)
    if errors:
        return errors
    participant.questionnaire_answers = answers
    participant.questionnaire_done = True
    participant.attention_failed = questionnaire.failed_checks(items, answers)
    fields = ["questionnaire_answers", "questionnaire_done", "attention_failed"]
    if late:  # kept and flagged; their ending (dropped) stays as recorded
        participant.save(update_fields=[*fields, *note_late(participant, "questionnaire")])
        return {}
    participant.save(update_fields=fields)
    if participant.attention_failed and participant.study.attention_failure == "screen":
        participant.status = Participant.Status.SCREENED
        participant.end_reason = questionnaire.attention_failed_text(participant.attention_failed)
        participant.finished_at = timezone.now()
        participant.settle_payment()  # by the study's screened_pay (maybe nothing)
        participant.save()
    elif next_step(participant) == "done":
        finish(participant)
    return {}


def failed_questions(participant: Participant) -> list[str]:
    """The attention checks this person missed, as the questions they read (the screened page)."""
    failed = set(participant.attention_failed or [])
    items = participant.study.questionnaire or []
    return [item["question"] for item in items if item.get("id") in failed]


def debrief_read(participant: Participant) -> None:
    require_step(participant, "debrief")
    participant.debrief_seen = True
    participant.save(update_fields=["debrief_seen"])
    if next_step(participant) == "done":
        finish(participant)


def finish(participant: Participant) -> None:
    """All rounds played (and the policy question answered): fix the pay and show the code."""
    participant.status = Participant.Status.FINISHED
    participant.end_reason = "finished every game"
    participant.finished_at = timezone.now()
    participant.settle_payment()
    participant.save()
