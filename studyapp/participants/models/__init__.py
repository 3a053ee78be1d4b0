"""The participants app's models, one module per kind of record, all importable from here (as
Django's app registry and ``from studyapp.participants.models import X`` expect):

- :mod:`~studyapp.participants.models.studies`: the study staff set up, its consent versions;
- :mod:`~studyapp.participants.models.conditions`: a study's arms and the groups drawn to them;
- :mod:`~studyapp.participants.models.people`: participants and personal invites;
- :mod:`~studyapp.participants.models.payments`: bonus batches recorded before they are created;
- :mod:`~studyapp.participants.models.rounds`: the rounds a participant plays, one table each.

The migrations name the callables below by their path here (e.g. ``models.new_public_id``).
"""

from studyapp.participants.models.conditions import Condition, StudyGroup
from studyapp.participants.models.payments import BonusBatch
from studyapp.participants.models.people import (
    POLICY_MAX_LENGTH,
    RECRUITER_ID_MAX_LENGTH,
    Invite,
    Participant,
    new_invite_token,
    new_public_id,
)
from studyapp.participants.models.rounds import Round
from studyapp.participants.models.studies import (
    MINUTES_PER_ROUND,
    MINUTES_SETUP,
    ConsentVersion,
    Study,
    check_list_problem,
    default_think_seconds,
    duration_text,
    next_consent_version,
    think_seconds_problem,
    validate_completion_url,
)

__all__ = [
    "BonusBatch",
    "MINUTES_PER_ROUND",
    "MINUTES_SETUP",
    "POLICY_MAX_LENGTH",
    "RECRUITER_ID_MAX_LENGTH",
    "Condition",
    "ConsentVersion",
    "Invite",
    "Participant",
    "Round",
    "Study",
    "StudyGroup",
    "check_list_problem",
    "default_think_seconds",
    "duration_text",
    "new_invite_token",
    "new_public_id",
    "next_consent_version",
    "think_seconds_problem",
    "validate_completion_url",
]
