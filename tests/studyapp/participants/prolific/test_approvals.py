"""Approvals recorded like bonuses (``manage.py prolific approve|status SLUG``), against a loopback
Prolific that keeps state (tests/fakes/prolific_server.py): every approval call is written down
before it is sent and settled against each submission's own status on Prolific, so a bulk
approval carried out but answered 500, a run killed mid-call, or a submission approved by hand
leave a ledger that agrees with Prolific after one run, and nobody's reward is paid twice."""

from __future__ import annotations

from decimal import Decimal

import pytest
from prolific_helpers import STUDY_ID, arrive_from_prolific, finish, pid, run

from studyapp.participants.models import ApprovalRecord, Participant
from studyapp.participants.rounds import mark_dropped
from tests.fakes.prolific_server import FakeProlific

pytestmark = pytest.mark.django_db


@pytest.fixture
def prolific(settings):
    with FakeProlific() as server:
        settings.PROLIFIC_API_TOKEN = server.token
        settings.PROLIFIC_API_URL = server.url
        settings.PROLIFIC_SETTLE_SECONDS = 0
        yield server


def finished(study, client_factory, server, numbers) -> list[Participant]:
    return [
        finish(client := client_factory(), arrive_from_prolific(client, study, server, n))
        for n in numbers
    ]


def approvals_sent(server: FakeProlific) -> list[str]:
    return [
        path
        for method, path, _ in server.requests
        if method == "POST" and ("approve" in path or "transition" in path)
    ]


def assert_ledger_agrees(study, server: FakeProlific) -> None:
    out, err = run("status", study.slug)
    assert err == "", err
    assert "the ledger agrees with Prolific" in out


def test_a_bulk_approval_carried_out_but_answered_500_settles_in_the_same_run(
    study, client_factory, prolific
):
    people = finished(study, client_factory, prolific, (1, 2, 3))
    prolific.fail_next_bulk_approve_after_approving = True
    out, err = run("approve", study.slug)
    assert err == "", err
    assert "3 done, 0 failed" in out and "confirmed on Prolific" in out
    assert sorted(prolific.base_payments) == ["sub1", "sub2", "sub3"]  # each reward once
    assert [r for r in approvals_sent(prolific) if "transition" in r] == []  # none re-sent
    for p in people:
        p.refresh_from_db()
        assert p.base_paid_at is not None and p.payment_error == ""
        assert p.payment_status == "owed"  # the bonus is still to pay
    record = study.approval_records.get()
    assert record.state == "settled" and "HTTP 500" in record.note and "3 APPROVED" in record.note
    assert_ledger_agrees_after_pay(study, prolific, people)


def assert_ledger_agrees_after_pay(study, server, people) -> None:
    out, _ = run("approve", study.slug, "--dry-run")
    assert "would approve" not in out and "0 would be done" in out
    out, _ = run("approve", study.slug)
    assert "0 done, 0 failed" in out
    run("pay", study.slug)
    for p in people:
        p.refresh_from_db()
        assert p.paid and p.payment_status == "paid"
    assert_ledger_agrees(study, server)


def test_a_bulk_approval_answered_500_without_approving_is_approved_one_by_one_once(
    study, client_factory, prolific
):
    people = finished(study, client_factory, prolific, (4, 5))
    prolific.fail_next_bulk_approve = True
    out, err = run("approve", study.slug)
    assert err == "", err
    assert sorted(prolific.base_payments) == ["sub4", "sub5"]
    singles = list(study.approval_records.filter(bulk=False))
    assert len(singles) == 2 and {r.state for r in singles} == {"accepted"}
    assert study.approval_records.get(bulk=True).state == "settled"
    assert_ledger_agrees_after_pay(study, prolific, people)


