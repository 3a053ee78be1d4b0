"""The participant's path through a study, as plain functions the views call.

landing → consent → instructions (practice question) → rounds 1..N → policy question → completion.
Every step is derived from the participant record (:func:`next_step`), so someone who leaves and
comes back lands where they stopped, and a crafted request for a later step is sent back.

A browser is tied to its participant through the session, and the same browser always resumes.
A PROLIFIC_PID alone is no password (anyone may type one), so another browser rejoins that
person's participant only when the link also carries the recruiter's SESSION_ID of their
submission (Prolific passes the same one when the person reopens it) or the resume code the
participant was shown (:func:`resume_code`); otherwise it is refused (:class:`AlreadyTakingPart`).
A personal invite stays bound to the browser that claimed it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from django.contrib.sessions.backends.base import SessionBase
from django.db import IntegrityError, transaction
from django.urls import reverse
from django.utils import timezone
from django.utils.crypto import constant_time_compare, salted_hmac

from games import default_checks
from games.twenty_questions import rules as twenty_questions_rules
from games.undercover import rules as undercover_rules
from studyapp.participants import questionnaire
from studyapp.participants.models import Invite, Participant, Round, Study

SESSION_KEY = "participants"  # {study pk: participant pk}, this browser's own participants
RECRUITER_PARAMS = {
    "PROLIFIC_PID": "prolific_pid",
    "STUDY_ID": "prolific_study_id",
    "SESSION_ID": "prolific_session_id",
    "pid": "recruiter_pid",
}
_RECRUITER_ID_RE = re.compile(r"^[A-Za-z0-9_.\-]{1,64}$")
# Prolific's participant IDs are 24 hexadecimal digits. The ID decides who a person is (one
# participant per ID and study), so it is taken only in that form and in lower case: a variant of
# someone's ID (upper case, a character added) would otherwise be a second person who could take
# part, and be paid, again. Pilots (the pilot command's bots) may use their own IDs.
_PROLIFIC_PID_RE = re.compile(r"^[0-9a-fA-F]{24}$")

# The comprehension check a study gets when staff wrote none: the one rule people most often miss,
# from the game package (games/<game>/rules.py), where the rules text people read comes from too.
DEFAULT_CHECKS = {
    **twenty_questions_rules.DEFAULT_CHECKS,
    "undercover": undercover_rules.DEFAULT_CHECKS,
}


class BadRecruiterId(ValueError):
    """A recruiter parameter that is not a plain identifier; the link was damaged or crafted."""


class StoppedEarlier(Exception):
    """The Prolific ID on this link has already stopped taking part (dropped out or withdrew)."""

    def __init__(self, participant: Participant) -> None:
        super().__init__(participant.public_id)
        self.participant = participant


class AlreadyTakingPart(Exception):
    """The PROLIFIC_PID on this link is another browser's participant, and the link shows neither
    that submission's SESSION_ID nor the participant's resume code."""


class StepRefused(Exception):
    """The participant asked for a step their record does not allow yet (or any more)."""


def recruiter_ids(query: Mapping[str, str], *, pilot: bool = False) -> dict[str, str]:
    """Pick the recruiter's IDs out of a study link's query string (field name → value)."""
    found = {}
    for param, field in RECRUITER_PARAMS.items():
        value = query.get(param, "")
        if not value:
            continue
        if not _RECRUITER_ID_RE.match(value):
            raise BadRecruiterId(f"The link's {param} is not a valid identifier.")
        if param == "PROLIFIC_PID" and not pilot:
            if not _PROLIFIC_PID_RE.match(value):
                raise BadRecruiterId(
                    "The link's PROLIFIC_PID is not a Prolific ID (24 characters, 0-9 and a-f)."
                )
            value = value.lower()
        found[field] = value
    return found


# --- this browser's participants ------------------------------------------------------------


def session_participant(session: SessionBase, study: Study) -> Participant | None:
    """The participant this browser already is in ``study``, if any (and not deleted since)."""
    pk = session.get(SESSION_KEY, {}).get(str(study.pk))
    if pk is None:
        return None
    return Participant.objects.filter(pk=pk, study=study).first()


def owned_participant(session: SessionBase, public_id: str) -> Participant | None:
    """The participant behind ``public_id`` if and only if this browser is that participant."""
    mine = set(session.get(SESSION_KEY, {}).values())
    participant = Participant.objects.select_related("study").filter(public_id=public_id).first()
    if participant is None or participant.pk not in mine:
        return None
    return participant


def _own(session: SessionBase, participant: Participant) -> None:
    owned = dict(session.get(SESSION_KEY, {}))
    owned[str(participant.study_id)] = participant.pk
    session[SESSION_KEY] = owned


def _remember(session: SessionBase, participant: Participant, ids: Mapping[str, str]) -> None:
    _own(session, participant)
    # Recruiter IDs wait in the session until consent: nothing about the person is stored before.
    session[f"recruiter:{participant.pk}"] = dict(ids)


def _forget(session: SessionBase, participant: Participant) -> None:
    owned = dict(session.get(SESSION_KEY, {}))
    owned.pop(str(participant.study_id), None)
    session[SESSION_KEY] = owned
    session.pop(f"recruiter:{participant.pk}", None)


# --- arriving -------------------------------------------------------------------------------


def returning_participant(study: Study, ids: Mapping[str, str]) -> Participant | None:
    """The participant who already consented to ``study`` with the PROLIFIC_PID on this link.

    The ID is stored only at consent, so a visit that never consented is not found here.
    """
    pid = ids.get("prolific_pid")
    if not pid:
        return None
    return study.participants.filter(prolific_pid=pid).first()


def resume_code(participant: Participant) -> str:
    """The code that lets this participant go on in another browser; shown only to them. Derived
    from the site's SECRET_KEY, so nothing more is stored."""
    value = f"{participant.pk}:{participant.public_id}"
    return salted_hmac("studyapp.participants.resume", value).hexdigest()[:16]


