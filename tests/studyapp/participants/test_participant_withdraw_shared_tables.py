"""Withdrawing with "delete my data" (or staff deleting a person) at a table other people also
played at: the other people's game stays, the open table is left by its dropout policy, and the
tables only this person played at go."""

from __future__ import annotations

import pytest
from django.test import Client
from participant_helpers import arrive, consent, page

from studyapp.participants.models import Participant, Round, Study
from studyapp.participants.rounds import current_round, delete_participant, delete_tables
from studyapp.participants.steps import study_checks
from studyapp.tables.models import Seat, Table

pytestmark = pytest.mark.django_db(transaction=True)

PERSON = {"kind": "person"}
AGENT = {"kind": "agent", "spec": "offline:kb"}


def two_person_study() -> Study:
    return Study.objects.create(
        slug="uc-shared",
        title="Shared tables",
        game="undercover",
        rounds=2,
        consent_text="Recorded for research.",
        completion_url="https://app.prolific.com/submissions/complete",
        code_finished="UCFIN",
        code_dropped="UCDROP",
        design={"seats": [PERSON, PERSON, AGENT, AGENT, AGENT], "wait_seconds": 60},
        dropout="replace",
    )


def seated_pair(study: Study) -> tuple[Client, Participant, Client, Participant, Table]:
    people = []
    for _ in range(2):
        client = Client()
        participant = arrive(client, study)
        consent(client, participant)
        checks = study_checks(study)
        answers = {f"check_{i}": check["answer"] for i, check in enumerate(checks)}
        client.post(page(participant, "instructions"), answers)
        participant.refresh_from_db()
        client.post(page(participant, "play"))
        people.append((client, participant))
    (alice, first), (bob, second) = people
    table = current_round(first).table
    assert current_round(second).table_id == table.pk
    table.refresh_from_db()
    assert table.status == Table.Status.PLAYING
    return alice, first, bob, second, table


def test_withdrawing_with_deletion_at_a_shared_table_keeps_the_other_persons_game() -> None:
    study = two_person_study()
    alice, first, bob, second, table = seated_pair(study)
    response = alice.post(page(first, "withdraw"), {"delete_data": "on"})
    assert response.status_code == 200 and b"UCDROP" in response.content
    first.refresh_from_db()
    assert first.status == Participant.Status.WITHDRAWN
    assert not Round.objects.filter(participant=first).exists()
    assert Table.objects.filter(pk=table.pk).exists()  # bob's game
    assert Round.objects.filter(participant=second, table=table).exists()
    assert Seat.objects.get(table=table, index=0).kind == Seat.Kind.AGENT  # replaced at once
    assert bob.get(f"/tables/{table.pk}/").status_code == 200


def test_staff_deleting_a_person_at_a_shared_table_keeps_the_other_persons_game() -> None:
    study = two_person_study()
    _, first, _, second, table = seated_pair(study)
    delete_participant(first)
    assert not Participant.objects.filter(pk=first.pk).exists()
    assert Table.objects.filter(pk=table.pk).exists()
    assert Round.objects.filter(participant=second, table=table).exists()
    assert Seat.objects.get(table=table, index=0).kind == Seat.Kind.AGENT


def test_a_table_only_the_withdrawing_person_played_at_is_deleted() -> None:
    study = two_person_study()
    _, first, _, _, shared = seated_pair(study)
    own = Table.objects.create(game="undercover", config={}, seed=0)
    Round.objects.create(participant=first, number=2, table=own, seat=0)
    assert delete_tables([shared.pk, own.pk]) == {shared.pk, own.pk}  # both still in use
    Round.objects.filter(participant=first).delete()
    assert delete_tables([shared.pk, own.pk]) == {shared.pk}
    assert not Table.objects.filter(pk=own.pk).exists()