@pytest.mark.parametrize(
    ("second_approval", "single_reads"), [("ignore", True), ("refuse", True), ("refuse", False)]
)
def test_a_submission_approved_on_prolifics_site_settles_the_ledger(
    study, client_factory, prolific, second_approval, single_reads
):
    """The state issue 43 found: approved on Prolific, while the ledger holds the error of a
    second approval. One run records it, whichever way Prolific answers a second approval, and
    from the study's listing alone when a submission cannot be read on its own."""
    prolific.second_approval = second_approval
    prolific.no_single_reads = not single_reads
    (person, other) = finished(study, client_factory, prolific, (6, 7))
    prolific.answer("POST", "/api/v1/submissions/sub6/transition/", {"action": "APPROVE"})
    Participant.objects.filter(pk=person.pk).update(
        payment_error="HTTP 400: Submission already approved"
    )
    out, err = run("status", study.slug)
    assert "Prolific shows sub6 approved, the ledger does not" in out
    out, err = run("approve", study.slug)
    assert err == "", err
    assert sorted(prolific.base_payments) == ["sub6", "sub7"]
    person.refresh_from_db()
    assert person.base_paid_at is not None and person.payment_error == ""
    assert_ledger_agrees_after_pay(study, prolific, [person, other])


def test_an_already_approved_answer_settles_while_prolifics_status_still_lags(
    study, client_factory, prolific
):
    """Prolific approves in bulk in the background: after a bulk approval answered 500, the
    statuses may still read awaiting review; the single approval's 'already approved' answer is
    Prolific's word, and settles the ledger without paying anyone again."""
    people = finished(study, client_factory, prolific, (15, 16))
    prolific.second_approval = "refuse"
    prolific.fail_next_bulk_approve_after_approving = True
    prolific.lagging = {"sub15", "sub16"}
    out, err = run("approve", study.slug)
    assert err == "", err
    assert "already approved" in out and sorted(prolific.base_payments) == ["sub15", "sub16"]
    prolific.lagging = set()
    assert_ledger_agrees_after_pay(study, prolific, people)


def test_an_accepted_bulk_approval_that_never_happened_is_approved_by_the_next_run(
    study, client_factory, prolific, settings
):
    """Prolific accepts a bulk approval and carries it out in the background; if it never does,
    the ledger's approval is checked against Prolific's status once the settling time passed,
    taken back, and the submission approved again."""
    people = finished(study, client_factory, prolific, (17, 18))
    prolific.drop_next_bulk_approve = True
    settings.PROLIFIC_SETTLE_SECONDS = 3600
    out, err = run("approve", study.slug)
    assert err == "" and "2 done" in out and prolific.base_payments == []
    out, err = run("status", study.slug)
    assert "the ledger records sub17 approved, Prolific shows it AWAITING REVIEW" in out
    out, err = run("approve", study.slug)  # too early to tell: nothing is sent again
    assert "0 done, 0 failed" in out and prolific.base_payments == []
    settings.PROLIFIC_SETTLE_SECONDS = 0
    out, err = run("approve", study.slug)
    assert err == "" and "awaiting review: approved again" in out
    assert sorted(prolific.base_payments) == ["sub17", "sub18"]
    assert_ledger_agrees_after_pay(study, prolific, people)


def test_a_run_killed_during_the_call_is_settled_by_the_next_without_approving_twice(
    study, client_factory, prolific
):
    carried, lost = finished(study, client_factory, prolific, (8, 9))
    # A run recorded its call and was killed: Prolific approved sub8; sub9's call never left.
    ApprovalRecord.objects.create(
        study=study, bulk=True, lines=[[carried.pk, "sub8"], [lost.pk, "sub9"]]
    )
    prolific.answer("POST", "/api/v1/submissions/bulk-approve/", {"submission_ids": ["sub8"]})
    out, _ = run("approve", study.slug, "--dry-run")
    assert "would settle against Prolific's statuses" in out
    assert prolific.requests[-1][1].endswith("bulk-approve/")  # the dry run called nothing
    out, err = run("approve", study.slug)
    assert err == "", err
    assert prolific.base_payments == ["sub8", "sub9"]
    posts = [path for method, path, _ in prolific.requests if method == "POST"]
    assert posts.count("/api/v1/submissions/bulk-approve/") == 2  # the killed one, then sub9's
    bulk = [body for method, path, body in prolific.requests if path.endswith("bulk-approve/")]
    assert bulk[-1] == {"submission_ids": ["sub9"]}
    assert [r.state for r in study.approval_records.all()] == ["settled", "accepted"]
    assert_ledger_agrees_after_pay(study, prolific, [carried, lost])


