"""The export's turns, read as columns (``iter_games_and_turns``), equal the turns frame built from
the records' event objects, awkward events and model usage included."""

import pandas as pd
import pytest
from analysis_db_helpers import events_found_at, finished_table, make_study

from analysis.frames import games_frame, turns_frame
from studyapp.dashboard.records import iter_games_and_turns, iter_records
from studyapp.participants.models import Participant, Round
from studyapp.tables.models import Table, Turn

pytestmark = pytest.mark.django_db

AGENTS = [
    {"kind": "agent", "agent_spec": "offline:infogain"},
    {"kind": "agent", "agent_spec": "offline:kb"},
]


def awkward_table() -> Table:
    """Events whose fields are not the text the columns hold, and turns with model usage: a study
    round whose reward was recorded, so its log is never replayed."""
    events = events_found_at(3)
    events[0] |= {"text": 12, "score": 1e-7, "big": 1e17}
    events[1] |= {"answer": True, "weight": 0.1, "note": "caf\u00e9 \u2028 =1+1"}
    events[2] |= {"target": 1.0, "text": "=SUM(A1)"}
    table = finished_table(events, AGENTS)
    Turn.objects.filter(table=table, seq=0).update(
        usage={"calls": 1, "input_tokens": 5, "latency_s": 0.123456789, "error": "@timeout"}
    )
    Turn.objects.filter(table=table, seq=2).update(usage={"calls": True, "output_tokens": 2.0})
    Round.objects.create(participant=Participant.objects.first(), number=4, table=table, reward=0.5)
    return table


def test_the_columns_give_the_turns_and_games_of_the_records():
    make_study()
    awkward_table()
    finished_table(events_found_at(7), AGENTS)
    finished_table([], AGENTS)  # no turns
    tables = Table.objects.all()
    records = [record for part in iter_records(tables, chunk=2) for record in part]
    parts = list(iter_games_and_turns(tables, chunk=2))
    games = pd.concat([g for g, _ in parts], ignore_index=True)
    turns = pd.concat([t for _, t in parts], ignore_index=True)
    assert len(turns) > 30
    pd.testing.assert_frame_equal(turns, turns_frame(records))
    pd.testing.assert_frame_equal(games, games_frame(records))
