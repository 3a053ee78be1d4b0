"""Paying people through Prolific's API (``manage.py prolific approve|pay SLUG``), against a real
loopback server that speaks the API (tests/fakes/prolific_server.py): finished submissions are
approved in bulk, bonuses and early stops' shares are paid once however often the command runs,
a dry run calls nothing, and each participant's error is shown."""

from __future__ import annotations

from decimal import Decimal

import pytest
from participant_helpers import get_ready, win_round
from prolific_helpers import STUDY_ID, arrive_from_prolific, finish, pid, run

from studyapp.participants.rounds import mark_dropped
from tests.fakes.prolific_server import FakeProlific

pytestmark = pytest.mark.django_db


@pytest.fixture
def prolific(settings):
    with FakeProlific() as server:
        settings.PROLIFIC_API_TOKEN = server.token
        settings.PROLIFIC_API_URL = server.url
        # A pay call left unanswered is settled at once (not after Prolific's minutes).
        settings.PROLIFIC_SETTLE_SECONDS = 0
        yield server


def test_pay_twice_pays_each_bonus_once(study, client_factory, prolific):
    first = finish(client := client_factory(), arrive_from_prolific(client, study, prolific, 1))
    second = finish(client := client_factory(), arrive_from_prolific(client, study, prolific, 2))
    assert first.bonus == second.bonus == Decimal("2.00")

    out, err = run("pay", study.slug)
    assert err == "", err
    assert sorted(prolific.payments) == [(pid(1), Decimal("2.00")), (pid(2), Decimal("2.00"))]
    assert "2 done, 0 failed" in out

    out, err = run("pay", study.slug)
    assert len(prolific.payments) == 2  # nothing paid again
    assert "0 done, 0 failed" in out
    created = [r for r in prolific.requests if r[1].endswith("bonus-payments/")]
    assert len(created) == 1
    for p in (first, second):
        p.refresh_from_db()
        assert p.bonus_paid_at is not None and p.bonus_batch_id
        assert p.base_paid_at is None and not p.paid  # the base is paid by approving


def test_an_interrupted_payment_is_finished_through_the_same_bulk_payment(
    study, client_factory, prolific
):
    person = finish(client := client_factory(), arrive_from_prolific(client, study, prolific, 3))
    prolific.fail_next_pay = True
    out, err = run("pay", study.slug)
    assert "not paid" in err and "1 participant(s) failed" in err
    assert prolific.payments == []
    person.refresh_from_db()
    assert person.bonus_batch_id and person.bonus_paid_at is None and person.payment_error

    out, err = run("pay", study.slug)
    assert err == ""
    assert prolific.payments == [(pid(3), Decimal("2.00"))]
    assert len([r for r in prolific.requests if r[1].endswith("bonus-payments/")]) == 1
    person.refresh_from_db()
    assert person.payment_error == "" and person.bonus_paid_at is not None


def test_approve_then_pay_settles_a_finished_participant(study, alice, prolific):
    person = finish(alice, arrive_from_prolific(alice, study, prolific, 4))
    out, err = run("approve", study.slug)
    assert err == "" and "1 done" in out
    assert prolific.approved == {"sub4"}
    person.refresh_from_db()
    assert person.base_paid_at is not None and not person.paid
    run("pay", study.slug)
    person.refresh_from_db()
    assert person.paid and person.payment_status == "paid"
    out, _ = run("approve", study.slug)
    assert "0 done" in out and len(prolific.approved) == 1


def test_an_early_stop_is_paid_its_share_as_a_bonus_and_never_approved(study, alice, prolific):
    person = arrive_from_prolific(alice, study, prolific, 5)
    win_round(alice, person)
    person.refresh_from_db()
    mark_dropped(person)
    person.refresh_from_db()
    # Half the rounds: half the base pay, plus the bonus of the round won.
    assert person.payment_amount == Decimal("5.00") and person.bonus == Decimal("1.00")
    assert person.bonus_due == Decimal("6.00")
    run("approve", study.slug)
    assert prolific.approved == set()
    run("pay", study.slug)
    assert prolific.payments == [(pid(5), Decimal("6.00"))]
    person.refresh_from_db()
    assert person.paid


def test_a_dry_run_calls_nothing_and_says_what_would_be_paid(study, client_factory, prolific):
    finish(client := client_factory(), arrive_from_prolific(client, study, prolific, 6))
    out, err = run("pay", study.slug, "--dry-run")
    assert "would pay" in out and "2.00" in out and "1 would be done" in out
    out, err = run("approve", study.slug, "--dry-run")
    assert "would approve sub6" in out
    assert prolific.requests == []


