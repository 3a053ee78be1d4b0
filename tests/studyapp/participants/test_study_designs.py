"""Studies as designs: tables made from the design, paired words, conditions with balanced
assignment and quotas, comprehension checks, fixed codes, pilot flags and validated models."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse
from django.utils import timezone
from participant_helpers import arrive, consent, page, win_round

from games.cases import case_config
from studyapp.participants import pilots, table_study
from studyapp.participants.models import Condition, Participant, Round, Study
from studyapp.participants.rounds import current_round
from studyapp.participants.steps import study_checks
from studyapp.tables import driver, services
from studyapp.tables.models import Seat, Table

PERSON = {"kind": "person"}
AGENT = {"kind": "agent", "spec": "offline:kb"}
CHECKS = [
    {"question": "How many words differ?", "options": ["None", "One"], "answer": "One"},
    {"question": "May you say your word?", "options": ["Yes", "No"], "answer": "No"},
]


def make_study(slug: str = "uc", **fields) -> Study:
    defaults = {
        "title": f"Study {slug}",
        "game": "undercover",
        "rounds": 2,
        "consent_text": "Recorded for research.",
        "completion_url": "https://app.prolific.com/submissions/complete",
        "code_finished": "UCFIN",
        "code_dropped": "UCDROP",
        "code_failed_checks": "",
        "code_lobby_timeout": "UCWAIT",
        "checks": CHECKS,
        "design": {"seats": [PERSON, PERSON, AGENT, AGENT, AGENT], "wait_seconds": 60},
    }
    return Study.objects.create(slug=slug, **{**defaults, **fields})


def ready(client, study: Study, query: str = "") -> Participant:
    participant = arrive(client, study, query)
    consent(client, participant)
    answers = {f"check_{i}": check["answer"] for i, check in enumerate(study_checks(study))}
    client.post(page(participant, "instructions"), answers)
    participant.refresh_from_db()
    return participant


def play_out(table_id: int) -> None:
    """Play every person seat of an Undercover table until the game ends (agents move by
    themselves): a clue of its own per seat and round, and a vote for the next seat alive."""
    for _ in range(200):
        snap = services.table_state(table_id)
        if snap.is_over:
            return
        humans = [i for i in snap.waiting_for() if snap.seat(i).kind == Seat.Kind.HUMAN]
        if not humans:
            driver.tick(table_id)
            continue
        seat = humans[0]
        shapes = {a["type"]: a for a in snap.engine.legal_actions(snap.state, seat)}
        if "clue" in shapes:
            n = len(snap.events)
            action = {"type": "clue", "text": f"Seat {seat} thinks of thing number {n}."}
        else:
            action = {"type": "vote", "target": shapes["vote"]["targets"][0]}
        services.submit(table_id, seat, action)
    raise AssertionError("the table did not finish")


# --- paired words ----------------------------------------------------------------------------


def test_a_twenty_round_study_plays_case_k_minus_1_in_round_k_without_repeats(alice, tmp_path):
    study = Study.objects.create(
        slug="tq20", title="TQ", rounds=20, seed=11, consent_text="x", code_finished="F"
    )
    participant = ready(alice, study)
    for _ in range(20):
        win_round(alice, participant)
    rounds = list(Round.objects.filter(participant=participant).order_by("number"))
    assert [r.number for r in rounds] == list(range(1, 21))
    for round_ in rounds:
        expected = case_config("twenty-questions", 11, round_.number - 1)
        assert round_.table.config == expected
        assert table_study.of(round_.table).study == "tq20"
        assert table_study.of(round_.table).round == round_.number
    words = [r.table.config["answer"] for r in rounds]
    assert len(set(words)) == 20
    # The model side: a real experiment run with the study's seed meets the same configs.
    out = tmp_path / "experiment.jsonl"
    command = [sys.executable, "-m", "games", "experiment", "--game", "twenty-questions"]
    command += ["--model", "offline:infogain", "--cases", "20", "--samples", "1", "--seed", "11"]
    subprocess.run([*command, "--out", str(out)], check=True, capture_output=True, timeout=300)
    cases = {r["case"]: r["config"] for r in map(json.loads, out.read_text().splitlines())}
    assert [cases[k - 1] for k in range(1, 21)] == [r.table.config for r in rounds]
    participant.refresh_from_db()
    assert participant.status == Participant.Status.FINISHED
    assert participant.completion_code == "F"


def test_a_person_can_be_the_oracle_for_a_model_questioner(alice):
    study = Study.objects.create(
        slug="tq-oracle",
        title="Be the oracle",
        rounds=1,
        consent_text="x",
        design={"person": "oracle"},
    )
    participant = ready(alice, study)
    alice.post(page(participant, "play"))
    round_ = current_round(participant)
    seats = list(round_.table.seats.order_by("index"))
    assert (seats[0].kind, seats[0].agent_spec) == ("agent", "offline:infogain")
    assert seats[1].kind == "human" and seats[1].session_key == alice.session.session_key
    assert round_.seat == 1
    assert "oracle" in study_checks(study)[0]["question"]


# --- Undercover: people matched at one table ------------------------------------------------


def test_two_people_share_one_undercover_table_with_three_agents(alice, bob):
    study = make_study(seed=3, rounds=1)
    first, second = ready(alice, study), ready(bob, study)
    alice.post(page(first, "play"))
    table = current_round(first).table
    assert table.status == Table.Status.LOBBY  # waiting for the second person
    lobby_page = alice.get(reverse("tables:table", args=[table.pk]))
    assert b"Time left to wait" in lobby_page.content and b"Game 1 of 1" in lobby_page.content
    bob.post(page(second, "play"))
    assert current_round(second).table_id == table.pk
    table.refresh_from_db()
    assert table.status == Table.Status.PLAYING
    # The seat order is drawn per table (issue 31): the design's slots 0 and 1 (people) sit at
    # the seats the drawn order gives them, recorded in the table's options.
    slots = table_study.of(table).seat_slots
    assert sorted(slots) == [0, 1, 2, 3, 4] and table_study.of(table).seat_order == "drawn"
    kinds = [seat.kind for seat in table.seats.order_by("index")]
    assert kinds == ["human" if slot < 2 else "agent" for slot in slots]
    assert table.config == case_config("undercover", 3, 0, players=5)
    people = sorted(index for index, slot in enumerate(slots) if slot < 2)
    assert table.options["person_seats"] == people
    seats = {current_round(first).seat, current_round(second).seat}
    assert seats == set(people)
    assert {"turn_deadline_seconds", "dropout"} <= set(table.options)
    assert table_study.of(table).is_study and "study" not in table.options
    play_out(table.pk)
    for client, participant in ((alice, first), (bob, second)):
        client.get(page(participant, "play"))
        participant.refresh_from_db()
        assert participant.status == Participant.Status.FINISHED
        assert participant.rounds_finished == 1
    outcome = services.table_state(table.pk)
    rewards = outcome.engine.outcome(outcome.state)
    first.refresh_from_db(), second.refresh_from_db()
    seat_of = {p.pk: p.round_set.get(number=1).seat for p in (first, second)}
    assert first.total_reward == rewards[seat_of[first.pk]]["reward"]
    assert second.total_reward == rewards[seat_of[second.pk]]["reward"]


def test_an_empty_person_seat_goes_to_the_replacement_agent_at_the_wait_limit(alice):
    study = make_study(
        design={
            "seats": [PERSON, PERSON, AGENT, AGENT],
            "wait_seconds": 5,
            "replacement_spec": "offline:descriptor",
            "seat_order": "fixed",  # design slot k at seat k
        }
    )
    participant = ready(alice, study)
    alice.post(page(participant, "play"))
    table = current_round(participant).table
    Table.objects.filter(pk=table.pk).update(created_at=timezone.now() - timedelta(seconds=10))
    assert driver.check_lobby(table.pk) == "filled"
    seats = list(table.seats.order_by("index"))
    assert seats[1].kind == "agent" and seats[1].agent_spec == "offline:descriptor"
    table.refresh_from_db()
    assert table.options["person_seats"] == [0, 1]  # seat 1 was meant for a person
    assert table_study.of(table).seat_order == "fixed" and table_study.of(table).seat_slots == [
        0,
        1,
        2,
        3,
    ]


def test_a_person_left_alone_with_agents_by_the_lobby_has_no_turn_deadline(alice, bob):
    """The study's deadline protects people from waiting on each other: a person whose other
    places the lobby filled with agents takes the time they need, as alone with agents from the
    start; two people at one table keep it."""
    design = {"seats": [PERSON, PERSON, AGENT, AGENT], "wait_seconds": 5, "seat_order": "fixed"}
    study = make_study(turn_deadline_seconds=30, design=design)
    participant = ready(alice, study)
    alice.post(page(participant, "play"))
    table = current_round(participant).table
    Table.objects.filter(pk=table.pk).update(created_at=timezone.now() - timedelta(seconds=10))
    assert driver.check_lobby(table.pk) == "filled"
    snap = services.table_state(table.pk)
    assert snap.table.turn_deadline() == 30 and snap.turn_deadline() is None
    for _ in range(20):  # to the person's turn (the agents move by themselves)
        if 0 in snap.waiting_for():
            break
        driver.tick(table.pk)
        snap = services.table_state(table.pk)
    assert 0 in snap.waiting_for()
    board = alice.get(reverse("tables:table", args=[table.pk])).content.decode()
    assert 'id="turn-deadline"' not in board
    assert driver.check_deadline(table.pk, snap.next_seq) == "no deadline"

    shared = make_study(slug="shared", turn_deadline_seconds=30, design=design)
    first, second = ready(alice, shared), ready(bob, shared)
    alice.post(page(first, "play")), bob.post(page(second, "play"))
    assert services.table_state(current_round(first).table_id).turn_deadline() == 30


def wait_out_the_lobby(client) -> Participant:
    """One person of two arrives at a study lobby that lets people go at its wait limit, and the
    limit passes. Returns the participant."""
    study = make_study(design={"seats": [PERSON, PERSON, AGENT, AGENT], "lobby_timeout": "exit"})
    participant = ready(client, study)
    client.post(page(participant, "play"))
    table = current_round(participant).table
    Table.objects.filter(pk=table.pk).update(created_at=timezone.now() - timedelta(seconds=120))
    assert driver.check_lobby(table.pk) == "released"
    return participant


def test_a_lobby_that_times_out_sends_the_studys_lobby_timeout_code(alice):
    participant = wait_out_the_lobby(alice)
    response = alice.get(page(participant, "play"), follow=True)
    participant.refresh_from_db()
    assert participant.status == Participant.Status.LOBBY_TIMEOUT
    assert b"UCWAIT" in response.content
    assert participant.payment_status == "owed"


def test_a_released_lobby_settles_its_people_at_once(alice):
    """The participant is given the lobby-timeout code and owed for their time when the lobby
    releases them, not when their page next loads (a person who closed the tab is settled too)."""
    participant = wait_out_the_lobby(alice)
    participant.refresh_from_db()
    assert participant.status == Participant.Status.LOBBY_TIMEOUT
    assert participant.payment_status == "owed"


# --- conditions --------------------------------------------------------------------------------


def solo_arms(study: Study, quota: int) -> None:
    """Two arms of one person each (so each person is randomised on arrival): four offline
    agents of two kinds."""
    Condition.objects.create(
        study=study, name="two", quota=quota, position=0,
        overrides={"design": {"seats": [PERSON, AGENT, AGENT, AGENT, AGENT]}},
    )  # fmt: skip
    other = {"kind": "agent", "spec": "offline:descriptor"}
    Condition.objects.create(
        study=study, name="one", quota=quota, position=1,
        overrides={"design": {"seats": [PERSON, other, other, other, other]}},
    )  # fmt: skip


def test_arrivals_are_assigned_in_balanced_blocks_up_to_the_quota(client_factory):
    study = make_study(assignment_seed=5, design={"seats": [PERSON, AGENT, AGENT, AGENT]})
    solo_arms(study, quota=3)
    people = [ready(client_factory(), study) for _ in range(6)]
    names = [p.condition for p in people]
    assert sorted(names) == ["one"] * 3 + ["two"] * 3
    for block in range(3):
        assert sorted(names[2 * block : 2 * block + 2]) == ["one", "two"]
    assert [p.assignment["arrival"] for p in people] == list(range(6))
    assert all(p.assignment["seed"] == 5 for p in people)
    assert {p.assignment["unit"] for p in people} == {"person"} and not any(p.group for p in people)
    late = client_factory()
    response = late.get(reverse("participants:study_link", args=[study.slug]))
    assert b"This study is full" in response.content
    assert b"Please return the study on Prolific" in response.content


def test_pilots_are_assigned_apart_from_people_and_only_with_a_staff_token(client_factory):
    study = make_study(design={"seats": [PERSON, AGENT, AGENT, AGENT]})
    solo_arms(study, quota=1)
    real = [ready(client_factory(), study) for _ in range(2)]
    assert {p.condition for p in real} == {"one", "two"} and not any(p.is_pilot for p in real)
    forged = client_factory().get(
        reverse("participants:study_link", args=[study.slug]) + "?pilot=made-up"
    )
    assert b"This study is full" in forged.content  # a forged token is an ordinary visit
    token = pilots.pilot_token(study.slug)
    pilot = ready(client_factory(), study, f"?pilot={token}")
    assert pilot.is_pilot and pilot.condition in ("one", "two")
    assert pilot.payment_status == "pilot"
    other = pilots.pilot_token("another-study")
    assert not pilots.is_pilot_token(study.slug, other)


def test_the_condition_changes_the_table(client_factory):
    study = make_study(rounds=1, design={"seats": [PERSON, AGENT, AGENT, AGENT]})
    solo_arms(study, quota=0)
    clients = [client_factory() for _ in range(2)]
    people = [ready(client, study) for client in clients]
    client, solo = next(
        (c, p) for c, p in zip(clients, people, strict=True) if p.condition == "one"
    )
    client.post(page(solo, "play"))
    table = current_round(solo).table
    assert table.status == Table.Status.PLAYING  # one person and four agents: no wait
    seats = list(table.seats.order_by("index"))  # in the order drawn for this table
    assert sorted(s.kind for s in seats) == ["agent"] * 4 + ["human"]
    assert {s.agent_spec for s in seats if s.kind == "agent"} == {"offline:descriptor"}
    assert table_study.of(table).condition == "one"


# --- checks and codes ------------------------------------------------------------------------


def test_failing_the_checks_asks_to_return_the_study_without_a_code(alice):
    study = make_study(check_attempts=2)
    participant = arrive(alice, study)
    consent(alice, participant)
    wrong = {"check_0": "None", "check_1": "No"}
    response = alice.post(page(participant, "instructions"), wrong)
    assert b"1 attempt left" in response.content
    response = alice.post(page(participant, "instructions"), wrong, follow=True)
    participant.refresh_from_db()
    assert participant.status == Participant.Status.FAILED_CHECKS
    assert participant.condition == "" and participant.rounds_finished == 0
    assert b"Please return the study on Prolific" in response.content
    assert b"completion-code" not in response.content
    assert alice.post(page(participant, "play")).status_code == 403


def test_round_pages_show_the_round_the_total_a_way_out_and_the_study_name(alice):
    study = make_study(rounds=2, design={"seats": [PERSON, AGENT, AGENT, AGENT]})
    participant = ready(alice, study)
    play = alice.get(page(participant, "play")).content.decode()
    assert "Game 1 of 2" in play and 'id="withdraw"' in play
    assert 'id="study-name">Study uc<' in play and 'href="/" class="home"' not in play
    alice.post(page(participant, "play"))
    table = alice.get(reverse("tables:table", args=[current_round(participant).table_id]))
    text = table.content.decode()
    assert "Game 1 of 2" in text and "Total so far" in text
    assert 'id="withdraw"' in text and 'href="/" class="home"' not in text


# --- models are validated --------------------------------------------------------------------


def test_a_mistyped_spec_is_refused_with_the_reason(db):
    study = make_study(design={"seats": [PERSON, {"kind": "agent", "spec": "gpt4o"}] + [AGENT] * 2})
    with pytest.raises(ValidationError, match="provider:model"):
        study.full_clean()
    study.design = {"seats": [PERSON, {"kind": "agent", "spec": "offline:nosuch"}, AGENT, AGENT]}
    with pytest.raises(ValidationError, match="no offline undercover agent"):
        study.full_clean()


def test_an_unconfigured_provider_cannot_be_in_an_active_study(db, settings):
    settings.OPENAI_API_KEY = ""
    study = make_study(design={"seats": [PERSON, {"kind": "agent", "spec": "openai:gpt-4o"}, AGENT, AGENT]})  # fmt: skip
    with pytest.raises(ValidationError, match="OPENAI_API_KEY is not set"):
        study.full_clean()
    study.active = False
    study.full_clean()  # an inactive draft may name it


def test_a_condition_cannot_override_with_a_broken_design(db):
    study = make_study()
    bad = Condition(study=study, name="x", overrides={"design": {"seats": [PERSON, AGENT]}})
    with pytest.raises(ValidationError, match="4 to 8 seats"):
        bad.full_clean()
    unknown = Condition(study=study, name="y", overrides={"colour": "red"})
    with pytest.raises(ValidationError, match="Unknown keys colour"):
        unknown.full_clean()


def test_check_models_calls_each_spec_once_and_shows_latency_or_the_error(
    db, settings, staff, llm_server
):
    settings.OPENAI_BASE_URL = llm_server.openai_base_url
    settings.OPENAI_API_KEY = "test"
    spec = {"kind": "agent", "spec": "openai-compatible:tiny"}
    study = make_study(design={"seats": [PERSON, spec, AGENT, AGENT]})
    url = reverse("admin:participants_study_changelist")
    data = {"action": "check_models", "_selected_action": [study.pk]}
    response = staff.post(url, data, follow=True)
    text = response.content.decode()
    assert "openai-compatible:tiny: answered in" in text
    assert "offline:kb: answered in 0.0 ms" in text
    assert len(llm_server.requests) == 1
    llm_server.script = ["500"] * 10
    llm_server.retry_after = 0
    text = staff.post(url, data, follow=True).content.decode()
    assert "openai-compatible:tiny: " in text and "answered in" not in text.split("tiny")[1][:40]


def admin_post(study: Study, **changes) -> dict:
    """The study's admin change form as a browser would post it, with ``changes``."""
    import json as _json

    fields = [
        "title", "slug", "game", "rounds", "oracle_spec", "seed", "shown_policy",
        "turn_deadline_seconds", "dropout", "idle_limit_seconds", "assignment_seed", "version",
        "check_attempts", "consent_version", "consent_text", "instructions", "policy_question",
        "attention_failure", "screened_pay", "debrief_text", "completion_url", "language", "code_finished", "code_dropped", "code_screened", "code_failed_checks",
        "code_lobby_timeout", "payment_amount", "currency", "bonus_per_reward",
    ]  # fmt: skip
    data = {name: getattr(study, name) for name in fields}
    data["design"] = _json.dumps(study.design)
    data["checks"] = _json.dumps(study.checks)
    data["questionnaire"] = _json.dumps(study.questionnaire)
    data["active"] = "on" if study.active else ""
    data.update(
        {
            "conditions-TOTAL_FORMS": "0",
            "conditions-INITIAL_FORMS": "0",
            "conditions-MIN_NUM_FORMS": "0",
            "conditions-MAX_NUM_FORMS": "1000",
        }
    )
    data.update(changes)
    return {k: ("" if v is None else v) for k, v in data.items()}