def resume_token(participant: Participant) -> str:
    """What the participant's "continue in another browser" link carries: ``<public id>.<code>``."""
    return f"{participant.public_id}.{resume_code(participant)}"


def resumed_participant(study: Study, token: str) -> Participant | None:
    """The participant of ``study`` whose resume token this is, if it is right."""
    public_id, _, code = token.partition(".")
    if not public_id or not code:
        return None
    participant = study.participants.filter(public_id=public_id).first()
    if participant is None or not constant_time_compare(code, resume_code(participant)):
        return None
    return participant


def may_rejoin(participant: Participant, ids: Mapping[str, str], token: str = "") -> bool:
    """Whether a new browser with ``ids`` (and maybe a resume ``token``) is this participant: the
    recruiter's SESSION_ID of their submission, or their resume token."""
    session_id = ids.get("prolific_session_id", "")
    if session_id and constant_time_compare(session_id, participant.prolific_session_id or ""):
        return True
    resumed = resumed_participant(participant.study, token) if token else None
    return resumed is not None and resumed.pk == participant.pk


def rejoin(session: SessionBase, participant: Participant) -> Participant:
    """Tie this browser to a returning participant, who goes on where they stopped (no second
    consent). Someone who stopped taking part is not taken back in."""
    if participant.status in (Participant.Status.DROPPED, Participant.Status.WITHDRAWN):
        raise StoppedEarlier(participant)
    _own(session, participant)
    return participant


def start(
    session: SessionBase,
    study: Study,
    ids: Mapping[str, str],
    *,
    pilot: bool = False,
    resume: str = "",
) -> Participant:
    """The Start button on a study link: record the visit and tie it to this browser, or rejoin
    the participant this Prolific ID already is (see :func:`may_rejoin`), or the one whose
    ``resume`` token the link carries. ``pilot`` (a staff-issued pilot token was on
    the link, see :mod:`studyapp.participants.pilots`) flags a simulated participant."""
    participant = session_participant(session, study)
    if participant is not None:
        return participant
    returning = returning_participant(study, ids)
    if returning is not None:
        if not may_rejoin(returning, ids, resume):
            raise AlreadyTakingPart
        return rejoin(session, returning)
    resumed = resumed_participant(study, resume) if resume else None
    if resumed is not None:
        return rejoin(session, resumed)
    participant = Participant.objects.create(study=study, is_pilot=pilot)
    _remember(session, participant, ids)
    return participant


