"""Blinded tables have no tell (issue 31): a person's every page and socket frame is the same
whoever sits at the other seats, the turn deadline applies alike, agents keep the people's rules
of form, and agents' think times are drawn per table and move, on a person's scale."""

from __future__ import annotations

import asyncio
import json
import re
import statistics
import types

import pytest
from django.test import Client
from django.urls import reverse
from test_study_designs import make_study

from games.cases import case_config
from games.undercover.agents import DescriptorAgent
from games.undercover.engine import clue_problem
from studyapp.participants.study_tables import arrange, table_options
from studyapp.tables import driver, pace, services, think
from studyapp.tables.agent_turns import agent_seed
from studyapp.tables.models import Seat, Table
from studyapp.tables.rendering import render_board
from studyapp.tables.store import TableState

P, A = "person", "agent"
# Who sits where at five tables of one blinded study round: seat 0 a person with four agents,
# with one more person, everyone a person but one, and so on. Every person must see the same.
VARIANTS = [
    (P, A, A, A, A),
    (P, P, A, A, A),
    (A, P, A, A, A),
    (P, A, P, A, P),
    (P, P, P, P, A),
]


def blinded_study():
    return make_study(
        rounds=1,
        seed=4,
        agents_disclosed=False,
        # no think time, and no agent turn let run out (the default share would make the agents'
        # games differ from the scripted people's: tests/studyapp/tables/test_timing.py)
        agent_think_seconds={**{kind: [0, 0] for kind in think.MOVE_KINDS}, "timed_out": 0},
        turn_deadline_seconds=90,
        design={"seats": [{"kind": "person"}] * 2 + [{"kind": "agent", "spec": "offline:kb"}] * 3},
    )


def seat_table(study, kinds: tuple[str, ...]) -> tuple[Table, dict[int, Client]]:
    """A table of ``study``'s first round with people at the seats ``kinds`` names, each person a
    browser of their own; the options are the ones a study table gets (study_tables)."""
    design = {
        "seats": [{"kind": k} if k == P else {"kind": A, "spec": "offline:kb"} for k in kinds],
        "players": len(kinds),
        "wait_seconds": 60,
        "lobby_timeout": "fill",
        "replacement_spec": "offline:kb",
        "seat_order": "fixed",
    }
    design, order = arrange(study, design)
    someone = types.SimpleNamespace(study=study, condition="", is_pilot=False)
    options = {**table_options(someone, 1, design), **order}
    options.pop("lobby_kind")
    clients, seats = {}, []
    for index, kind in enumerate(kinds):
        if kind == P:
            client = Client()
            session = client.session
            session.save()
            clients[index] = client
            seats.append({"kind": "human", "session_key": session.session_key})
        else:
            seats.append({"kind": "agent", "agent_spec": "offline:kb", "setting": "none"})
    table = services.create_table(
        "undercover", case_config("undercover", 4, 0, players=5), seats, seed=77, **options
    )
    return table, clients


def as_the_agent_would(snap: TableState, seat: int) -> dict:
    """The move the offline agent would make at this seat and turn: what the scripted people
    play, so that every variant's log is the same game (a ballot is seeded by the vote's opening,
    as an agent's is: studyapp.tables.ballots)."""
    vote = pace.in_a_vote(snap) or snap.engine.legal_actions(snap.state, seat)[0]["type"] == "vote"
    seq = pace.vote_opened(snap) if vote else snap.next_seq
    agent = DescriptorAgent(seed=agent_seed(snap.table.seed, seat, seq), sentences=True)
    observation = snap.engine.observe(snap.state, seat)
    observation["legal_actions"] = snap.engine.legal_actions(snap.state, seat)
    choose = agent.vote if observation["phase"] == "vote" else agent.clue
    event = choose(observation)
    return {k: ("none" if v is None and k == "target" else v) for k, v in event.items()}


def play(table: Table) -> None:
    for _ in range(200):
        snap = services.table_state(table.pk)
        if snap.is_over:
            return
        humans = [i for i in snap.waiting_for() if snap.seat(i).kind == Seat.Kind.HUMAN]
        if not humans:
            driver.tick(table.pk)
            continue
        services.submit(table.pk, humans[0], as_the_agent_would(snap, humans[0]))
    raise AssertionError("the table did not finish")


