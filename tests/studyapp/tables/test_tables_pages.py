"""What a person sees around the game itself: the end of a game (the word revealed, what next),
the Undercover lobby (seats filled, the wait limit, leaving) and the vote form."""

from __future__ import annotations

import re

import pytest
from django.test import Client
from django.urls import reverse

from studyapp.tables import lobby, services
from studyapp.tables.models import Seat, Table
from studyapp.tables.rendering import render_board

pytestmark = pytest.mark.django_db(transaction=True)

AGENT = {"kind": "agent", "agent_spec": "offline:kb"}


def start_twenty_questions(client: Client) -> Table:
    response = client.post(reverse("tables:play_twenty_questions"))
    return Table.objects.get(pk=int(re.search(r"/tables/(\d+)/", response.url)[1]))


def test_the_questioner_sees_the_word_once_the_game_is_over() -> None:
    client = Client()
    table = start_twenty_questions(client)
    answer = table.config["answer"]
    page = client.get(reverse("tables:table", args=[table.pk])).content.decode()
    assert 'id="revealed-word"' not in page and 'id="play-again"' not in page

    client.post(reverse("tables:move", args=[table.pk]), {"type": "question", "text": "Is it?"})
    client.post(reverse("tables:move", args=[table.pk]), {"type": "question", "text": f"{answer}?"})
    page = client.get(reverse("tables:table", args=[table.pk])).content.decode()
    assert f'<span class="word" id="revealed-word">{answer}</span>' in page
    assert re.search(r'id="reward">0\.6\d\d<', page)  # found at question 2: 1/log2(3)
    assert '<span id="questions-used">2 of 20</span>' in page
    assert 'id="home"' in page and 'form="play-again-form"' in page and 'id="continue"' not in page

    client.post(reverse("tables:play_twenty_questions"))  # the page's "Play again" form
    assert Table.objects.filter(game="twenty-questions").count() == 2


def test_a_study_participant_gets_continue_instead_of_play_again(session_key: str) -> None:
    seats = [{"kind": "human", "session_key": session_key}, AGENT]
    table = services.create_table(
        "twenty-questions", {"answer": "Apple"}, seats, return_url="/study/next/"
    )
    services.submit(table, 0, {"type": "question", "text": "Is it Apple?"})
    board = render_board(services.table_state(table.pk), 0)
    assert 'href="/study/next/" id="continue"' in board and "Apple</span>" in board
    assert 'id="play-again"' not in board


def test_every_player_sees_each_word_and_role_once_undercover_is_over() -> None:
    table = services.create_table("undercover", None, [AGENT] * 5, seed=3)
    snap = services.table_state(table.pk)
    assert snap.is_over
    outcome = snap.engine.outcome(snap.state)
    board = render_board(snap, 0)
    words = re.findall(r'<td class="word-cell">([^<]*)</td>', board)
    assert words == [outcome[seat]["word"] for seat in range(5)]
    assert {table.config["normal_word"], table.config["difference_word"]} == set(words)
    difference = table.config["difference_seat"]
    rows = re.findall(r"<tr[^>]*><td>Seat (\d)[^<]*</td><td[^>]*>[^<]*</td><td>([^<]*)", board)
    roles = {int(seat): role.strip() for seat, role in rows}
    assert roles == {
        seat: "different word" if seat == difference else "common word" for seat in range(5)
    }
    winner = outcome[0]["winner"]
    assert ("The player with the different word won." in board) == (winner == "difference")
    assert ("The players with the common word won." in board) == (winner == "normal")


def test_the_lobby_shows_the_seats_filled_and_the_wait_limit() -> None:
    seat = lobby.join_undercover("session-a", humans=3, wait_seconds=90)
    board = render_board(services.table_state(seat.table_id), seat.index)
    assert "<strong>1 of 3</strong> people have joined (agents play the other 2 seats)" in board
    left = int(re.search(r'data-seconds-left="(\d+)"', board)[1])
    assert 80 <= left <= 90
    assert "agents take the empty seats" in board
    assert 'form="leave-form"' in board

    lobby.join_undercover("session-b", humans=3)
    board = render_board(services.table_state(seat.table_id), seat.index)
    assert "<strong>2 of 3</strong> people have joined" in board


def test_the_lobby_says_when_waiting_ends_with_an_exit_code() -> None:
    seat = lobby.join_undercover("session-a", humans=2, lobby_timeout="exit")
    board = render_board(services.table_state(seat.table_id), seat.index)
    assert "you get an exit code" in board and "agents take the empty seats" not in board


def test_a_player_can_leave_the_lobby() -> None:
    client, other = Client(), Client()
    response = client.post(reverse("tables:play_undercover"), {"humans": "3"})
    table_url = response.url
    table_id = int(re.search(r"/tables/(\d+)/", table_url)[1])
    page = client.get(table_url).content.decode()
    assert 'id="leave-form"' in page and 'name="csrfmiddlewaretoken"' in page

    response = client.post(reverse("tables:leave", args=[table_id]))
    assert response.url == reverse("tables:home")
    assert client.get(table_url).status_code == 404  # no seat any more
    assert Seat.objects.get(table_id=table_id, index=0).is_vacant
    # the freed place goes to the next person
    other.post(reverse("tables:play_undercover"), {"humans": "3"})
    assert not Seat.objects.get(table_id=table_id, index=0).is_vacant


def test_leaving_does_nothing_once_the_game_has_started() -> None:
    first = lobby.join_undercover("session-a", humans=2)
    lobby.join_undercover("session-b", humans=2)  # full: the game starts
    assert not lobby.leave(first)
    first.refresh_from_db()
    assert first.session_key == "session-a"
    assert Table.objects.get(pk=first.table_id).status == Table.Status.PLAYING


def test_no_vote_is_chosen_until_the_player_chooses() -> None:
    keys = [f"session-{i}" for i in range(5)]
    table = services.create_table(
        "undercover", None, [{"kind": "human", "session_key": key} for key in keys], seed=4
    )
    snap = services.table_state(table.pk)
    while snap.engine.observe(snap.state, 0)["phase"] == "speak":
        seat = snap.engine.to_move(snap.state)[0]
        text = f"thought {snap.next_seq} of seat {seat}"
        snap = services.table_state(
            services.submit(table, seat, {"type": "clue", "text": text}).table_id
        )
    form = re.search(r'<form[^>]*id="vote-1".*?</form>', render_board(snap, 0), re.DOTALL)[0]
    radios = re.findall(r"<input type=\"radio\"[^>]*>", form)
    assert len(radios) == 5  # four other players and abstain
    assert all("checked" not in radio and "autofocus" not in radio for radio in radios)
    assert all("required" in radio for radio in radios)
    for radio_id in re.findall(r'type="radio"[^>]*id="([^"]+)"', form):
        assert f'<label for="{radio_id}">' in form
    assert 'value="none" id="target-none"' in form
