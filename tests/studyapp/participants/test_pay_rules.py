"""Pay by the study's declared rule for each way of ending (studyapp/participants/payrules.py):
the amount owed, the sentence on every page that says it, the admin and the export agree; each
ending's code names the Prolific action it needs and contradictions are refused; amounts are
finite, plain and at the currency's precision, refused with the reason (no traceback) in
``study apply`` and the admin."""

from __future__ import annotations

import html
import io
import re
from datetime import timedelta
from decimal import Decimal

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse
from participant_helpers import get_ready, page, win_round
from prolific_helpers import arrive_from_prolific, finish, pid, run
from test_study_designs import admin_post
from test_study_files import FULL, apply_text, without

from studyapp.participants.models import Participant, Study
from studyapp.participants.rounds import mark_dropped
from tests.fakes.prolific_server import FakeProlific

pytestmark = pytest.mark.django_db

PROLIFIC = "?PROLIFIC_PID={}&STUDY_ID=st42&SESSION_ID=se{}"


def text_of(response) -> str:
    return html.unescape(response.content.decode())


# --- amounts -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "refusal"),
    [
        ('payment_amount = "Infinity"', "payment_amount must be a finite amount"),
        ('payment_amount = "1e400"', "is in exponent notation, which is refused"),
        ('payment_amount = "1e3"', "is in exponent notation, which is refused"),
        ('bonus_per_reward = "0.001"', "is finer than USD can be paid"),
        ("payment_amount = 1e3", "write amounts as strings"),
        ('payment_amount = "0.00"', "pays a reward above zero"),
    ],
)
def test_amounts_that_are_not_plain_payable_sums_are_refused_with_the_reason(db, line, refusal):
    key = line.split(" =")[0]
    with pytest.raises(CommandError, match=re.escape(refusal)):
        apply_text(line + "\n" + without(FULL, key))
    assert not Study.objects.filter(slug="decl").exists()


def test_an_amount_follows_its_currencys_precision(db):
    with pytest.raises(CommandError, match="finer than JPY can be paid"):
        apply_text(
            'currency = "JPY"\npayment_amount = "1200.50"\n'
            + without(FULL, "payment_amount", "currency")
        )
    apply_text(
        'currency = "JPY"\npayment_amount = "1200"\n' + without(FULL, "payment_amount", "currency")
    )
    assert Study.objects.get(slug="decl").payment_amount == Decimal("1200.00")


@pytest.mark.parametrize(
    ("value", "said"),
    [("Infinity", "finite amount"), ("1e3", "exponent notation"), ("0.001", "finer than")],
)
def test_the_admin_refuses_the_same_amounts_with_the_reason(study, staff, value, said):
    url = reverse("admin:participants_study_change", args=[study.pk])
    response = staff.post(url, admin_post(study, payment_amount=value))
    assert response.status_code == 200  # the form again, with the reason: no 500
    assert said in text_of(response)
    study.refresh_from_db()
    assert study.payment_amount == Decimal("10.00")


# --- rules and code actions --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("head", "actions", "refusal"),
    [
        ("", 'dropped = "approve"', "dropped = approve pays Prolific's whole reward"),
        ('screened_pay = "played"\n', 'screened = "reject"', "screened = reject pays nothing"),
        ("", 'finished = "return"', "finished must be approve"),
        ("", 'late = "return"', "'late' is not an ending"),
        ("", 'dropped = "refund"', "is not one of approve, return, reject"),
    ],
)
def test_code_actions_that_contradict_the_pay_are_refused(db, head, actions, refusal):
    with pytest.raises(CommandError, match=re.escape(refusal)):
        apply_text(head + FULL + "\n[code_actions]\n" + actions + "\n")
    assert not Study.objects.filter(slug="decl").exists()


def test_a_dropped_code_may_be_approved_when_dropouts_are_paid_in_full(db):
    out = apply_text('dropped_pay = "full"\n' + FULL + '\n[code_actions]\ndropped = "approve"\n')
    assert "decl: created" in out
    assert (
        "  dropped: DRP1, approve the submission (Prolific pays the reward); paid the full" in out
    )
    study = Study.objects.get(slug="decl")
    assert study.code_actions["dropped"] == "approve" and study.dropped_pay == "full"
    exported = io.StringIO()
    call_command("study", "export", "decl", stdout=exported)
    assert 'dropped = "approve"' in exported.getvalue()
    assert "nothing changed" in apply_text(exported.getvalue())


