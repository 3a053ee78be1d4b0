"""Arriving from Prolific and running ``manage.py prolific``, for the tests of paying people
through Prolific's API (tests/studyapp/participants/prolific/) and of the pay rules."""

from __future__ import annotations

import io

from django.core.management import CommandError, call_command
from participant_helpers import get_ready, page, win_round

from studyapp.participants import pilots
from studyapp.participants.models import Participant
from tests.fakes.prolific_server import FakeProlific

STUDY_ID = "5f0c1d2e3a4b5c6d7e8f9012"


def pid(n: int) -> str:
    return f"{n:024x}"


def arrive_from_prolific(client, study, server: FakeProlific, n: int, pilot: bool = False):
    query = f"?PROLIFIC_PID={pid(n)}&STUDY_ID={STUDY_ID}&SESSION_ID=sub{n}"
    if pilot:
        query += f"&pilot={pilots.pilot_token(study.slug)}"
    server.add_submission(f"sub{n}", pid(n), STUDY_ID)
    return get_ready(client, study, query)


def finish(client, participant: Participant) -> Participant:
    win_round(client, participant)
    win_round(client, participant)
    client.post(page(participant, "policy"), {"policy": "Living or not, first."})
    participant.refresh_from_db()
    assert participant.status == "finished"
    return participant


def run(*args: str) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    try:
        call_command("prolific", *args, stdout=out, stderr=err)
    except CommandError as failure:
        err.write(str(failure))
    return out.getvalue(), err.getvalue()