def test_pilots_are_never_paid_or_approved(study, client_factory, prolific):
    finish(client := client_factory(), arrive_from_prolific(client, study, prolific, 7, pilot=True))
    run("approve", study.slug)
    run("pay", study.slug)
    assert prolific.requests == []


def test_each_participants_error_is_shown_and_the_others_are_paid(study, client_factory, prolific):
    good = finish(client := client_factory(), arrive_from_prolific(client, study, prolific, 8))
    client = client_factory()
    stranger = finish(
        client,
        get_ready(client, study, f"?PROLIFIC_PID={pid(9)}&STUDY_ID={STUDY_ID}&SESSION_ID=sub9"),
    )
    # The second person's submission is unknown to Prolific: the bulk calls are refused, and
    # the command finds who, so the first is still approved and paid.
    out, err = run("approve", study.slug)
    assert prolific.approved == {"sub8"}
    assert stranger.public_id in err and "Submission not found" in err
    out, err = run("pay", study.slug)
    assert prolific.payments == [(pid(8), Decimal("2.00"))]
    assert stranger.public_id in err and "did not take part" in err
    stranger.refresh_from_db()
    assert "did not take part" in stranger.payment_error and not stranger.bonus_batch_id
    good.refresh_from_db()
    assert good.bonus_paid_at is not None


def test_a_wrong_token_is_an_error_per_participant_and_pays_nothing(
    study, client_factory, prolific, settings
):
    finish(client := client_factory(), arrive_from_prolific(client, study, prolific, 10))
    settings.PROLIFIC_API_TOKEN = "wrong"
    out, err = run("pay", study.slug)
    assert "Invalid token" in err and prolific.payments == []
    settings.PROLIFIC_API_TOKEN = ""
    out, err = run("pay", study.slug)
    assert "PROLIFIC_API_TOKEN is not set" in err


def test_the_bonus_sheet_carries_an_early_stops_share(study, alice, staff, prolific):
    person = arrive_from_prolific(alice, study, prolific, 11)
    win_round(alice, person)
    person.refresh_from_db()
    mark_dropped(person)
    from django.urls import reverse

    response = staff.post(
        reverse("admin:participants_participant_changelist"),
        {"action": "export_bonus_sheet", "_selected_action": [person.pk]},
    )
    assert response.content.decode().strip() == f"{pid(11)},6.00"


def _run_in_thread(results: list, *args: str) -> None:
    from django.db import connection

    try:
        results.append(run(*args))
    finally:
        connection.close()


@pytest.mark.django_db(transaction=True)
def test_two_pay_runs_at_once_make_one_pay_call(study, client_factory, prolific):
    import threading

    people = [
        finish(client := client_factory(), arrive_from_prolific(client, study, prolific, n))
        for n in (21, 22, 23)
    ]
    prolific.delay = 0.4  # a slow Prolific: the two runs overlap for seconds
    results: list[tuple[str, str]] = []
    runs = [
        threading.Thread(target=_run_in_thread, args=(results, "pay", study.slug)) for _ in "ab"
    ]
    for thread in runs:
        thread.start()
    for thread in runs:
        thread.join(timeout=60)
    assert len(results) == 2
    assert len(prolific.pay_calls) == 1
    assert sorted(prolific.payments) == sorted((pid(n), Decimal("2.00")) for n in (21, 22, 23))
    created = [r for r in prolific.requests if r[1].endswith("bonus-payments/")]
    assert len(created) == 1
    outputs = sorted(out for out, _ in results)
    assert "3 done, 0 failed" in outputs[1] or "3 done, 0 failed" in outputs[0]
    assert any("0 done, 0 failed" in out and "waiting for it to finish" in out for out in outputs)
    for person in people:
        person.refresh_from_db()
        assert person.bonus_paid_at is not None
    batches = list(study.bonus_batches.all())
    assert [b.state for b in batches] == ["paid"] and batches[0].prolific_id == prolific.pay_calls[
        0
    ]


@pytest.mark.django_db(transaction=True)
def test_two_approve_runs_at_once_approve_each_submission_once(study, client_factory, prolific):
    import threading

    for n in (24, 25):
        finish(client := client_factory(), arrive_from_prolific(client, study, prolific, n))
    prolific.delay = 0.3
    results: list[tuple[str, str]] = []
    runs = [
        threading.Thread(target=_run_in_thread, args=(results, "approve", study.slug)) for _ in "ab"
    ]
    for thread in runs:
        thread.start()
    for thread in runs:
        thread.join(timeout=60)
    approvals = [r for r in prolific.requests if "approve" in r[1] or "transition" in r[1]]
    assert len(approvals) == 1 and prolific.approved == {"sub24", "sub25"}
    assert all(err == "" for _, err in results), results


