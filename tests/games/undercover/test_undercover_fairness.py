"""The offline agent plays fair next to people: its clues are its own word's, its votes follow
evidence, and a person who describes the normal word in their own words is not its target."""

from __future__ import annotations

import asyncio

from benchmarks.undercover_fairness import run
from benchmarks.undercover_people import PEOPLE_CLUES, ScriptedPerson
from games.runner import play_game
from games.undercover.agents import make_offline_agent
from games.undercover.engine import ENGINE, FIRST_SPEAKING_ROUNDS
from games.undercover.words import DESCRIPTORS

FOREST = {
    "players": 5,
    "normal_word": "forest",
    "difference_word": "jungle",
    "difference_seat": 3,
    "max_vote_rounds": 6,
}
# What the agents said in round one at a table like the one in the issue: seat 0 is a person.
PERSON_CLUE = "Lots of tall trees grow close together there"


def act(agent, observation):
    return asyncio.run(agent.act(observation))


def speak(clues: dict[int, list[str]]):
    state = ENGINE.initial(FOREST)
    for round_index in range(FIRST_SPEAKING_ROUNDS):
        for seat in range(FOREST["players"]):
            text = clues[seat][round_index] if round_index < len(clues[seat]) else None
            state = ENGINE.apply(state, {"type": "clue", "seat": seat, "text": text})
    return state


def test_it_keeps_describing_its_own_word_after_hearing_a_person():
    state = ENGINE.initial(FOREST)
    state = ENGINE.apply(state, {"type": "clue", "seat": 0, "text": PERSON_CLUE})
    for seat in (1, 2, 3, 4):
        agent = make_offline_agent("kb", seed=seat)
        action = act(agent, ENGINE.observe(state, seat))
        own = ENGINE.word(FOREST, seat)
        assert action["text"] in DESCRIPTORS[own]
        state = ENGINE.apply(state, {**action, "seat": seat})


def test_no_agent_votes_out_a_person_whose_clues_fit_the_normal_word_in_other_words():
    forest, jungle = DESCRIPTORS["forest"], DESCRIPTORS["jungle"]
    state = speak(
        {
            0: [PERSON_CLUE, "You can get lost on a hike there", "It smells of pine and moss"],
            1: list(forest[:3]),
            2: list(forest[3:6]),
            3: list(jungle[:3]),  # the difference
            4: ["Deer walk there among the leaves", "Good for hiking", "Robin Hood hid there"],
        }
    )
    for seat in (1, 2, 4):
        vote = act(make_offline_agent("kb", seed=seat), ENGINE.observe(state, seat))
        assert vote == {"type": "vote", "target": 3}


def test_vague_clues_are_weak_evidence_and_it_abstains_without_any():
    vague = ["I like it a lot", "You see it quite often", "It is nice"]
    state = speak({seat: [f"{text} ({seat})" for text in vague] for seat in range(5)})
    agent = make_offline_agent("kb", seed=1)
    assert act(agent, ENGINE.observe(state, 1)) == {"type": "vote", "target": None}
    evidence = agent.evidence(ENGINE.observe(state, 1))
    assert len(set(evidence.values())) == 1  # the same vague words from everyone: no one stands out


def test_one_vague_player_among_clear_ones_is_not_a_suspect():
    forest = DESCRIPTORS["forest"]
    state = speak(
        {
            0: ["I like it a lot", "You see it quite often", "It is nice"],
            1: list(forest[:3]),
            2: list(forest[3:6]),
            3: [f"{forest[0]}, and {forest[3]}", f"{forest[1]}, and {forest[4]}", "Sherwood"],
            4: ["Deer walk there among the leaves", "Good for hiking", "Robin Hood hid there"],
        }
    )
    for seat in (1, 2, 3, 4):
        vote = act(make_offline_agent("kb", seed=seat), ENGINE.observe(state, seat))
        assert vote["target"] != 0


def test_in_many_games_every_agent_clue_is_a_descriptor_of_its_own_word():
    for seed in range(40):
        config = ENGINE.new_config(seed)
        agents = {seat: make_offline_agent("kb", seed=seed + seat) for seat in range(5)}
        state, events = asyncio.run(play_game(ENGINE, config, agents))
        for event in events:
            if event["type"] == "clue" and event["text"] is not None:
                own = DESCRIPTORS[ENGINE.word(config, event["seat"])]
                parts = event["text"].split(", and ")
                assert all(part in own for part in parts), (seed, event)


def test_the_scripted_person_clues_are_held_out_from_the_agents_descriptors():
    for word, clues in PEOPLE_CLUES.items():
        assert set(clues).isdisjoint(DESCRIPTORS[word]), word
    assert len(PEOPLE_CLUES) >= 60 and all(len(clues) >= 4 for clues in PEOPLE_CLUES.values())


def test_the_scripted_person_gives_its_own_clues_and_votes():
    person = ScriptedPerson(seed=3)
    clue = act(person, ENGINE.observe(ENGINE.initial(FOREST), 0))
    assert clue["text"] in PEOPLE_CLUES["forest"]


def test_a_person_with_the_normal_word_is_voted_out_first_at_most_one_and_a_half_chance():
    figures = asyncio.run(run(games=150, players=5, seed=1000))
    mixed = figures["mixed"]
    assert mixed["person_normal_games_with_a_vote_out"] > 80
    assert mixed["ratio"] <= 1.5
    # Today's agent (before this change) found the difference in 0.546 of the mixed tables and
    # 0.682 of the all-agent tables over 1,000 of each (benchmarks/undercover_fairness.py).
    assert mixed["difference_found"] >= 0.546
    assert figures["all_agents"]["difference_found"] >= 0.682


def test_tables_with_a_vague_person_who_abstains_end_by_a_vote():
    # The agent of before abstained without clear evidence: 14.6% of such tables ran into the
    # vote cap over 2,000 (benchmarks/undercover_fairness.py --games 2000).
    figures = asyncio.run(run(games=150, players=5, seed=2000))
    vague = figures["vague_person"]
    assert vague["ended_by_vote_cap"] < 0.10
    assert vague["ratio"] <= 1.5  # a person holding the common word is still not the target
    assert vague["clues_repeating"] <= 0.01 and figures["mixed"]["clues_repeating"] <= 0.01
