"""A person's round is theirs: no deadline when nobody waits on them, a visible countdown when one
applies, and a seat an agent took over never books the agent's reward to the person nor counts as
their game in the analysis. Closing a study refuses newcomers only."""

from __future__ import annotations

import html

import pytest
from django.template.loader import render_to_string
from django.test import Client

from analysis import frames, metrics
from analysis.summary import summarize
from studyapp.dashboard.analysis_job import page_payload
from studyapp.dashboard.records import table_records
from studyapp.participants.models import Participant, Study
from studyapp.participants.rounds import current_round
from studyapp.tables import agent_turns, driver, services
from studyapp.tables.models import Table
from studyapp.tables.rendering import render_board
from tests.studyapp.participants.participant_helpers import arrive, get_ready, page

pytestmark = pytest.mark.django_db(transaction=True)


def start_round(client: Client, participant: Participant):
    client.post(page(participant, "play"))
    return current_round(participant)


def test_a_person_alone_with_agents_has_no_turn_deadline(alice: Client, study: Study) -> None:
    study.turn_deadline_seconds = 5
    study.save()
    round_ = start_round(alice, get_ready(alice, study))
    table = Table.objects.get(pk=round_.table_id)
    assert table.turn_deadline() is None
    # Even a deadline check that finds the table waiting on the person takes nothing.
    snap = services.table_state(table.pk)
    assert driver.check_deadline(table.pk, snap.next_seq) != "replaced"
    assert not any(e["type"] == "takeover" for e in services.table_state(table.pk).events)
    assert 'id="turn-deadline"' not in render_board(snap, 0)


def test_a_deadline_that_applies_is_shown_with_what_happens_after_it(
    alice: Client, study: Study
) -> None:
    round_ = start_round(alice, get_ready(alice, study))
    table = Table.objects.get(pk=round_.table_id)
    table.options = {**table.options, "turn_deadline_seconds": 90, "dropout": "replace"}
    table.save(update_fields=["options"])
    board = render_board(services.table_state(table.pk), 0)
    assert 'id="turn-deadline"' in board
    assert "an agent takes over your seat" in board
    assert 'data-seconds-left="' in board


def test_a_round_an_agent_took_over_is_not_the_persons(alice: Client, study: Study) -> None:
    participant = get_ready(alice, study)
    round_ = start_round(alice, participant)
    table = Table.objects.get(pk=round_.table_id)
    table.options = {**table.options, "turn_deadline_seconds": 1, "dropout": "replace"}
    table.save(update_fields=["options"])
    snap = services.table_state(table.pk)
    assert driver.apply_dropout(snap, 0) == "replaced"
    # No server runs here: the replacement agent plays the round out inline; make sure it ended.
    for _ in range(60):
        if services.table_state(table.pk).is_over:
            break
        agent_turns.take_agent_turn(table.pk, services.table_state(table.pk).next_seq)
    snap = services.table_state(table.pk)
    assert snap.is_over
    assert snap.engine.outcome(snap.state)[0]["reward"] > 0  # the agent found the word
    alice.get(page(participant, "play"))
    participant.refresh_from_db()
    round_.refresh_from_db()
    assert round_.finished_at is not None and round_.reward == 0.0
    assert participant.total_reward == 0.0
    # The person missed their deadline: they dropped out, with the code and pay for that.
    assert participant.status == Participant.Status.DROPPED
    assert participant.rounds_finished == 0 and participant.payment_amount == 0
    assert participant.completion_code == study.code_dropped != study.code_finished

    records = table_records(Table.objects.filter(pk=table.pk))
    assert [(r["player"], r["taken_over"]) for r in records] == [(participant.public_id, True)]
    games = frames.games_frame(records)
    assert bool(games["taken_over"].iloc[0]) and games["player_kind"].iloc[0] == "human"
    assert metrics.scored(games).empty
    # The study page says why the game is left out of the scores.
    payload = page_payload(summarize(games), games, "study", [])
    assert (payload["left_out"], payload["left_out_taken_over"], payload["left_out_failed"]) == (
        1,
        1,
        0,
    )
    body = render_to_string(
        "dashboard/_analysis_body.html", {"payload": payload, "ready": True, "fresh": True}
    )
    assert "1 because an agent took over a person's seat" in html.unescape(body)
    assert "answering seat failed" not in body


def test_a_closed_study_refuses_newcomers_but_lets_its_people_go_on(
    alice: Client, bob: Client, study: Study
) -> None:
    participant = arrive(alice, study)
    study.active = False
    study.save()
    link = f"/s/{study.slug}/"
    assert alice.get(link).status_code == 302  # back to their own next step
    assert alice.get(page(participant, "consent")).status_code == 200
    assert bob.get(link).status_code == 404
    assert Participant.objects.filter(study=study).count() == 1


def test_pilot_bots_and_people_never_share_a_lobby(study: Study) -> None:
    from studyapp.participants.study_tables import table_options

    study.game = "undercover"
    study.save()
    person = Participant.objects.create(study=study, condition="a")
    pilot = Participant.objects.create(study=study, condition="a", is_pilot=True)
    design = {"players": 5, "wait_seconds": 60, "lobby_timeout": "fill"}
    design |= {"replacement_spec": "offline:kb", "seats": [{"kind": "person"}] * 2}
    design["seats"] = design["seats"] + [{"kind": "agent", "spec": "offline:kb"}] * 3
    assert (
        table_options(person, 1, design)["lobby_kind"]
        != table_options(pilot, 1, design)["lobby_kind"]
    )


@pytest.mark.parametrize("url", ["/p/%00/", "/i/%00/", "/s/demo/?resume=a%00.b"])
def test_a_nul_byte_in_the_address_is_refused_at_the_door(client: Client, url: str) -> None:
    response = client.get(url)
    assert response.status_code == 400
    assert b"character" in response.content