def test_the_admin_refuses_a_mistyped_spec_and_an_unconfigured_provider(staff, settings):
    settings.OPENAI_API_KEY = ""
    study = make_study()
    url = reverse("admin:participants_study_change", args=[study.pk])
    seats = [PERSON, {"kind": "agent", "spec": "gpt4o"}, AGENT, AGENT]
    response = staff.post(url, admin_post(study, design=json.dumps({"seats": seats})))
    assert response.status_code == 200 and "must look like" in response.content.decode()
    seats[1]["spec"] = "openai:gpt-4o"
    response = staff.post(url, admin_post(study, design=json.dumps({"seats": seats})))
    assert "cannot be active while a model spec fails" in response.content.decode()
    response = staff.post(url, admin_post(study, design=json.dumps({"seats": seats}), active=""))
    assert response.status_code == 302  # an inactive draft may name it
    study.refresh_from_db()
    assert not study.active and study.design["seats"][1]["spec"] == "openai:gpt-4o"


def test_seed_demo_creates_the_mixed_undercover_study_once(db):
    from django.core.management import call_command

    from studyapp.participants import design

    call_command("seed_demo", stdout=io.StringIO())
    call_command("seed_demo", stdout=io.StringIO())
    study = Study.objects.get(slug="demo-undercover")
    study.full_clean()
    assert study.game == "undercover" and study.active
    arms = {c.name: c for c in study.conditions.all()}
    assert {name: c.quota for name, c in arms.items()} == {"two-people": 6, "one-person": 6}
    people = {name: design.person_seats(design.effective(study, name)["design"]) for name in arms}
    assert people == {"two-people": [0, 1], "one-person": [0]}
    assert design.study_problems(study) == []
    assert all(spec.startswith("offline:") for _, spec, _ in design.model_specs(study))


def test_staff_find_a_pilot_link_on_the_study_page_that_flags_its_visits(staff, alice):
    import html as _html
    import re as _re

    study = make_study()
    page_html = staff.get(reverse("admin:participants_study_change", args=[study.pk]))
    link = _html.unescape(
        _re.search(r'href="([^"]+)" id="pilot-link"', page_html.content.decode())[1]
    )
    alice.post(link)
    participant = Participant.objects.get(study=study)
    assert participant.is_pilot
