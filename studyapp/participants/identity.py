"""Who a browser is in a study: the participants it holds, arriving by a study link or a
personal invite, the recruiter's IDs on the link, and rejoining from another browser.

A browser is tied to its participant through the session, and the same browser always resumes.
A PROLIFIC_PID alone is no password (anyone may type one), so another browser rejoins that
person's participant only when the link also carries the recruiter's SESSION_ID of their
submission (Prolific passes the same one when the person reopens it) or the resume code the
participant was shown (:func:`resume_code`); otherwise it is refused (:class:`AlreadyTakingPart`).
A personal invite stays bound to the browser that claimed it. Recruiter IDs wait in the session
until the person consents (:func:`studyapp.participants.steps.give_consent`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from django.contrib.sessions.backends.base import SessionBase
from django.db import transaction
from django.utils import timezone
from django.utils.crypto import constant_time_compare, salted_hmac

from studyapp.participants.models import Invite, Participant, Study

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


def waiting_ids(session: SessionBase, participant: Participant) -> dict[str, str]:
    """The recruiter IDs this browser's visit came with, kept in the session until consent."""
    return session.get(f"recruiter:{participant.pk}", {})


def drop_waiting_ids(session: SessionBase, participant: Participant) -> None:
    """Forget the waiting recruiter IDs: consent stored them, or the person declined."""
    session.pop(f"recruiter:{participant.pk}", None)


def _forget(session: SessionBase, participant: Participant) -> None:
    owned = dict(session.get(SESSION_KEY, {}))
    owned.pop(str(participant.study_id), None)
    session[SESSION_KEY] = owned
    drop_waiting_ids(session, participant)


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


def rejoin_instead(session: SessionBase, visit: Participant, returning: Participant) -> Participant:
    """Drop a visit that never consented in favour of the participant its Prolific ID already is,
    so the admin lists no empty extra row; that participant is only joined on the same terms as
    at the study link (:func:`may_rejoin`)."""
    ids = waiting_ids(session, visit)
    _forget(session, visit)
    visit.delete()
    if not may_rejoin(returning, ids):
        raise AlreadyTakingPart
    return rejoin(session, returning)


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