class InviteTaken(Exception):
    """A personal link already claimed from another browser."""


def invite_owner(session: SessionBase, invite: Invite) -> Participant | None:
    """The participant this browser holds for ``invite``; raise if someone else claimed it."""
    if not invite.claimed:
        return None
    participant = Participant.objects.filter(invite=invite).first()
    mine = session.get(SESSION_KEY, {}).get(str(invite.study_id))
    if participant is None or participant.pk != mine:
        raise InviteTaken
    return participant


def claim_invite(session: SessionBase, invite: Invite) -> Participant:
    """The Start button on a personal link. The conditional update makes two browsers racing for
    one link end with one winner."""
    owner = invite_owner(session, invite)
    if owner is not None:
        return owner
    with transaction.atomic():
        won = Invite.objects.filter(pk=invite.pk, claimed_at__isnull=True).update(
            claimed_at=timezone.now()
        )
        if not won:
            raise InviteTaken
        participant = Participant.objects.create(study=invite.study, invite=invite)
    _remember(session, participant, {})
    return participant


# --- the steps ------------------------------------------------------------------------------


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


def require_step(participant: Participant, step: str) -> None:
    """Refuse a request for any page other than the one the participant is on."""
    if next_step(participant) != step:
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
    ids = session.get(f"recruiter:{participant.pk}", {})
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
        return _rejoin_instead(session, participant, returning_participant(participant.study, ids))
    session.pop(f"recruiter:{participant.pk}", None)
    return participant


def _rejoin_instead(
    session: SessionBase, visit: Participant, returning: Participant
) -> Participant:
    """Drop a visit that never consented in favour of the participant its Prolific ID already is,
    so the admin lists no empty extra row; that participant is only joined on the same terms as
    at the study link (:func:`may_rejoin`)."""
    ids = session.get(f"recruiter:{visit.pk}", {})
    _forget(session, visit)
    visit.delete()
    if not may_rejoin(returning, ids):
        raise AlreadyTakingPart
    return rejoin(session, returning)


def decline_consent(session: SessionBase, participant: Participant) -> None:
    """A polite end: no recruiter IDs are kept, only that the visit ended in a decline."""
    require_step(participant, "consent")
    session.pop(f"recruiter:{participant.pk}", None)
    participant.status = Participant.Status.DECLINED
    participant.save(update_fields=["status"])


def study_checks(study: Study) -> list[dict[str, Any]]:
    """The study's comprehension checks, or the default one for its game and the person's seat."""
    if study.checks:
        return list(study.checks)
    if study.game == "undercover":
        return default_checks("undercover", "player", study.language)
    from studyapp.participants import design

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
    from studyapp.participants import assignment

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
            participant.finished_at = timezone.now()
            participant.save(update_fields=["check_attempts", "status", "finished_at"])
            return "failed"
        participant.save(update_fields=["check_attempts"])
        return "wrong"
    from studyapp.participants import groups

    try:
        if not groups.uses_group_lobby(participant):
            assignment.assign(participant)
        elif assignment.is_full(study, pilot=participant.is_pilot):
            raise assignment.StudyFull  # the group is drawn its condition in the lobby
    except assignment.StudyFull:
        participant.status = Participant.Status.FULL
        participant.finished_at = timezone.now()
        participant.save(update_fields=["status", "finished_at"])
        return "full"
    participant.practice_passed = True
    participant.checks_passed = True
    participant.status = Participant.Status.PLAYING
    participant.save(update_fields=["practice_passed", "checks_passed", "status"])
    return "passed"


def save_policy(participant: Participant, text: str) -> None:
    require_step(participant, "policy")
    participant.policy = text
    participant.policy_done = True
    participant.save(update_fields=["policy", "policy_done"])
    if next_step(participant) == "done":
        finish(participant)


