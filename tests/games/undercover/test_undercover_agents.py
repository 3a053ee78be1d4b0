"""The offline descriptor agent, and 1,000 games of it that must all end by the rules."""

from __future__ import annotations

import asyncio

import pytest

from games.agents import make_agent
from games.runner import play_game
from games.undercover.agents import make_offline_agent
from games.undercover.engine import ENGINE, FIRST_SPEAKING_ROUNDS, normalise
from games.undercover.words import DESCRIPTORS

CONFIG = {
    "players": 5,
    "normal_word": "coffee",
    "difference_word": "tea",
    "difference_seat": 4,
    "max_vote_rounds": 6,
}


def act(agent, observation):
    return asyncio.run(agent.act(observation))


def test_its_first_clue_is_a_descriptor_of_its_word():
    agent = make_offline_agent("descriptor", seed=1)
    action = act(agent, ENGINE.observe(ENGINE.initial(CONFIG), 0))
    assert action["type"] == "clue"
    assert action["text"] in DESCRIPTORS["coffee"]


def test_it_never_repeats_an_earlier_clue_and_passes_once_its_phrases_are_used_up():
    state = ENGINE.initial(CONFIG)
    agent = make_offline_agent("descriptor", seed=1)
    for _ in range(FIRST_SPEAKING_ROUNDS * 5):
        seat = ENGINE.to_move(state)[0]
        state = ENGINE.apply(state, {**act(agent, ENGINE.observe(state, seat)), "seat": seat})
    texts = [normalise(text) for _, _, text in state.clues if text is not None]
    assert len(set(texts)) == len(texts)
    # every clue is one descriptor, never two joined; the four coffee seats share theirs
    assert all(", and " not in text for _, _, text in state.clues if text is not None)
    coffee = [text for _, seat, text in state.clues if seat != 4 and text is not None]
    assert len(coffee) == len(set(coffee)) <= len(DESCRIPTORS["coffee"])
    assert any(text is None for _, _, text in state.clues)


def test_it_does_not_say_again_what_a_person_said_in_other_words_or_combine_it():
    coffee = DESCRIPTORS["coffee"]
    state = ENGINE.initial(CONFIG)
    # seat 0 (a person) says one descriptor with more words around it, seat 1 another one
    state = ENGINE.apply(state, {"type": "clue", "seat": 0, "text": f"Well, {coffee[0]}!"})
    state = ENGINE.apply(state, {"type": "clue", "seat": 1, "text": coffee[1].upper()})
    for seed in range(20):
        text = act(make_offline_agent("descriptor", seed=seed), ENGINE.observe(state, 2))["text"]
        assert text not in (coffee[0], coffee[1])


def test_it_answers_a_rejection_with_another_clue():
    agent = make_offline_agent("descriptor", seed=1)
    observation = ENGINE.observe(ENGINE.initial(CONFIG), 0)
    first = act(agent, observation)
    second = act(agent, {**observation, "rejected": {"action": first, "reason": "no"}})
    assert second["text"] not in (None, first["text"])


def test_it_passes_when_it_has_nothing_left_to_say():
    config = {**CONFIG, "normal_word": "a word it has no phrases for"}
    action = act(make_offline_agent("kb"), ENGINE.observe(ENGINE.initial(config), 0))
    assert action == {"type": "clue", "text": None}


def test_it_votes_for_the_seat_whose_clues_fit_its_word_least():
    state = ENGINE.initial(CONFIG)
    coffee = DESCRIPTORS["coffee"]
    for round_index in range(FIRST_SPEAKING_ROUNDS):
        for seat in range(5):
            if seat == 3:
                text = DESCRIPTORS["tea"][round_index]
            else:
                text = f"{coffee[(seat + round_index) % len(coffee)]}, round {round_index} {seat}"
            state = ENGINE.apply(state, {"type": "clue", "seat": seat, "text": text})
    action = act(make_offline_agent("descriptor", seed=5), ENGINE.observe(state, 0))
    assert action == {"type": "vote", "target": 3}


def test_it_is_deterministic_given_the_seed():
    observation = ENGINE.observe(ENGINE.initial(CONFIG), 0)
    first = [act(make_offline_agent("descriptor", seed=s), observation) for s in range(5)]
    again = [act(make_offline_agent("descriptor", seed=s), observation) for s in range(5)]
    assert first == again
    assert len({action["text"] for action in first}) > 1


@pytest.mark.parametrize("spec", ["offline:descriptor", "offline:kb", "offline:random"])
def test_every_offline_name_builds_the_agent(spec):
    agent = make_agent(spec, game="undercover", role="player", seed=0)
    assert act(agent, ENGINE.observe(ENGINE.initial(CONFIG), 0))["type"] == "clue"


def test_it_refuses_an_unknown_name():
    with pytest.raises(ValueError, match="no offline undercover agent 'oracle'"):
        make_offline_agent("oracle")


class Silent:
    """A seat that always passes and abstains, so some games run into ties and long ends."""

    async def act(self, observation):
        if observation["phase"] == "vote":
            return {"type": "vote", "target": None}
        return {"type": "clue", "text": None}


def check_finished_by_the_rules(config, state, events):
    players = config["players"]
    assert ENGINE.is_over(state)
    assert ENGINE.replay(config, events) == state
    clues = [event for event in events if event["type"] == "clue"]
    first_vote = next(i for i, event in enumerate(events) if event["type"] == "vote")
    assert first_vote == FIRST_SPEAKING_ROUNDS * players
    assert len(clues) >= FIRST_SPEAKING_ROUNDS * players
    assert all(event["target"] != event["seat"] for event in events if event["type"] == "vote")
    assert 1 <= len(state.vote_rounds) <= config["max_vote_rounds"]
    difference = config["difference_seat"]
    if state.end == "voted_out":
        assert state.vote_rounds[-1][1] == difference
    elif state.end == "three_left":
        assert len(state.alive) == 3 and difference in state.alive
    else:
        assert state.end == "vote_cap"
        assert len(state.vote_rounds) == config["max_vote_rounds"] and difference in state.alive
    outcome = ENGINE.outcome(state)
    assert sum(result["win"] for result in outcome.values()) in (1, players - 1)


def test_a_thousand_offline_games_finish_by_the_rules():
    async def run_all():
        ends = set()
        for game in range(1000):
            players = 4 + game % 3
            config = ENGINE.new_config(game, players=players, max_vote_rounds=2 + game % 5)
            agents = {
                seat: make_offline_agent("descriptor", seed=game * 10 + seat)
                for seat in range(players)
            }
            if game % 4 == 0:
                agents[game % players] = Silent()
            state, events = await play_game(ENGINE, config, agents)
            check_finished_by_the_rules(config, state, events)
            ends.add((state.winner, state.end))
        return ends

    ends = asyncio.run(run_all())
    # Offline agents that vote only on evidence rarely vote out a normal player, so games that
    # end with three left are the rules tests' business; every end here is one the rules allow.
    assert ("normal", "voted_out") in ends and ("difference", "vote_cap") in ends
    assert ends <= {
        ("normal", "voted_out"),
        ("difference", "three_left"),
        ("difference", "vote_cap"),
    }