def frames(table: Table, seat: int) -> dict[str, str]:
    """Every board the socket pushed to ``seat``, one per committed turn (each rendered from
    the table as it stood after that turn, as the broadcast renders it), by what the seat could
    know then (its observation). People and agents vote at once, in whichever order they come,
    so two tables reach the same observations in other orders; a frame must depend on nothing
    but the observation, the same at one table (whoever voted) and at another (whoever sits)."""
    final = services.table_state(table.pk)
    times = list(table.turns.order_by("seq").values_list("created_at", flat=True))
    playing = replace_table(final.table, Table.Status.PLAYING)
    shown: dict[str, str] = {}
    for count in range(1, len(final.events) + 1):
        last = count == len(final.events)
        state = final.engine.replay(table.config, final.events[:count])
        snap = TableState(
            table=final.table if last else playing,
            engine=final.engine,
            state=state,
            events=final.events[:count],
            seats=final.seats,
            last_at=times[count - 1],
        )
        seen = final.engine.observe(state, seat)
        for vote in seen.get("votes", []):  # shown in seat order, not in the order cast
            vote["ballots"] = sorted(vote["ballots"], key=lambda b: b["seat"])
        key = json.dumps(seen, sort_keys=True, default=str)
        board = plain(render_board(snap, seat), table)
        assert shown.setdefault(key, board) == board, "one observation, two boards"
    return shown


def ordered(log: list[dict]) -> list:
    """A log with each vote's ballots in seat order (people and agents vote at once)."""
    out, ballots = [], []
    for event in log:
        if event["type"] == "vote":
            ballots.append(event)
            continue
        out.extend(sorted(ballots, key=lambda e: e["seat"]))
        ballots = []
        out.append(event)
    return out + sorted(ballots, key=lambda e: e["seat"])


def replace_table(table: Table, status: str) -> Table:
    copy = Table.objects.get(pk=table.pk)
    copy.status = status
    return copy


def plain(html: str, table: Table) -> str:
    """A view with what differs between any two tables taken out: the table's id in its
    addresses and the seconds a countdown shows (its presence and wording stay)."""
    html = html.replace(f"/tables/{table.pk}/", "/tables/ID/")
    html = re.sub(r'data-seq="\d+"', "data-seq", html)  # counts every ballot, whoever casts it
    html = re.sub(r'data-seconds-left="\d+"', 'data-seconds-left="N"', html)
    html = re.sub(r">\d+ s<", ">N s<", html)
    html = re.sub(r'name="csrfmiddlewaretoken" value="[^"]+"|"X-CSRFToken": "[^"]+"', "csrf", html)
    return re.sub(r'data-table="\d+"|ws/tables/\d+/|Table #\d+', "T", html)


def test_a_persons_every_frame_and_page_is_the_same_whoever_else_sits_at_the_table(db):
    study = blinded_study()
    seen: dict[int, dict[tuple, dict[str, str]]] = {}
    logs = []
    for kinds in VARIANTS:
        table, clients = seat_table(study, kinds)
        assert table.turn_deadline() == 90  # a deadline for every seat, alone with agents too
        assert "deadline_between_people" not in table.options
        play(table)
        table.refresh_from_db()
        logs.append([t.event for t in table.turns.order_by("seq")])
        for seat, client in clients.items():
            views = frames(table, seat)
            page = client.get(reverse("tables:table", args=[table.pk]))
            assert page.status_code == 200
            views["the page, reloaded at the end"] = plain(page.content.decode(), table)
            seen.setdefault(seat, {})[kinds] = views
    assert all(ordered(log) == ordered(logs[0]) for log in logs), "the same game at every table"
    compared = 0
    for seat, by_variant in seen.items():
        reference_kinds, reference = next(iter(by_variant.items()))
        for kinds, views in by_variant.items():
            # A state one table shows and another does not: only "your vote is in" while
            # others still vote (whether one votes last depends on the order, not on kinds).
            for key in set(views) ^ set(reference):
                assert json.loads(key)["voted"] is True, f"seat {seat}: {kinds} saw {key}"
            for key in set(views) & set(reference):
                board = views[key]
                assert board == reference[key], (
                    f"seat {seat}'s board differs between {kinds} and {reference_kinds}"
                )
                compared += 1
    # Every person was asked for a move with a countdown, at every table.
    assert all(
        'id="turn-deadline"' in "".join(views.values())
        for by in seen.values()
        for views in by.values()
    )
    assert compared > 60
    print(f"\nblinded tables: {compared} views compared across {len(VARIANTS)} seatings")


