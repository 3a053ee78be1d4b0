"""Database rows as the records ``analysis`` reads: the experiment JSONL shape, pseudonymised.

The analysis package never sees Django; this package is the one place that turns tables, seats,
turns and study rounds into plain records, so the dashboard, the ``export_study`` command and an
experiment file all go through the same frames (:mod:`analysis.frames`) and the same summary
(:func:`analysis.summary.summarize`). A human is named only by the participant's public id
(through :mod:`studyapp.participants.pseudonyms`), never by a recruiter ID, a user or a session key.

- :mod:`.queries`: which tables and people a study has, and the reads (ORM and plain SQL, with
  the PostgreSQL and SQLite branches) of tables, seats, rounds and turns;
- :mod:`.shaping`: records and the games and turns frames built from those rows;
- :mod:`.moves`: who made each move and what its model calls cost, read as columns;
- :mod:`.people`: the participants, questionnaire and consent-version frames.

The names below are what the rest of the project imports from ``studyapp.dashboard.records``.
"""

from studyapp.dashboard.records.moves import turn_log
from studyapp.dashboard.records.people import (
    CONSENT_VERSION_COLUMNS,
    PARTICIPANT_COLUMNS,
    QUESTIONNAIRE_COLUMNS,
    consent_versions_frame,
    participants_frame,
    questionnaire_frame,
)
from studyapp.dashboard.records.queries import (
    CHUNK,
    agent_tables,
    left_out,
    model_jobs,
    people_outside,
    started,
    study_participants,
    study_tables,
    table_chunks,
)
from studyapp.dashboard.records.shaping import (
    AGENT_TABLES,
    agent_frames,
    agent_games,
    games_and_keys,
    games_and_turns,
    iter_games_and_turns,
    iter_records,
    study_frames,
    study_games,
    table_records,
)

__all__ = [
    "AGENT_TABLES",
    "CHUNK",
    "CONSENT_VERSION_COLUMNS",
    "PARTICIPANT_COLUMNS",
    "QUESTIONNAIRE_COLUMNS",
    "agent_frames",
    "agent_games",
    "agent_tables",
    "consent_versions_frame",
    "games_and_keys",
    "games_and_turns",
    "iter_games_and_turns",
    "iter_records",
    "left_out",
    "model_jobs",
    "participants_frame",
    "people_outside",
    "questionnaire_frame",
    "started",
    "study_frames",
    "study_games",
    "study_participants",
    "study_tables",
    "table_chunks",
    "table_records",
    "turn_log",
]