@pytest.mark.parametrize(
    ("rule", "amount", "said"),
    [
        ("played", "5.00", "for the games they played"),
        ("full", "10.00", "in full"),
        ("none", "0.00", "does not pay people in this case"),
    ],
)
def test_a_dropout_is_paid_by_the_studys_rule_and_every_page_says_the_same(
    study, alice, bob, staff, rule, amount, said
):
    study.dropped_pay = rule
    study.save()
    welcome = text_of(alice.get(f"/s/{study.slug}/"))
    person = get_ready(alice, study, PROLIFIC.format(pid(1), 1))
    withdraw = text_of(alice.get(page(person, "withdraw")))
    win_round(alice, person)
    stopped_page = text_of(alice.post(page(person, "withdraw"), {}))
    assert said in stopped_page
    person.refresh_from_db()
    assert person.status == "dropped" and str(person.payment_amount) == amount
    assert person.pay_rule == rule and person.code_action == "return"
    done = text_of(alice.get(page(person, "done")))
    assert said in done and 'id="completion-code">DROP456<' in done
    # The dropped code's action is return: the page asks to return the study on Prolific, so
    # the base is not paid by an approval on top of what is paid here.
    assert "please return this study rather than submit it" in done
    # A second browser with the same Prolific ID: the page for someone who stopped earlier.
    again = text_of(bob.post(f"/s/{study.slug}/" + PROLIFIC.format(pid(1), 1)))
    assert "already stopped taking part" in again and said in again
    assert "you will be paid for it" not in done + again
    if rule == "none":
        assert person.payment_status == "not due" and person.bonus_due == 0
        assert "nothing is paid" in welcome and "does not pay people who stop" in withdraw
        assert "You are paid" not in done
    else:
        assert person.payment_status == "owed"
        assert (
            f'id="payment-amount">{amount} USD<' in done
            and f'id="payment-amount">{amount} USD<' in again
        )
        assert 'id="bonus">1.00 USD<' in done  # the game won
    if rule == "full":
        assert "still paid in full" in welcome and "still be paid in full" in withdraw
    if rule == "played":
        assert "paid for the games you have played" in welcome
    record = text_of(staff.get(reverse("admin:participants_participant_change", args=[person.pk])))
    assert f"{rule} · return" in record


def test_a_dropout_who_finished_no_game_is_not_owed_and_not_listed_as_owed(study, alice, staff):
    person = get_ready(alice, study)
    alice.post(page(person, "withdraw"), {})
    person.refresh_from_db()
    assert person.amount_owed == 0 and person.payment_status == "not due"
    response = staff.post(
        reverse("admin:participants_participant_changelist"),
        {"action": "export_payment_sheet", "_selected_action": [person.pk]},
    )
    row = response.content.decode().strip().splitlines()[-1]
    assert "not due" in row and ",owed," not in row


def test_a_lobby_timeout_is_paid_for_the_minutes_given(study, alice):
    from studyapp.participants import rounds

    person = get_ready(alice, study)
    Participant.objects.filter(pk=person.pk).update(
        started_at=person.started_at - timedelta(minutes=3, seconds=10)
    )
    person.refresh_from_db()
    rounds.lobby_timed_out(person)
    person.refresh_from_db()
    # 4 started minutes of an 11-minute study (5 + 3 a game, 2 games) paying 10.00.
    assert person.pay_rule == "time" and person.payment_amount == Decimal("3.64")
    done = text_of(alice.get(page(person, "done")))
    assert "for the time they" in done and 'id="payment-amount">3.64 USD<' in done
    assert "You will be paid for your time" not in done


def test_the_staff_action_that_drops_people_says_what_each_is_owed(study, alice, staff):
    study.dropped_pay = "none"
    study.save()
    person = get_ready(alice, study)
    response = staff.post(
        reverse("admin:participants_participant_changelist"),
        {"action": "mark_dropped", "_selected_action": [person.pk]},
        follow=True,
    )
    text = text_of(response)
    assert "paid for their time" not in text
    assert f"{person.public_id}: 0.00 USD (nothing)" in text


