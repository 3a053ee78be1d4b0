"""The participants app's models, one module per kind of record, all importable from here (as
Django's app registry and ``from studyapp.participants.models import X`` expect):

- :mod:`~studyapp.participants.models.studies`: the study staff set up;
- :mod:`~studyapp.participants.models.validation`: what a study's fields may hold;
- :mod:`~studyapp.participants.models.consent`: a study's consent versions, their texts as agreed;
- :mod:`~studyapp.participants.models.conditions`: a study's arms and the groups drawn to them;
- :mod:`~studyapp.participants.models.people`: participants and personal invites;
- :mod:`~studyapp.participants.models.payments`: bonus batches and approval records, each written before its call to Prolific;
- :mod:`~studyapp.participants.models.rounds`: the rounds a participant plays, one table each;
- :mod:`~studyapp.participants.models.study_tables`: a table's study part (study, condition,
  round, group, seat order).

The migrations name the callables below by their path here (e.g. ``models.new_public_id``).
"""

from studyapp.participants.models.conditions import Condition, StudyGroup
from studyapp.participants.models.consent import ConsentVersion, next_consent_version
from studyapp.participants.models.payments import ApprovalRecord, BonusBatch
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
    Study,
    default_think_seconds,
    duration_text,
    think_seconds_problem,
)
from studyapp.participants.models.study_tables import StudyTable
from studyapp.participants.models.validation import check_list_problem, validate_completion_url

__all__ = [
    "ApprovalRecord",
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
    "StudyTable",
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