def test_blinded_agents_keep_the_rules_of_form_of_people():
    """At a table with people an offline agent's clue is a sentence and it never passes, even
    once its descriptors are spent (a person's clue form cannot pass)."""
    from games.runner import choose
    from games.undercover.engine import UndercoverEngine

    engine = UndercoverEngine()
    clues = []
    for game in range(30):
        state = engine.replay(engine.new_config(game, players=5), [])
        while not engine.is_over(state):
            seat = engine.to_move(state)[0]
            agent = DescriptorAgent(seed=game * 1000 + len(state.clues) * 10 + seat, sentences=True)
            move = asyncio.run(choose(engine, state, seat, agent))
            if move.event["type"] == "clue":
                clues.append((move.event["text"], engine.word(state.config, seat), state.said))
            state = move.state
    assert all(text is not None for text, _, _ in clues)
    # A long game (ties make more clue rounds) does not run out of new sentences: every vague
    # sentence is a clue of its own.
    from games.undercover.agents import vague_sentences

    spare = vague_sentences()
    assert len(set(spare)) >= 50
    assert all(clue_problem(text, "zebra", frozenset()) is None for text in spare)
    for text, word, said in clues:  # worded as people word theirs (issue 42): any length
        assert clue_problem(text, word, said) is None


def test_think_times_are_drawn_per_table_and_move_on_a_persons_scale(db):
    seats = [{"kind": "human", "session_key": "k"}] + [
        {"kind": "agent", "agent_spec": "offline:kb"}
    ] * 4
    options = {"agents_disclosed": False, "agent_think_seconds": [5, 40]}
    first = services.create_table("undercover", None, seats, seed=5, think_seed=1, **options)
    second = services.create_table("undercover", None, seats, seed=5, think_seed=2, **options)
    draws = {
        table.pk: [think.think_seconds(pace.think_seed(table), seq, [5, 40]) for seq in range(400)]
        for table in (first, second)
    }
    one, two = draws[first.pk], draws[second.pk]
    assert one != two  # two tables of one round (the same game seed) draw apart
    assert len(set(one)) > 350  # every move draws anew
    assert all(5 <= t <= 40 for t in one + two)
    # log-normal around the geometric mean of the bounds: skewed as people's times are
    assert 12 <= statistics.median(one) <= 16.5
    assert statistics.mean(one) > statistics.median(one)
    # the same move of the same table waits alike (a redelivered turn)
    assert think.think_seconds(pace.think_seed(first), 7, [5, 40]) == one[7]
    snap = services.table_state(first)
    assert pace.agent_delay(snap) == one[snap.next_seq]


@pytest.mark.parametrize("disclosed", [True, False])
def test_the_countdown_depends_on_the_study_not_on_the_other_seats(db, disclosed):
    study = make_study(rounds=1, agents_disclosed=disclosed, turn_deadline_seconds=60)
    someone = types.SimpleNamespace(study=study, condition="", is_pilot=False)
    alone = {"seats": [{"kind": P}] + [{"kind": A, "spec": "offline:kb"}] * 4}
    alone.update(players=5, wait_seconds=60, lobby_timeout="fill", replacement_spec="offline:kb")
    options = table_options(someone, 1, alone)
    # disclosed: alone with agents a person has no deadline; blinded: the same deadline always
    assert options["turn_deadline_seconds"] == (0 if disclosed else 60)