def test_statuses_that_cannot_be_read_keep_the_record_open_for_the_next_run(
    study, client_factory, prolific
):
    (person,) = finished(study, client_factory, prolific, (10,))
    prolific.fail_next_bulk_approve_after_approving = True
    prolific.fail_submission_reads = True
    out, err = run("approve", study.slug)
    assert "could not read sub10" in err and "1 participant(s) failed" in err
    assert study.approval_records.get().state == "sent"
    person.refresh_from_db()
    assert person.base_paid_at is None
    out, err = run("status", study.slug)
    assert "approval" in out and "run `prolific approve" in out and "could not read Prolific" in err
    prolific.fail_submission_reads = False
    out, err = run("approve", study.slug)
    assert err == "" and "1 done" in out
    assert prolific.base_payments == ["sub10"]
    assert len([p for p in approvals_sent(prolific) if "bulk" in p]) == 1
    assert_ledger_agrees_after_pay(study, prolific, [person])


def test_a_returned_submission_is_an_error_not_an_approval(study, client_factory, prolific):
    (person,) = finished(study, client_factory, prolific, (11,))
    prolific.statuses["sub11"] = "RETURNED"
    out, err = run("approve", study.slug)
    assert "Prolific shows sub11 as RETURNED" in err
    assert prolific.base_payments == []
    person.refresh_from_db()
    assert person.base_paid_at is None and "RETURNED" in person.payment_error


def test_status_lists_each_disagreement(study, client_factory, prolific):
    approved, bonus = finished(study, client_factory, prolific, (12, 13))
    run("approve", study.slug)
    run("pay", study.slug)
    assert_ledger_agrees(study, prolific)
    # Prolific loses an approval, pays a bonus nobody recorded, and a stranger is approved.
    prolific.approved.discard("sub12")
    prolific.bonus_cents["sub13"].append(150)
    prolific.add_submission("sub99", pid(99), STUDY_ID)
    prolific.approved.add("sub99")
    out, err = run("status", study.slug)
    assert (
        f"{approved.public_id}: the ledger records sub12 approved, Prolific shows it AWAITING REVIEW"
        in out
    )
    assert (
        f"{bonus.public_id}: bonuses: the ledger records 2.00 USD paid, Prolific shows 3.50" in out
    )
    assert "submission sub99: Prolific shows it APPROVED" in out
    assert "3 disagreement(s)" in err


def test_a_dropped_person_approved_on_prolific_is_paid_only_the_bonus(study, alice, prolific):
    """A dropped person's share is paid as a bonus because their submission is returned; if
    Prolific approved it anyway (its reward paid), `prolific pay` pays only the bonus, so the
    base is never paid twice."""
    person = arrive_from_prolific(alice, study, prolific, 14)
    from participant_helpers import win_round

    win_round(alice, person)
    person.refresh_from_db()
    mark_dropped(person)
    person.refresh_from_db()
    assert person.bonus_due == Decimal("6.00")  # 5.00 share + 1.00 bonus
    out, err = run("status", study.slug)
    assert "awaits review although this ending (dropped) is not approved" in out
    prolific.answer("POST", "/api/v1/submissions/sub14/transition/", {"action": "APPROVE"})
    out, err = run("pay", study.slug)
    assert err == "", err
    assert prolific.payments == [(pid(14), Decimal("1.00"))]
    person.refresh_from_db()
    assert person.paid and person.base_paid_at is not None
    assert_ledger_agrees(study, prolific)


def test_staff_check_the_ledger_from_the_admin(study, client_factory, prolific, staff):
    from django.urls import reverse

    (person,) = finished(study, client_factory, prolific, (19,))
    prolific.answer("POST", "/api/v1/submissions/sub19/transition/", {"action": "APPROVE"})
    url = reverse("admin:participants_study_changelist")
    form = {"action": "check_ledger", "_selected_action": [study.pk]}
    text = staff.post(url, form, follow=True).content.decode()
    assert f"{person.public_id}: Prolific shows sub19 approved, the ledger does not" in text
    run("approve", study.slug)
    text = staff.post(url, form, follow=True).content.decode()
    assert "the ledger agrees with Prolific (1 submission(s) checked)" in text