def debrief_agents(participant: Participant) -> bool:
    """Whether the last page must disclose that some players were agents: the study kept it
    from people during play, and this person sat at a table."""
    return not participant.study.agents_disclosed and participant.round_set.exists()


def answer_questionnaire(participant: Participant, posted: Mapping[str, list[str]]) -> dict:
    """Keep the questionnaire's answers, or return the errors per item (and keep nothing). A
    failed attention check is recorded; under the study's ``screen`` policy it ends the study
    with the screened code, otherwise the person goes on, flagged in the export."""
    require_step(participant, "questionnaire")
    items = participant.study.questionnaire
    answers, errors = questionnaire.read_answers(items, posted)
    if errors:
        return errors
    participant.questionnaire_answers = answers
    participant.questionnaire_done = True
    participant.attention_failed = questionnaire.failed_checks(items, answers)
    fields = ["questionnaire_answers", "questionnaire_done", "attention_failed"]
    participant.save(update_fields=fields)
    if participant.attention_failed and participant.study.attention_failure == "screen":
        participant.status = Participant.Status.SCREENED
        participant.finished_at = timezone.now()
        participant.save(update_fields=["status", "finished_at"])
    elif next_step(participant) == "done":
        finish(participant)
    return {}


def debrief_read(participant: Participant) -> None:
    require_step(participant, "debrief")
    participant.debrief_seen = True
    participant.save(update_fields=["debrief_seen"])
    if next_step(participant) == "done":
        finish(participant)


def finish(participant: Participant) -> None:
    """All rounds played (and the policy question answered): fix the pay and show the code."""
    participant.status = Participant.Status.FINISHED
    participant.finished_at = timezone.now()
    participant.settle_payment()
    participant.save()


def withdraw(participant: Participant, *, delete_data: bool) -> str:
    """Stop now. Returns the dropped-out code, which pays for the time already given.

    Without ``delete_data`` the person has dropped out and their games stay in the study. With it
    their games (tables, turns, rounds), rewards, written policy and questionnaire answers are
    deleted and they are
    marked withdrawn; only what paying them needs is kept (recruiter IDs, consent, rounds and time
    counted, the amount owed), so the payment sheet still lists them. A table other people also
    played at is their game too: it stays (see :func:`delete_tables`), and an open one is left by
    its dropout policy.
    """
    shared_open: list[tuple[int, int]] = []
    with transaction.atomic():
        participant.finished_at = timezone.now()
        participant.status = Participant.Status.DROPPED
        participant.settle_payment()
        if delete_data:
            shared_open = _delete_rounds(participant)
            participant.status = Participant.Status.WITHDRAWN
            participant.total_reward = 0.0
            participant.policy = ""
            participant.questionnaire_answers = {}
            participant.attention_failed = []
        participant.save()
    if not delete_data:
        leave_open_rounds(participant)
    _leave_shared_tables(shared_open)
    return participant.study.code_dropped


def delete_participant(participant: Participant) -> None:
    """Erase a person entirely (staff, on request): the record, its rounds, the tables and turns
    (a table other people also played at stays, see :func:`delete_tables`).
    A personal invite stays used (its ``claimed_at`` is kept), so nobody else can take the seat."""
    with transaction.atomic():
        shared_open = _delete_rounds(participant, and_participant=True)
    _leave_shared_tables(shared_open)


def _delete_rounds(participant: Participant, *, and_participant: bool = False) -> list[tuple]:
    """Delete the person's rounds (or the whole person) and the tables only they played at;
    returns ``(table, seat)`` of their open rounds at tables that stay."""
    rounds = list(participant.round_set.values_list("table_id", "seat", "finished_at"))
    if and_participant:
        participant.delete()  # its rounds go with it
    else:
        participant.round_set.all().delete()
    kept = delete_tables([table_id for table_id, _, _ in rounds])
    return [(table_id, seat) for table_id, seat, done in rounds if table_id in kept and not done]