def test_blinded_agents_vote_together_not_one_think_time_after_another(db):
    """In a vote everyone still in votes at once: each agent seat's ballot lands at its own draw
    counted from the moment the vote opened, whatever was cast before it, so the agents' ballots
    do not trickle in one think time (or one model call) after another."""
    from datetime import timedelta

    from django.utils import timezone

    seats = [{"kind": "human", "session_key": "k"}] + [
        {"kind": "agent", "agent_spec": "offline:kb"}
    ] * 4
    bounds = [5, 40]
    options = {"agents_disclosed": False, "agent_think_seconds": bounds, "think_seed": 3}
    table = services.create_table("undercover", None, seats, seed=8, **options)
    play(table)
    final = services.table_state(table.pk)
    opened = next(i for i, e in enumerate(final.events) if e["type"] == "vote")
    playing = replace_table(final.table, Table.Status.PLAYING)
    vote_opened = table.turns.get(seq=opened - 1).created_at

    def at(count: int, last_at) -> TableState:
        state = final.engine.replay(table.config, final.events[:count])
        return TableState(playing, final.engine, state, final.events[:count], final.seats, last_at)

    def draw(seat: int) -> float:
        return think.think_seconds(pace.think_seed(playing), f"vote:{opened}:{seat}", bounds)

    snap = at(opened, vote_opened)  # the vote has just opened (its last commit)
    agents = [i for i in snap.waiting_for() if i != 0]
    times = pace.ballot_times(snap)
    assert times == {seat: vote_opened + timedelta(seconds=draw(seat)) for seat in agents}
    assert len({draw(seat) for seat in agents}) == len(agents)  # each seat draws its own
    first = min(times.values())
    waited = (timezone.now() - vote_opened).total_seconds()
    assert pace.agent_delay(snap) == pytest.approx(
        max(0.0, (first - vote_opened).total_seconds() - waited), abs=0.2
    )
    # one ballot later the others still land at their own draws from the vote's opening
    later = at(opened + 1, timezone.now())
    cast = final.events[opened]["seat"]
    assert pace.ballot_times(later) == {s: t for s, t in times.items() if s != cast}
    # a clue is made in turn: its think time counts from the move before it
    clue = at(1, timezone.now())
    assert pace.agent_delay(clue) == think.think_seconds(pace.think_seed(playing), 1, bounds)


@pytest.mark.parametrize("disclosed", [True, False])
def test_a_blinded_lobby_holds_a_while_even_when_full(client_factory, disclosed):
    """A person alone with agents fills their lobby at once; a blinded study holds it a drawn
    while (as a table waiting for people would wait), a disclosed one starts it at once."""
    from datetime import timedelta

    from django.utils import timezone
    from participant_helpers import page
    from test_study_designs import ready

    from studyapp.participants.rounds import current_round

    design = {"seats": [{"kind": "person"}] + [{"kind": "agent", "spec": "offline:kb"}] * 4}
    study = make_study(rounds=1, agents_disclosed=disclosed, design=design)
    client = client_factory()
    person = ready(client, study)
    client.post(page(person, "play"))
    table = current_round(person).table
    if disclosed:
        assert table.status == Table.Status.PLAYING and "start_after_seconds" not in table.options
        return
    hold = table.options["start_after_seconds"]
    assert 5 <= hold <= 45 and table.status == Table.Status.LOBBY
    board = client.get(reverse("tables:table", args=[table.pk])).content.decode()
    assert 'id="lobby"' in board and "The game starts when every player is here." in board
    assert driver.check_lobby(table.pk) == "early"
    Table.objects.filter(pk=table.pk).update(created_at=timezone.now() - timedelta(seconds=hold))
    assert driver.check_lobby(table.pk) == "started"
    table.refresh_from_db()
    assert table.status == Table.Status.PLAYING


