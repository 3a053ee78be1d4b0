"""The bonus sheet beside the payment sheet: the recruiter's bulk format, one
``participant_id,amount`` line per unpaid bonus above zero, through the CSV guard."""

from __future__ import annotations

import csv
import io
from decimal import Decimal

import pytest
from django.urls import reverse
from participant_helpers import get_ready, page, win_round

from studyapp.participants import pilots
from studyapp.participants.models import Participant

pytestmark = pytest.mark.django_db

CHANGELIST = "admin:participants_participant_changelist"


def finished(client, study, query: str, wins: int = 2) -> Participant:
    participant = get_ready(client, study, query)
    for _ in range(wins):
        win_round(client, participant)
    participant.refresh_from_db()
    if participant.status != "finished":
        client.post(page(participant, "policy"), {"policy": "Living or not first."})
        participant.refresh_from_db()
    return participant


def action(staff, name: str, participants):
    return staff.post(
        reverse(CHANGELIST), {"action": name, "_selected_action": [p.pk for p in participants]}
    )


def sheet(response) -> list[list[str]]:
    assert response["Content-Type"].startswith("text/csv")
    return list(csv.reader(io.StringIO(response.content.decode())))


def test_it_lists_unpaid_bonuses_in_the_recruiters_bulk_format(study, client_factory, staff):
    owed = finished(client_factory(), study, "?PROLIFIC_PID=aaaabbbbccccdddd11112222")
    paid = finished(client_factory(), study, "?PROLIFIC_PID=eeeeffff0000111122223333")
    action(staff, "mark_paid", [paid])
    playing = get_ready(client_factory(), study, "?PROLIFIC_PID=9999888877776666aaaabbbb")
    no_bonus = finished(client_factory(), study, "?pid=zero-bonus")
    Participant.objects.filter(pk=no_bonus.pk).update(bonus=Decimal("0.00"))

    rows = sheet(action(staff, "export_bonus_sheet", [owed, paid, playing, no_bonus]))
    assert rows == [["aaaabbbbccccdddd11112222", "2.00"]]


def test_it_uses_the_recruiter_pid_when_there_is_no_prolific_id(study, alice, staff):
    participant = finished(alice, study, "?pid=panel-42")
    assert sheet(action(staff, "export_bonus_sheet", [participant])) == [["panel-42", "2.00"]]


def test_it_defuses_a_recruiter_id_that_would_run_as_a_formula(study, alice, staff):
    participant = finished(alice, study, "?pid=-cmd")
    rows = sheet(action(staff, "export_bonus_sheet", [participant]))
    assert rows == [["'-cmd", "2.00"]]


def test_it_leaves_out_pilots_and_warns_about_people_without_an_id(study, client_factory, staff):
    token = pilots.pilot_token(study.slug)
    pilot = finished(
        client_factory(), study, f"?PROLIFIC_PID=1111222233334444aaaabbbb&pilot={token}"
    )
    nameless = finished(client_factory(), study, "")
    response = action(staff, "export_bonus_sheet", [pilot, nameless])
    assert sheet(response) == []
    shown = staff.get(reverse(CHANGELIST)).content.decode()
    assert "1 participant(s) with a bonus owed have no recruiter ID" in shown
