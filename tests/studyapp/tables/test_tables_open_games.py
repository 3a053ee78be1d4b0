"""Table pages: a flood of new open games from one address is refused like a flood of new
participants at a study link, a seat an agent took over says so without naming a cause it cannot
know, and leaving a study's lobby goes back to the study."""

from __future__ import annotations

import time
import uuid

import pytest
from django.test import Client
from django.urls import reverse

from studyapp.tables import driver, services
from studyapp.tables.models import Seat, Table
from studyapp.tables.rendering import render_board

pytestmark = pytest.mark.django_db(transaction=True)


def address() -> str:
    """An address of this test alone: the counters live in the shared cache (Redis in CI)."""
    return f"10.{uuid.uuid4().int % 250}.{uuid.uuid4().int % 250}.{uuid.uuid4().int % 250}"


def test_many_new_twenty_questions_games_from_one_address_are_refused(settings) -> None:
    settings.PARTICIPANT_RATE_BURST = 3
    here = address()
    codes = [
        Client(REMOTE_ADDR=here).post(reverse("tables:play_twenty_questions")).status_code
        for _ in range(8)
    ]
    assert codes[:3] == [302] * 3 and set(codes[3:]) == {429}
    assert Table.objects.count() == 3
    page = Client(REMOTE_ADDR=here).post(reverse("tables:play_twenty_questions"))
    assert b"Too many new games" in page.content
    other = Client(REMOTE_ADDR=address()).post(reverse("tables:play_twenty_questions"))
    assert other.status_code == 302  # another address is counted apart


def test_many_new_undercover_tables_from_one_address_are_refused(settings) -> None:
    settings.PARTICIPANT_RATE_BURST = 2
    here = address()
    # The burst is counted in fixed 10-second windows (studyapp.ratelimit): five starts that
    # straddle a window's end were counted in two windows on a loaded machine. Begin in a fresh one.
    left = 10 - time.time() % 10
    if left < 7:
        time.sleep(left + 0.05)
    url = reverse("tables:play_undercover")
    codes = [Client(REMOTE_ADDR=here).post(url, {"humans": "1"}).status_code for _ in range(5)]
    assert codes[:2] == [302] * 2 and set(codes[2:]) == {429}
    assert Table.objects.filter(game="undercover").count() == 2
    assert Client(REMOTE_ADDR=here).get(url).status_code == 200  # the join form is still shown


def test_open_games_and_study_links_are_counted_apart(settings) -> None:
    from studyapp import ratelimit

    settings.PARTICIPANT_RATE_BURST = 1
    here = address()
    assert Client(REMOTE_ADDR=here).post(reverse("tables:play_twenty_questions")).status_code == 302
    request = Client(REMOTE_ADDR=here).get("/").wsgi_request
    assert not ratelimit.over_limit(request)  # the study link's first start from here


def test_a_seat_taken_from_a_person_who_left_does_not_blame_a_deadline(
    session_key: str,
) -> None:
    seats = [
        {"kind": "human", "session_key": session_key},
        {"kind": "agent", "agent_spec": "offline:kb"},
    ]
    table = services.create_table("twenty-questions", {"answer": "Apple"}, seats, dropout="replace")
    assert driver.drop_out(table.pk, 0) == "replaced"
    board = render_board(services.table_state(table.pk), 0)
    assert 'id="replaced"' in board
    assert "deadline passed" not in board
    assert "you left the study or missed the turn deadline" in board


def test_leaving_a_study_lobby_goes_back_to_the_study_not_to_the_open_games() -> None:
    client = Client()
    client.get("/")  # a session
    client.session.save()
    key = client.session.session_key
    person = {"kind": "human", "session_key": key}
    agent = {"kind": "agent", "agent_spec": "offline:kb"}
    seats = [person, {"kind": "human"}, agent, agent, agent]
    back = "/s/some-study/continue/"
    table = services.create_table("undercover", None, seats, lobby=True, return_url=back)
    assert Table.objects.get(pk=table.pk).status == Table.Status.LOBBY
    response = client.post(reverse("tables:leave", args=[table.pk]))
    assert response.status_code == 302 and response["Location"] == back
    assert not Seat.objects.get(table=table, index=0).session_key  # the place was given back
    open_table = services.create_table("undercover", None, seats, lobby=True)
    response = client.post(reverse("tables:leave", args=[open_table.pk]))
    assert response["Location"] == reverse("tables:home")


def test_leaving_a_table_without_a_seat_there_names_no_study() -> None:
    seated, stranger = Client(), Client()
    seated.get("/")
    seated.session.save()
    person = {"kind": "human", "session_key": seated.session.session_key}
    agent = {"kind": "agent", "agent_spec": "offline:kb"}
    seats = [person, {"kind": "human"}, agent, agent, agent]
    back = "/s/secret-study/continue/"
    table = services.create_table("undercover", None, seats, lobby=True, return_url=back)
    for table_id in (table.pk, table.pk + 1000):  # a table with no seat of theirs, and none
        response = stranger.post(reverse("tables:leave", args=[table_id]))
        assert response.status_code == 302
        assert response["Location"] == reverse("tables:home")
    assert Seat.objects.get(table=table, index=0).session_key  # nobody was moved


def test_a_lone_visitor_who_walks_away_ends_their_game_instead_of_an_agent_playing_it() -> None:
    from studyapp.tables import lobby

    solo = lobby.start_twenty_questions("visitor-a")
    alone = lobby.join_undercover("visitor-b", humans=1)
    shared = lobby.join_undercover("visitor-c", humans=2)
    assert solo.option("dropout") == "end"
    assert Table.objects.get(pk=alone.table_id).option("dropout") == "end"
    assert Table.objects.get(pk=shared.table_id).option("dropout") == "replace"  # others play on
    assert driver.apply_dropout(services.table_state(solo.pk), 0) == "ended"
    assert Table.objects.get(pk=solo.pk).status == Table.Status.ABORTED
