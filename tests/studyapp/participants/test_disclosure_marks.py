"""Disclosed means disclosed (issue 31): at a study table with ``agents_disclosed`` on, every
board a person gets marks the agents' seats during play, a takeover and a lobby place given to an
agent are announced on the board, and the last page's "About the other players" block appears
once, says what the agents were, and can be replaced by the study's own text."""

from __future__ import annotations

from datetime import timedelta

from django.test import Client
from django.urls import reverse
from django.utils import timezone
from participant_helpers import page
from test_study_designs import AGENT, PERSON, make_study, play_out, ready

from studyapp.participants.rounds import current_round
from studyapp.tables import driver, services
from studyapp.tables.models import Table
from studyapp.tables.rendering import render_board


def two_people(client_factory, **fields):
    design = {"seats": [PERSON, PERSON, AGENT, AGENT, AGENT], "seat_order": "fixed"}
    study = make_study(rounds=1, design=design, agent_think_seconds=[0, 0], **fields)
    clients = [client_factory(), client_factory()]
    people = [ready(client, study) for client in clients]
    for client, person in zip(clients, people, strict=True):
        client.post(page(person, "play"))
    table = current_round(people[0]).table
    if table.options.get("start_after_seconds"):  # a blinded lobby holds a while when full
        held = timezone.now() - timedelta(seconds=table.options["start_after_seconds"] + 1)
        Table.objects.filter(pk=table.pk).update(created_at=held)
        assert driver.check_lobby(table.pk) == "started"
        table.refresh_from_db()
    return study, clients, people, table


def test_a_disclosed_board_marks_every_other_seat_and_announces_a_takeover(client_factory):
    study, clients, people, table = two_people(client_factory, dropout="replace")
    assert table.status == Table.Status.PLAYING
    board = render_board(services.table_state(table.pk), 0)
    assert board.count('data-kind="agent"') == 3 and board.count('data-kind="person"') == 1
    services.submit(table.pk, 0, {"type": "clue", "text": "It is a thing I like a lot."})
    assert driver.drop_out(table.pk, 1) == "replaced"
    board = render_board(services.table_state(table.pk), 0)
    assert "Seat 1 is now played by an agent." in board
    assert board.count('data-kind="agent"') == 4
    page_html = clients[0].get(reverse("tables:table", args=[table.pk])).content.decode()
    assert "Seat 1 is now played by an agent." in page_html


def test_a_blinded_board_announces_nothing(client_factory):
    study, clients, people, table = two_people(
        client_factory, dropout="replace", agents_disclosed=False
    )
    services.submit(table.pk, 0, {"type": "clue", "text": "It is a thing I like a lot."})
    assert driver.drop_out(table.pk, 1) == "replaced"
    final = services.table_state(table.pk)
    board = render_board(final, 0)
    assert "data-kind" not in board and "played by an agent" not in board
    # The board just before the takeover and just after it are the same frame, data-seq
    # included: a count that jumped over the hidden turn would tell that seat 1 was a person's.
    taken = next(i for i, e in enumerate(final.events) if e["type"] == "takeover")
    before, after = (
        render_board(at(final, count, final.last_at), 0) for count in (taken, taken + 1)
    )
    assert 'data-seq="1"' in before and before == after
    # every other turn counts, whoever made it: the agent's clue that followed is seq 2
    assert final.events[taken + 1]["seat"] == 1
    assert 'data-seq="2"' in render_board(at(final, taken + 2, final.last_at), 0)


def at(final, count: int, last_at) -> services.TableState:
    """The table as it stood after its first ``count`` turns (still being played)."""
    playing = Table.objects.get(pk=final.table.pk)
    playing.status = Table.Status.PLAYING
    state = final.engine.replay(final.table.config, final.events[:count])
    return services.TableState(
        playing, final.engine, state, final.events[:count], final.seats, last_at
    )


def test_a_lobby_place_given_to_an_agent_is_shown_as_one(alice):
    design = {"seats": [PERSON, PERSON, AGENT, AGENT], "wait_seconds": 5, "seat_order": "fixed"}
    study = make_study(rounds=1, design=design)
    person = ready(alice, study)
    alice.post(page(person, "play"))
    table = current_round(person).table
    lobby = alice.get(reverse("tables:table", args=[table.pk])).content.decode()
    assert "Then agents take the empty seats" in lobby
    Table.objects.filter(pk=table.pk).update(created_at=timezone.now() - timedelta(seconds=10))
    assert driver.check_lobby(table.pk) == "filled"
    board = render_board(services.table_state(table.pk), 0)
    assert "Seat 1 was empty when the wait ended, so an agent plays it." in board
    assert board.count('data-kind="agent"') == 3


def test_the_about_the_other_players_block_appears_once_and_names_the_agents(client_factory):
    study, clients, people, table = two_people(
        client_factory, debrief_text="Thank you for taking part."
    )
    play_out(table.pk)
    for client, person in zip(clients, people, strict=True):
        client.get(page(person, "play"))
        debrief = client.get(page(person, "debrief")).content.decode()
        assert debrief.count('id="debrief-agents"') == 1
        assert "The seats marked as agents" in debrief
        assert "Rule-based computer programs" in debrief and "AI programs" not in debrief
        client.post(page(person, "debrief"))
        done = client.get(page(person, "done")).content.decode()
        assert 'id="debrief-agents"' not in done  # shown once: it was on the debrief


def test_the_study_replaces_the_block_and_the_welcome_text(client_factory):
    study, clients, people, table = two_people(
        client_factory,
        about_agents_text="Seats 2 to 4 were programs written for this study.",
        welcome_text="Welcome to our word game study.",
    )
    play_out(table.pk)
    client, person = clients[0], people[0]
    client.get(page(person, "play"))
    done = client.get(page(person, "done")).content.decode()
    assert done.count('id="debrief-agents"') == 1
    assert "Seats 2 to 4 were programs written for this study." in done
    assert "Rule-based computer programs" not in done
    welcome = Client().get(reverse("participants:study_link", args=[study.slug])).content.decode()
    assert "Welcome to our word game study." in welcome
    assert "people and computer agents" not in welcome
