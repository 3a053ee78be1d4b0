"""The staff side: the participant list shows consent and what is owed, "mark paid" pays only those
owed, the payment sheet exports as CSV, studies show live progress and mint invite links."""

from __future__ import annotations

import csv
import io

import pytest
from django.urls import reverse
from participant_helpers import arrive, get_ready, page, win_round

from studyapp.participants.models import Invite, Participant
from studyapp.participants.pseudonyms import public_record, public_rounds

pytestmark = pytest.mark.django_db

PROLIFIC = "?PROLIFIC_PID=aaaabbbbccccdddd11112222&STUDY_ID=st1&SESSION_ID=se1"
CHANGELIST = "admin:participants_participant_changelist"


def finished(client, study, query=PROLIFIC) -> Participant:
    participant = get_ready(client, study, query)
    win_round(client, participant)
    win_round(client, participant)
    client.post(page(participant, "policy"), {"policy": "Split by living or not first."})
    participant.refresh_from_db()
    return participant


def action(staff, name: str, participants: list[Participant]):
    return staff.post(
        reverse(CHANGELIST),
        {"action": name, "_selected_action": [p.pk for p in participants]},
    )


def test_the_participant_list_shows_consent_progress_and_payment(study, alice, staff):
    participant = finished(alice, study)
    response = staff.get(reverse(CHANGELIST))
    text = response.content.decode()
    assert participant.public_id in text
    assert "owed" in text
    assert "2.00" in text  # total reward
    assert "10.00" in text  # amount


def test_the_participant_list_filters_by_study_and_status(study, alice, bob, staff):
    done = finished(alice, study)
    waiting = arrive(bob, study)
    response = staff.get(
        reverse(CHANGELIST), {"status__exact": "finished", "study__id__exact": study.pk}
    )
    assert done.public_id in response.content.decode()
    assert waiting.public_id not in response.content.decode()


def test_mark_paid_pays_those_owed_and_skips_the_rest(study, alice, bob, staff):
    done = finished(alice, study)
    playing = get_ready(bob, study)
    action(staff, "mark_paid", [done, playing])
    done.refresh_from_db()
    playing.refresh_from_db()
    assert done.paid and done.paid_at is not None
    assert done.payment_status == "paid"
    assert not playing.paid


def test_mark_dropped_settles_pay_for_the_rounds_played(study, alice, staff):
    participant = get_ready(alice, study)
    win_round(alice, participant)
    action(staff, "mark_dropped", [participant])
    participant.refresh_from_db()
    assert participant.status == Participant.Status.DROPPED
    assert str(participant.payment_amount) == "5.00"
    assert participant.payment_status == "owed"