def test_a_bonus_batch_created_but_answered_500_is_settled_and_paid_once(
    study, client_factory, prolific
):
    person = finish(client := client_factory(), arrive_from_prolific(client, study, prolific, 26))
    prolific.fail_next_create_after_creating = True
    out, err = run("pay", study.slug)
    assert "did not confirm creating it" in err and "1 participant(s) failed" in err
    assert prolific.pay_calls == [] and len(prolific.batches) == 1  # an orphan on Prolific
    batch = study.bonus_batches.get()
    assert batch.state == "creating" and batch.prolific_id == ""
    assert batch.lines == [[person.pk, pid(26), "2.00"]]  # recorded before it was created

    out, err = run("pay", study.slug)
    assert err == "", err
    assert prolific.payments == [(pid(26), Decimal("2.00"))] and len(prolific.pay_calls) == 1
    assert prolific.pay_calls[0] != next(iter(prolific.batches))  # the orphan stays unpaid
    assert [b.state for b in study.bonus_batches.all()] == ["abandoned", "paid"]
    out, err = run("pay", study.slug)
    assert "0 done, 0 failed" in out and len(prolific.pay_calls) == 1


def test_an_orphan_paid_by_hand_on_prolific_is_recorded_not_paid_again(
    study, client_factory, prolific
):
    person = finish(client := client_factory(), arrive_from_prolific(client, study, prolific, 27))
    prolific.fail_next_create_after_creating = True
    run("pay", study.slug)
    # Someone pays the orphaned bulk payment from Prolific's site.
    orphan = next(iter(prolific.batches))
    prolific.answer("POST", f"/api/v1/bulk-bonus-payments/{orphan}/pay/", {})
    out, err = run("pay", study.slug)
    assert err == "", err
    assert prolific.payments == [(pid(27), Decimal("2.00"))]
    assert len([r for r in prolific.requests if r[1].endswith("bonus-payments/")]) == 1
    person.refresh_from_db()
    assert person.bonus_paid_at is not None
    assert [b.state for b in study.bonus_batches.all()] == ["paid"]


def test_a_pay_call_answered_500_after_paying_is_never_paid_twice(
    study, client_factory, prolific, settings
):
    person = finish(client := client_factory(), arrive_from_prolific(client, study, prolific, 28))
    prolific.fail_next_pay_after_paying = True
    settings.PROLIFIC_SETTLE_SECONDS = 3600
    out, err = run("pay", study.slug)
    assert "not paid as far as we know" in err
    assert [b.state for b in study.bonus_batches.all()] == ["paying"]
    out, err = run("pay", study.slug)  # Prolific shows it paid: recorded, not paid again
    assert err == "", err
    assert len(prolific.pay_calls) == 1 and prolific.payments == [(pid(28), Decimal("2.00"))]
    person.refresh_from_db()
    assert person.bonus_paid_at is not None and person.payment_error == ""


def test_an_unanswered_pay_call_waits_for_prolific_to_settle_before_paying_again(
    study, client_factory, prolific, settings
):
    finish(client := client_factory(), arrive_from_prolific(client, study, prolific, 29))
    prolific.fail_next_pay = True  # 503, nothing paid
    settings.PROLIFIC_SETTLE_SECONDS = 3600
    run("pay", study.slug)
    out, err = run("pay", study.slug)
    assert "not yet seen on Prolific; run again in" in err
    assert prolific.pay_calls == [] and prolific.payments == []
    settings.PROLIFIC_SETTLE_SECONDS = 0
    out, err = run("pay", study.slug)
    assert err == "" and prolific.payments == [(pid(29), Decimal("2.00"))]
    assert len(prolific.pay_calls) == 1


def test_staff_see_the_bonus_batches_and_cannot_edit_them(study, client_factory, prolific, staff):
    from django.urls import reverse

    finish(client := client_factory(), arrive_from_prolific(client, study, prolific, 30))
    run("pay", study.slug)
    batch = study.bonus_batches.get()
    page_ = staff.get(reverse("admin:participants_bonusbatch_changelist"))
    assert page_.status_code == 200 and batch.prolific_id in page_.content.decode()
    change = staff.post(reverse("admin:participants_bonusbatch_change", args=[batch.pk]), {})
    batch.refresh_from_db()
    assert change.status_code == 403 or batch.state == "paid"
    assert staff.get(reverse("admin:participants_bonusbatch_add")).status_code == 403
