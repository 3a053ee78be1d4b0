"""Disclosure of agents as a design choice: a blinded study's pages and socket frames never say
which seat is an agent, its agents take a person's think time, and the last page discloses."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from channels.db import database_sync_to_async
from django.urls import reverse
from django.utils import timezone
from participant_helpers import page
from test_study_designs import make_study, ready

from studyapp.dashboard.records import participants_frame
from studyapp.participants.models import Participant, Study
from studyapp.participants.rounds import current_round
from studyapp.participants.studyfile import dumps, loads
from studyapp.tables import driver, pace, services, think
from studyapp.tables.models import Seat, Table
from studyapp.tables.rendering import render_board
from tests.studyapp.tables.conftest import make_session, socket

SPECS = ("offline:", "openai", "anthropic")


def reveals_an_agent(html: str) -> str:
    """What in a player's page or frame would tell an agent's seat from a person's ('' if
    nothing): the word agent (seat labels, the lobby's count of agent seats) or a model spec."""
    lowered = html.lower()
    if "agent" in lowered:
        return "agent"
    return next((spec for spec in SPECS if spec in lowered), "")


def play_and_watch(table_id: int, clients: dict[int, object]) -> list[str]:
    """Play an Undercover table to its end as play_out does, collecting every view its people
    get: each move's board for every person seat (what the socket pushes) and the table page."""
    seen = []
    for _ in range(300):
        snap = services.table_state(table_id)
        for index, client in clients.items():
            seen.append(render_board(snap, index))
            seen.append(client.get(reverse("tables:table", args=[table_id])).content.decode())
        if snap.is_over:
            return seen
        humans = [i for i in snap.waiting_for() if snap.seat(i).kind == Seat.Kind.HUMAN]
        if not humans:
            driver.tick(table_id)
            continue
        seat = humans[0]
        shapes = {a["type"]: a for a in snap.engine.legal_actions(snap.state, seat)}
        if "clue" in shapes:
            action = {"type": "clue", "text": f"Seat {seat} thinks of thing {len(snap.events)}."}
        else:
            action = {"type": "vote", "target": shapes["vote"]["targets"][0]}
        services.submit(table_id, seat, action)
    raise AssertionError("the table did not finish")


def two_at_a_table(client_factory, study: Study) -> tuple[dict, list[Participant], Table, tuple]:
    alice, bob = client_factory(), client_factory()
    first, second = ready(alice, study), ready(bob, study)
    alice.post(page(first, "play"))
    lobby_page = alice.get(reverse("tables:table", args=[current_round(first).table_id]))
    bob.post(page(second, "play"))
    table = current_round(first).table
    if table.options.get("start_after_seconds"):  # a blinded lobby holds a while (issue 31)
        assert table.status == Table.Status.LOBBY
        held = timezone.now() - timedelta(seconds=table.options["start_after_seconds"] + 1)
        Table.objects.filter(pk=table.pk).update(created_at=held)
        assert driver.check_lobby(table.pk) == "started"
        table.refresh_from_db()
    return {"lobby": lobby_page.content.decode()}, [first, second], table, (alice, bob)


@pytest.mark.parametrize("disclosed", [False, True])
def test_a_blinded_study_never_shows_which_seat_is_an_agent(client_factory, disclosed):
    study = make_study(rounds=1, agents_disclosed=disclosed, agent_think_seconds=[0, 0])
    views, people, table, clients = two_at_a_table(client_factory, study)
    assert table.status == Table.Status.PLAYING
    assert table.options["agents_disclosed"] is disclosed
    seats = {r.seat: c for r, c in zip(map(current_round, people), clients, strict=True)}
    frames = [views["lobby"], *play_and_watch(table.pk, seats)]
    revealing = [reveals_an_agent(frame) for frame in frames]
    if disclosed:  # the same pages name the agents' seats when the study discloses them
        assert revealing[0] == "agent"
    else:
        assert not any(revealing), revealing
    done_pages = []
    for client, person in zip(clients, people, strict=True):
        client.get(page(person, "play"))
        person.refresh_from_db()
        assert person.status == Participant.Status.FINISHED
        done_pages.append(client.get(page(person, "done")).content.decode())
    # The last page tells what the agents were, once, either way (issue 31): a blinded study
    # says they were not marked; a disclosed one says the marked seats were agents.
    for done_page in done_pages:
        assert done_page.count('id="debrief-agents"') == 1
        assert ("we did not say which players were agents" in done_page) is not disclosed
        assert ("The seats marked as agents" in done_page) is disclosed
        assert "Rule-based computer programs" in done_page
    frame = participants_frame(people)
    assert list(frame["agents_disclosed"]) == [disclosed, disclosed]


def test_a_blinded_lobby_counts_no_agent_seats(client_factory):
    study = make_study(rounds=1, agents_disclosed=False)
    views, *_ = two_at_a_table(client_factory, study)
    lobby = views["lobby"]
    assert 'id="lobby-deadline"' in lobby and "Seat 2" not in lobby
    assert not reveals_an_agent(lobby)


def test_blinded_agents_take_a_persons_think_time(db):
    seats = [{"kind": "human", "session_key": "k"}] + [
        {"kind": "agent", "agent_spec": "offline:kb"}
    ] * 4
    blinded = services.create_table(
        "undercover", None, seats, seed=5, agents_disclosed=False, agent_think_seconds=[4, 15]
    )
    open_ = services.create_table("undercover", None, seats, seed=5, agent_delay_seconds=0.5)
    snap = services.table_state(blinded)
    delay = pace.agent_delay(snap)
    assert 4 <= delay <= 15
    assert pace.agent_delay(services.table_state(blinded)) == delay  # the same move waits alike
    # drawn from the table's own seed and the move (issue 31: not the game's seed, which the
    # tables of a round share)
    assert delay == think.think_seconds(pace.think_seed(snap.table), snap.next_seq, [4, 15])
    assert pace.agent_delay(services.table_state(open_)) == 0.5


def test_disclosure_is_a_study_file_field_with_a_checked_think_time(db):
    study = make_study(agents_disclosed=False, agent_think_seconds=[2, 9])
    data = loads(dumps(study))
    assert data["agents_disclosed"] is False and data["agent_think_seconds"] == [2, 9]
    from django.core.exceptions import ValidationError

    for bad in ([9, 2], [1], "fast", [0, 999]):
        study.agent_think_seconds = bad
        with pytest.raises(ValidationError) as err:
            study.full_clean()
        assert "agent_think_seconds" in err.value.message_dict


@database_sync_to_async
def blinded_lobby(first: str) -> Table:
    seats = [{"kind": "human", "session_key": first}, {"kind": "human"}]
    seats += [{"kind": "agent", "agent_spec": "offline:kb"}] * 3
    options = {"agents_disclosed": False, "agent_think_seconds": [0, 0], "wait_seconds": 60}
    return services.create_table("undercover", None, seats, seed=9, lobby=True, **options)


@database_sync_to_async
def seat_second(table: Table, key: str) -> None:
    from studyapp.tables import lobby

    seat = table.seats.get(index=1)
    lobby.start_if_full(table.pk, lobby.take_place(seat, key))


@pytest.mark.django_db(transaction=True)
async def test_no_socket_frame_of_a_blinded_table_names_an_agent_seat():
    """The real socket (channels' communicator on the ASGI app): the lobby's frame, the start,
    and the frames of a game played by both people while three agents move."""
    first, second = await make_session(), await make_session()
    table = await blinded_lobby(first)
    sockets = [socket(table.pk, first), socket(table.pk, second)]
    assert (await sockets[0].connect())[0]
    frames = [await sockets[0].receive_from(timeout=5)]
    assert 'id="lobby"' in frames[0]
    await seat_second(table, second)
    assert (await sockets[1].connect())[0]
    for _ in range(60):
        for index, communicator in enumerate(sockets):
            # receive_nothing waits without cancelling the socket (a receive that times out
            # cancels the application under test).
            if await communicator.receive_nothing(timeout=0.5):
                continue
            frame = await communicator.receive_from(timeout=5)
            frames.append(frame)
            if 'id="clue-text"' in frame:
                text = f"Seat {index} says a plain thing number {len(frames)}."
                await communicator.send_to(text_data=json.dumps({"type": "clue", "text": text}))
            elif 'id="cast-vote"' in frame:
                target = frame.split('name="target" value="', 1)[1].split('"', 1)[0]
                vote = {"type": "vote", "target": int(target)}
                await communicator.send_to(text_data=json.dumps(vote))
        if any('id="result"' in f for f in frames[-2:]):
            break
    for communicator in sockets:
        await communicator.disconnect()
    assert len(frames) > 10 and any('id="clue-text"' in f for f in frames)
    assert not [reveals_an_agent(f) for f in frames if reveals_an_agent(f)]