def test_bonus_due_is_cleared_once_the_bonus_is_paid(study, alice):
    person = finish(alice, get_ready(alice, study))
    done = text_of(alice.get(page(person, "done")))
    assert 'id="completion-code">FIN123<' in done and "rather than submit it" not in done
    assert person.bonus_due == Decimal("2.00") and person.payment_status == "owed"
    person.record_payment(bonus=True)
    assert person.bonus_due == 0 and person.bonus_total == Decimal("2.00")
    assert person.payment_status == "owed"  # the base is still to be approved
    person.record_payment(base=True)
    assert person.payment_status == "paid"


def test_a_screened_person_reads_the_studys_debrief_on_their_last_page(study, alice):
    study.questionnaire = [
        {"id": "attention", "question": "Choose Blue.", "kind": "choice",
         "options": ["Red", "Blue"], "expected": "Blue"},
    ]  # fmt: skip
    study.attention_failure = "screen"
    study.debrief_text = "This study compared how people and programs ask questions."
    study.save()
    person = finish_rounds(alice, study)
    response = alice.post(page(person, "questionnaire"), {"q_attention": ["Red"]}, follow=True)
    text = text_of(response)
    person.refresh_from_db()
    assert person.status == "screened"
    assert "compared how people and programs ask questions" in text and "SCR789" in text


def finish_rounds(client, study) -> Participant:
    person = get_ready(client, study)
    win_round(client, person)
    win_round(client, person)
    client.post(page(person, "policy"), {"policy": "Halve the candidates."})
    person.refresh_from_db()
    return person


def test_a_bad_admin_filter_shows_staff_the_admins_own_answer(study, staff):
    url = reverse("admin:participants_participant_changelist")
    response = staff.get(url + "?study__slug__contains=x", follow=True)
    text = text_of(response)
    assert response.status_code == 200 and response.redirect_chain[-1][0] == url
    assert "That filter cannot be used on this list" in text
    assert "open the link exactly as you received it" not in text


# --- Prolific: the code's action decides how the base is paid ------------------------------------


@pytest.fixture
def prolific(settings):
    with FakeProlific() as server:
        settings.PROLIFIC_API_TOKEN = server.token
        settings.PROLIFIC_API_URL = server.url
        settings.PROLIFIC_SETTLE_SECONDS = 0
        yield server


def test_a_dropout_whose_code_is_approved_is_never_paid_the_base_as_a_bonus(
    study, alice, bob, prolific
):
    study.dropped_pay = "full"
    study.code_actions = {**study.code_actions, "dropped": "approve"}
    study.full_clean()
    study.save()
    dropped = arrive_from_prolific(alice, study, prolific, 40)
    win_round(alice, dropped)
    dropped.refresh_from_db()
    mark_dropped(dropped)
    finisher = finish(bob, arrive_from_prolific(bob, study, prolific, 41))
    dropped.refresh_from_db()
    assert dropped.base_by_approval and dropped.bonus_due == Decimal("1.00")
    out, err = run("approve", study.slug)
    assert err == "" and sorted(prolific.base_payments) == ["sub40", "sub41"]
    out, err = run("pay", study.slug)
    assert err == ""
    assert sorted(prolific.payments) == [(pid(40), Decimal("1.00")), (pid(41), Decimal("2.00"))]
    for p in (dropped, finisher):
        p.refresh_from_db()
        assert p.paid
    out, err = run("status", study.slug)
    assert "the ledger agrees with Prolific" in out, err


def test_the_export_carries_each_persons_rule_action_and_what_is_still_owed(
    study, alice, bob, tmp_path
):
    import pandas as pd

    from tests.exports import export_checked

    study.dropped_pay = "none"
    study.save()
    stopper = get_ready(alice, study)
    win_round(alice, stopper)
    alice.post(page(stopper, "withdraw"), {})
    finisher = finish(bob, get_ready(bob, study))
    finisher.record_payment(bonus=True)  # the bonus paid, the base not yet approved
    printed = export_checked(study.slug, str(tmp_path), "--format", "csv")
    assert "check: the files agree" in printed
    people = pd.read_csv(tmp_path / "participants.csv", keep_default_na=False).set_index("player")
    dropped = people.loc[stopper.public_id]
    assert (dropped["pay_rule"], dropped["code_action"]) == ("none", "return")
    assert dropped["payment_status"] == "not due" and float(dropped["bonus_due"]) == 0
    assert dropped["reason"].endswith("paid under dropped_pay = none")
    done = people.loc[finisher.public_id]
    assert (done["pay_rule"], done["code_action"]) == ("full", "approve")
    assert done["payment_status"] == "owed" and float(done["bonus_due"]) == 0