def _leave_shared_tables(seats: list[tuple[int, int]]) -> None:
    from studyapp.tables import driver

    for table_id, seat in seats:
        driver.drop_out(table_id, seat)


def mark_dropped(participant: Participant) -> None:
    """Staff close someone who left mid-study; they are owed for the rounds they played."""
    if participant.status not in Participant.ACTIVE:
        return
    participant.status = Participant.Status.DROPPED
    participant.finished_at = participant.last_seen_at or timezone.now()
    participant.settle_payment()
    participant.save()
    leave_open_rounds(participant)


def drop_idle_between_rounds(now: Any = None) -> int:
    """People who stopped coming back between rounds (on the rounds page, at a policy question,
    or after a round an agent finished for them) are not waited for forever: once idle past
    their study's ``idle_limit_seconds`` since their last page or the end of their last game,
    with no round being played, their last round is booked if its game ended, and whoever is
    still taking part is dropped (paid for the rounds played). Someone at a table is left to the
    table's own idle limit. Run by the periodic sweep; returns how many were dropped."""
    from django.db.models import Exists, Max, OuterRef

    from studyapp.tables.models import Table

    now = now or timezone.now()
    at_a_table = Round.objects.filter(
        participant=OuterRef("pk"),
        finished_at__isnull=True,
        table__status__in=[Table.Status.LOBBY, Table.Status.PLAYING, Table.Status.PAUSED],
    )
    quiet = (
        Participant.objects.filter(
            status=Participant.Status.PLAYING,
            study__idle_limit_seconds__gt=0,
            last_seen_at__isnull=False,
        )
        .exclude(Exists(at_a_table))
        .annotate(last_game=Max("round_set__table__finished_at"))
        .select_related("study")
    )
    dropped = 0
    for participant in quiet:
        active = max(participant.last_seen_at, participant.last_game or participant.last_seen_at)
        if (now - active).total_seconds() < participant.study.idle_limit_seconds:
            continue
        sync_round(participant)  # a game that ended while they were away is booked first
        participant.refresh_from_db()
        if participant.status == Participant.Status.PLAYING:
            mark_dropped(participant)
            dropped += 1
    return dropped


def leave_open_rounds(participant: Participant) -> None:
    """Someone who stops taking part leaves the table of their open round by its dropout policy
    (replaced, skipped or ended): the seat is no longer theirs and the table is not left waiting."""
    from studyapp.tables import driver

    for round_ in participant.round_set.filter(finished_at__isnull=True):
        driver.drop_out(round_.table_id, round_.seat)


# --- rounds (tables are created and read through studyapp.tables.services) -------------------


def delete_tables(table_ids: list[int]) -> set[int]:
    """Delete tables, and with them their seats and turns, except those another participant's
    round still points at (people who shared an Undercover table): their game is not ours to
    delete. Returns the ids of the tables kept."""
    from studyapp.tables.models import Table

    kept = set(Round.objects.filter(table_id__in=table_ids).values_list("table_id", flat=True))
    Table.objects.filter(pk__in=table_ids).exclude(pk__in=kept).delete()
    return kept


def current_round(participant: Participant) -> Round | None:
    number = participant.rounds_finished + 1
    return participant.round_set.filter(number=number).first()


def play_state(participant: Participant) -> dict[str, Any]:
    """What the rounds page shows: where the person is and how they have done so far."""
    sync_round(participant)
    return {
        "number": participant.rounds_finished + 1,
        "of": participant.study.rounds,
        "round": current_round(participant),
        "finished": list(participant.round_set.filter(finished_at__isnull=False)),
        "total_reward": participant.total_reward,
    }