def test_the_payment_sheet_exports_as_csv(study, alice, bob, staff):
    done = finished(alice, study)
    get_ready(bob, study)
    action(staff, "mark_paid", [done])
    response = action(staff, "export_payment_sheet", list(Participant.objects.all()))
    assert response["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert len(rows) == 2
    row = next(r for r in rows if r["public_id"] == done.public_id)
    assert row["prolific_pid"] == "aaaabbbbccccdddd11112222"
    assert row["payment_status"] == "paid"
    assert row["amount"] == "10.00"
    assert row["bonus"] == "2.00"
    assert row["rounds_finished"] == "2"
    assert row["consent_version"] == "2"
    assert row["paid_at"]


def test_the_payment_sheet_defuses_spreadsheet_formulas(study, alice, staff):
    participant = finished(alice, study, "?pid=-cmd")
    response = action(staff, "export_payment_sheet", [participant])
    row = next(csv.DictReader(io.StringIO(response.content.decode())))
    assert row["recruiter_pid"] == "'-cmd"


def test_the_payment_sheet_leaves_empty_cells_empty(study, alice, staff):
    participant = finished(alice, study, "")
    response = action(staff, "export_payment_sheet", [participant])
    row = next(csv.DictReader(io.StringIO(response.content.decode())))
    for column in ("prolific_pid", "prolific_study_id", "recruiter_pid", "paid_at"):
        assert row[column] == "", column
    assert "'" not in response.content.decode()


def test_the_payment_sheet_names_the_invite_a_participant_came_by(study, alice, bob, staff):
    # A token of its own: a random one starts with '-' one time in 64, and the sheet's CSV guard
    # (analysis.safe_csv) then writes it with an apostrophe in front, as a formula-like cell.
    invite = Invite.objects.create(study=study, label="cohort A", token="cohortAInviteToken0123")
    alice.post(reverse("participants:invite_link", args=[invite.token]))
    by_invite = Participant.objects.get(invite=invite)
    by_link = arrive(bob, study, PROLIFIC)
    response = action(staff, "export_payment_sheet", [by_invite, by_link])
    rows = {r["public_id"]: r for r in csv.DictReader(io.StringIO(response.content.decode()))}
    assert rows[by_invite.public_id]["invite_label"] == "cohort A"
    assert rows[by_invite.public_id]["invite_token"] == invite.token
    assert rows[by_link.public_id]["invite_label"] == ""
    assert rows[by_link.public_id]["invite_token"] == ""


def test_the_invites_csv_names_the_participant_who_claimed_each_link(study, alice, staff):
    claimed, unused = Invite.objects.create(study=study), Invite.objects.create(study=study)
    alice.post(reverse("participants:invite_link", args=[claimed.token]))
    participant = Participant.objects.get(invite=claimed)
    response = staff.post(
        reverse("admin:participants_invite_changelist"),
        {"action": "export_links", "_selected_action": [claimed.pk, unused.pk]},
    )
    rows = {
        r["link"].rstrip("/").rsplit("/", 1)[1]: r
        for r in csv.DictReader(io.StringIO(response.content.decode()))
    }
    assert rows[claimed.token]["participant"] == participant.public_id
    assert rows[claimed.token]["claimed_at"]
    assert rows[unused.token]["participant"] == ""
    assert rows[unused.token]["claimed_at"] == ""


def test_the_study_page_explains_the_study_link(study, staff):
    url = reverse("admin:participants_study_change", args=[study.pk])
    text = staff.get(url).content.decode()
    assert "The study link is /s/ followed by this slug" in text
    assert "/s//" not in text


def test_the_participant_list_capitalises_every_status(study, alice, bob, staff):
    get_ready(alice, study)
    participant = get_ready(bob, study)
    bob.post(page(participant, "withdraw"), {})
    text = staff.get(reverse(CHANGELIST)).content.decode()
    assert "Dropped out" in text
    assert "Screened out" in text  # a choice of the status filter
    assert "dropped out<" not in text and "screened out<" not in text


def test_the_study_page_shows_live_progress(study, alice, bob, staff):
    finished(alice, study)
    participant = get_ready(bob, study)
    bob.post(page(participant, "withdraw"), {})
    response = staff.get(reverse("admin:participants_study_change", args=[study.pk]))
    assert "started 2 · playing 0 · finished 1 · dropped out 1" in response.content.decode()


def test_staff_generate_personal_invites_as_a_csv_of_links(study, staff):
    url = reverse("admin:participants_study_invites", args=[study.pk])
    assert staff.get(url).status_code == 200
    response = staff.post(url, {"count": 3, "label": "cohort A"})
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    tokens = set(Invite.objects.values_list("token", flat=True))
    assert len(rows) == 3 and len(tokens) == 3
    for row in rows:
        assert row["link"].startswith("http://testserver/i/")
        assert row["link"].rstrip("/").rsplit("/", 1)[1] in tokens
        assert row["label"] == "cohort A"
    assert all(len(t) >= 32 for t in tokens)


def test_exports_for_analysis_carry_the_public_id_and_no_recruiter_ids(study, alice):
    participant = finished(alice, study)
    exported = repr(public_record(participant)) + repr(public_rounds(participant))
    assert participant.public_id in exported
    for secret in ("aaaabbbbccccdddd11112222", "st1", "se1"):
        assert secret not in exported
    assert [r["round"] for r in public_rounds(participant)] == [0, 1]


def test_deleting_a_participant_in_the_admin_deletes_their_tables_too(study, alice, staff):
    from studyapp.tables.models import Table

    participant = get_ready(alice, study)
    win_round(alice, participant)
    response = action(staff, "delete_selected", [participant])
    assert response.status_code == 200  # the confirmation page
    staff.post(
        reverse(CHANGELIST),
        {"action": "delete_selected", "_selected_action": [participant.pk], "post": "yes"},
    )
    assert not Participant.objects.exists()
    assert not Table.objects.exists()


def test_the_study_list_counts_started_finished_and_dropped(study, alice, bob, staff):
    finished(alice, study)
    participant = get_ready(bob, study)
    bob.post(page(participant, "withdraw"), {})
    response = staff.get(reverse("admin:participants_study_changelist"))
    text = response.content.decode()
    assert '<td class="field-started">2</td>' in text
    assert '<td class="field-finished">1</td>' in text
    assert '<td class="field-dropped">1</td>' in text


def test_pilots_are_left_out_of_the_payment_and_bonus_sheets_unless_asked(study, alice, bob, staff):
    person = finished(alice, study)
    pilot = finished(
        bob, study, "?PROLIFIC_PID=eeeebbbbccccdddd11112222&STUDY_ID=st1&SESSION_ID=s2"
    )
    Participant.objects.filter(pk=pilot.pk).update(is_pilot=True)
    both = [person, pilot]

    def listed(name):
        response = action(staff, name, both)
        return response.content.decode()

    sheet = listed("export_payment_sheet")
    assert person.public_id in sheet and pilot.public_id not in sheet
    with_pilots = listed("export_payment_sheet_with_pilots")
    assert pilot.public_id in with_pilots
    row = next(
        r for r in csv.DictReader(io.StringIO(with_pilots)) if r["public_id"] == pilot.public_id
    )
    assert row["payment_status"] == "pilot"
    bonus = listed("export_bonus_sheet")
    assert "aaaabbbbccccdddd11112222" in bonus and "eeeebbbbccccdddd11112222" not in bonus