def test_think_times_are_drawn_per_kind_of_move(db):
    """A vote is quicker than a clue: a blinded table's agents draw each move's think time from
    the bounds of its kind (the study's, a kind left out at its default), per table and move;
    one pair still applies to every kind; bounds that are not pairs of seconds by a known kind
    are refused with the reason."""
    from studyapp.participants.models import think_seconds_problem
    from studyapp.tables import think

    study = make_study(
        rounds=1,
        agents_disclosed=False,
        agent_think_seconds={"clue": [8, 50], "vote": [2, 10]},
        design={"seats": [{"kind": "person"}] + [{"kind": "agent", "spec": "offline:kb"}] * 4},
    )
    study.full_clean()
    someone = types.SimpleNamespace(study=study, condition="", is_pilot=False)
    design = {"seats": [{"kind": P}] + [{"kind": A, "spec": "offline:kb"}] * 4, "players": 5}
    design.update(wait_seconds=60, lobby_timeout="fill", replacement_spec="offline:kb")
    options = table_options(someone, 1, design)
    bounds = options["agent_think_seconds"]
    assert bounds == {
        "clue": [8.0, 50.0],
        "vote": [2.0, 10.0],
        "question": [5.0, 40.0],  # left out: the defaults
        "answer": [2.0, 15.0],
        "timed_out": think.DEFAULT_TIMED_OUT,  # no pilot fitted it: the default share
    }
    seats = [{"kind": "human", "session_key": "k"}] + [
        {"kind": "agent", "agent_spec": "offline:kb"}
    ] * 4
    blinded = {"agents_disclosed": False, "agent_think_seconds": bounds}
    tables = [
        services.create_table("undercover", None, seats, seed=5, think_seed=n, **blinded)
        for n in (1, 2)
    ]
    by_kind: dict[str, list[float]] = {"clue": [], "vote": []}
    for table in tables:
        play(table)
        final = services.table_state(table.pk)
        playing = replace_table(final.table, Table.Status.PLAYING)
        for count in range(len(final.events)):
            state = final.engine.replay(table.config, final.events[:count])
            snap = TableState(playing, final.engine, state, final.events[:count], final.seats, None)
            agents = pace.waiting_agents(snap)
            if not agents:
                continue
            seat = agents[0]
            kind = pace.move_kind(snap, seat)
            opened = pace.vote_opened(snap)
            seed = pace.think_seed(playing)
            if kind == "vote":  # a ballot: the seat's draw from the vote's opening
                delay = think.think_seconds(seed, f"vote:{opened}:{seat}", bounds["vote"])
            else:
                delay = pace.agent_delay(snap)  # the whole draw
            low, high = bounds[kind]
            assert low <= delay <= high, (kind, delay)
            by_kind[kind].append(delay)
    assert len(by_kind["clue"]) >= 10 and len(by_kind["vote"]) >= 6
    assert statistics.median(by_kind["vote"]) < statistics.median(by_kind["clue"])
    # many draws of each kind: medians at the geometric mean of their own bounds
    one = tables[0]
    clue_draws = [think.think_seconds(pace.think_seed(one), n, bounds["clue"]) for n in range(400)]
    vote_draws = [
        think.think_seconds(pace.think_seed(one), f"vote:{n}:1", bounds["vote"]) for n in range(400)
    ]
    assert 17 <= statistics.median(clue_draws) <= 23  # sqrt(8 * 50) = 20
    assert 3.9 <= statistics.median(vote_draws) <= 5.1  # sqrt(2 * 10) = 4.5
    other = [think.think_seconds(pace.think_seed(tables[1]), n, bounds["clue"]) for n in range(400)]
    assert other != clue_draws  # each table draws anew
    # one pair: every kind alike (as a table created with a pair keeps it)
    assert think.resolved([1.5, 6]) == {
        **{kind: [1.5, 6.0] for kind in think.MOVE_KINDS},
        "timed_out": think.DEFAULT_TIMED_OUT,
    }
    assert think.bounds_for({"clue": [8, 50]}, "vote") == [3.0, 20.0]
    assert "not 'ballot'" in think_seconds_problem({"ballot": [1, 2]})
    assert think_seconds_problem({"vote": [5, 2]}).startswith("vote: ")
    assert think_seconds_problem([1, 2, 3]) and not think_seconds_problem({"answer": [0, 3]})


def test_a_designs_clue_form_for_models_is_off_by_default_and_reaches_its_tables(db):
    """``model_clue_form`` (a design key, so a condition may set it) is off unless a study says
    so; when on, its tables carry it (studyapp.tables.agent_turns.in_form); a value that is not
    true or false is refused with the key's name."""
    from studyapp.participants import design as designs

    seats = [{"kind": "person"}] + [{"kind": "agent", "spec": "offline:kb"}] * 4
    assert "model_clue_form" not in designs.normalise("undercover", {"seats": seats})
    on = designs.normalise("undercover", {"seats": seats, "model_clue_form": True})
    with pytest.raises(designs.DesignError, match="model_clue_form must be true"):
        designs.normalise("undercover", {"seats": seats, "model_clue_form": "yes"})
    study = make_study(rounds=1, agents_disclosed=False, design={"seats": seats})
    someone = types.SimpleNamespace(study=study, condition="", is_pilot=False)
    assert table_options(someone, 1, on)["model_clue_form"] is True
    off = designs.normalise("undercover", {"seats": seats})
    assert "model_clue_form" not in table_options(someone, 1, off)