def sync_round(participant: Participant) -> None:
    """Read the current round's table; when its game is over, book the reward and move on."""
    from studyapp.tables import services

    round_ = current_round(participant)
    if round_ is None or round_.finished_at is not None:
        return
    snap = services.table_state(round_.table_id)
    if snap.table.exit_code and not snap.events:
        lobby_timed_out(participant)  # the lobby closed before enough people came
        return
    if not snap.is_over:
        return
    reward = float(snap.engine.outcome(snap.state)[round_.seat]["reward"])
    # An agent took the seat over (a missed deadline, or the person left): the round is not
    # theirs. What the agent won never reaches their total or bonus, the round is not counted as
    # one they played (the export flags the game ``taken_over``), and someone still taking part
    # has dropped out: paid for the rounds they played, with the study's code for that, never
    # the finished code.
    taken_over = snap.seat(round_.seat).kind != "human"
    if taken_over:
        reward = 0.0
    with transaction.atomic():
        updated = Round.objects.filter(pk=round_.pk, finished_at__isnull=True).update(
            reward=reward, finished_at=timezone.now()
        )
        if not updated:
            return
        if not taken_over:
            participant.rounds_finished += 1
            participant.total_reward += reward
            participant.save(update_fields=["rounds_finished", "total_reward"])
    if taken_over:
        mark_dropped(participant)
    elif next_step(participant) == "done":
        finish(participant)


def book_table(table_id: int) -> None:
    """A study table's game has just ended: book each person's round at once (their reward in
    the running total, the study finished after the last round), so the end screen and the study
    bar show the total with this game in it, not only after Continue."""
    rounds = Round.objects.filter(
        table_id=table_id, finished_at__isnull=True, participant__status__in=Participant.ACTIVE
    )
    for round_ in rounds.select_related("participant__study"):
        sync_round(round_.participant)  # someone who has stopped is settled as they stopped


def lobby_timed_out(participant: Participant) -> None:
    """No table formed in time: the person leaves with the study's lobby-timeout code and is
    paid for the rounds played, like someone who stopped early."""
    if participant.status not in Participant.ACTIVE:
        return
    participant.status = Participant.Status.LOBBY_TIMEOUT
    participant.finished_at = timezone.now()
    participant.settle_payment()
    participant.save()


def shown_policy(participant: Participant) -> str:
    """The strategy text this participant's condition shows them ('' for none)."""
    from studyapp.participants import design

    try:
        return design.effective(participant.study, participant.condition)["shown_policy"]
    except design.DesignError:
        return participant.study.shown_policy


def begin_round(session: SessionBase, participant: Participant) -> Round:
    """Create the table for the next round (or return the one already there: a double click or a
    second tab must not create two tables for one round). The human seat is held by this
    browser's session, which is what lets the table pages admit this participant and nobody else.
    """
    from studyapp.participants import study_tables

    require_step(participant, "play")
    if session.session_key is None:
        session.save()
    existing = current_round(participant)
    if existing is not None:
        take_seat(session, existing)
        return existing
    number = participant.rounds_finished + 1
    # The study's design makes the table (study_tables); an Undercover seat may wait in a lobby.
    try:
        round_ = study_tables.create_round(participant, number, session.session_key)
    except IntegrityError:  # a double click or a second tab made this round a moment ago
        existing = current_round(participant)
        take_seat(session, existing)
        return existing
    participant.current_round = number
    participant.save(update_fields=["current_round"])
    round_.refresh_from_db()  # a group that formed as this person came sits at its own table
    return round_


def seated_round(participant: Participant) -> Round | None:
    """The round this participant is playing at an open table right now, if any."""
    from studyapp.tables.models import Table

    if next_step(participant) != "play":
        return None
    round_ = current_round(participant)
    if round_ is None or round_.finished_at is not None:
        return None
    return round_ if round_.table.status == Table.Status.PLAYING else None


def take_seat(session: SessionBase, round_: Round) -> None:
    """Give the round's human seat to this browser: a returning participant may continue a round
    they began in another browser. Only a browser that owns the participant gets here."""
    from studyapp.tables.models import Seat

    Seat.objects.filter(table_id=round_.table_id, index=round_.seat, kind=Seat.Kind.HUMAN).exclude(
        session_key=session.session_key
    ).update(session_key=session.session_key)


def table_url(round_: Round) -> str:
    return reverse("tables:table", args=[round_.table_id])
