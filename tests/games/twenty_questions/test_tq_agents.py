"""The offline agents: the oracle's reading of questions and the questioners' figures."""

from __future__ import annotations

import asyncio

import pytest

from games.agents import make_agent
from games.runner import play_game
from games.twenty_questions import CANDIDATES
from games.twenty_questions.agents import answer_question, make_offline_agent, yes_set
from games.twenty_questions.engine import ENGINE, MAX_QUESTION_CHARS
from games.twenty_questions.knowledge.oracle import FEATURES


@pytest.mark.parametrize(
    ("text", "word", "reply"),
    [
        ("Is it alive?", "Dog", "Yes"),
        ("Is it a living thing?", "Hammer", "No"),
        ("Is it an animal?", "Tiger", "Yes"),
        ("Is it a mammal?", "Horse", "Yes"),
        ("Can you eat it?", "Apple", "Yes"),
        ("Is it edible?", "Hammer", "No"),
        ("Is it bigger than a breadbox?", "Elephant", "Yes"),
        ("Is it smaller than a breadbox?", "Ring", "Yes"),
        ("Is it smaller than a breadbox?", "Bus", "No"),
        ("Is it bigger than a person?", "Airplane", "Yes"),
        ("Is it electronic?", "Smartphone", "Yes"),
        ("Does it need electricity?", "Spoon", "No"),
        ("Is it usually found indoors?", "Couch", "Yes"),
        ("Is it kept outdoors?", "Tree", "Yes"),
        ("Is it found in a kitchen?", "Whisk", "Yes"),
        ("Can you wear it?", "Hat", "Yes"),
        ("Is it jewelry?", "Ring", "Yes"),
        ("Can you hold it in your hand?", "Pen", "Yes"),
        ("Does it have wheels?", "Car", "Yes"),
        ("Is it a musical instrument?", "Violin", "Yes"),
        ("Is it used in sports?", "Golf ball", "Yes"),
        ("Is it a tool?", "Rabbit", "No"),
        ("Is it a piece of furniture?", "Desk", "Yes"),
        ("Is it an office supply?", "Stapler", "Yes"),
        ("Is it made of metal?", "Spoon", "Yes"),
        ("Is it made of wood?", "Violin", "Yes"),
        ("Is it sharp?", "Knife", "Yes"),
        ("Is it a fruit or a vegetable?", "Carrot", "Yes"),
        ("Is it a fruit or a vegetable?", "Car", "No"),
        ("Is it a wild animal?", "Cow", "No"),
        ("Is it natural?", "Rock", "Yes"),
        ("Is it man-made?", "Rock", "No"),
        ("Is it a body of water?", "Lake", "Yes"),
        ("Is it a body of water?", "Boat", "No"),
        ("Can it fly?", "Kite", "Yes"),
        ("Is it one of: apple, banana, mango?", "Mango", "Yes"),
        ("Is it one of: apple, banana, mango?", "Peach", "No"),
        ("Is it a cat or a dog?", "Cat", "Yes"),
        ("Is it either a baseball or a golf ball?", "Baseball bat", "No"),
        ("Is it a baseball bat?", "Baseball bat", "Yes"),
    ],
)
def test_the_oracle_understands_common_phrasings(text, word, reply):
    assert answer_question(text, word) == reply


@pytest.mark.parametrize(
    "text",
    [
        "Does the word start with A?",
        "How many letters does it have?",
        "Does it contain the letter 'e'?",
        "Is it spelled with a double p?",
        "Does it rhyme with bear?",
        "What color is it?",
        "Hmm.",
    ],
)
def test_the_oracle_answers_invalid_to_letters_and_to_what_it_cannot_read(text):
    assert answer_question(text, "Apple") == "Invalid"


def test_the_oracle_reads_every_feature_question_as_that_feature():
    for feature in FEATURES.values():
        assert yes_set(feature.question) == feature.words, feature.question


def test_the_oracle_reads_the_question_it_is_shown():
    oracle = make_offline_agent("kb", role="oracle")
    state = ENGINE.apply(
        ENGINE.initial(ENGINE.new_config(0, answer="Cow")),
        {"type": "question", "seat": 0, "text": "Is it a farm animal?"},
    )
    assert asyncio.run(oracle.act(ENGINE.observe(state, 1))) == {"type": "answer", "answer": "Yes"}


def run_all_words(questioner: str, seed: int = 0) -> list[dict]:
    async def main() -> list[dict]:
        results = []
        for i, word in enumerate(CANDIDATES):
            agents = {
                0: make_agent(
                    questioner, game="twenty-questions", role="questioner", seed=seed + i
                ),
                1: make_agent("offline:kb", game="twenty-questions", role="oracle", seed=seed + i),
            }
            config = ENGINE.new_config(i, answer=word)
            state, events = await play_game(ENGINE, config, agents)
            assert all(len(e.get("text", "")) <= MAX_QUESTION_CHARS for e in events)
            results.append(ENGINE.outcome(state)[0])
        return results

    return asyncio.run(main())


def test_infogain_finds_every_word_near_the_binary_search_optimum():
    results = run_all_words("offline:infogain")
    assert all(result["found"] for result in results)
    assert sum(result["reward"] for result in results) / len(results) >= 0.30


def test_random_questioning_is_far_below_infogain():
    results = run_all_words("offline:random")
    assert sum(result["reward"] for result in results) / len(results) < 0.1


def test_an_agent_is_deterministic_given_its_seed():
    observation = ENGINE.observe(ENGINE.initial(ENGINE.new_config(0, answer="Cat")), 0)
    for name in ("infogain", "random"):
        first = make_offline_agent(name, role="questioner", seed=3)
        second = make_offline_agent(name, role="questioner", seed=3)
        assert asyncio.run(first.act(observation)) == asyncio.run(second.act(observation))


def test_infogain_asks_something_else_after_a_rejection():
    agent = make_offline_agent("infogain", role="questioner", seed=0)
    observation = ENGINE.observe(ENGINE.initial(ENGINE.new_config(0, answer="Cat")), 0)
    first = asyncio.run(agent.act(observation))
    rejected = {**observation, "rejected": {"action": first, "reason": "too long"}}
    assert asyncio.run(agent.act(rejected))["text"] != first["text"]


def test_it_refuses_an_agent_for_the_wrong_seat():
    with pytest.raises(ValueError, match="offline:kb \\(oracle\\)"):
        make_offline_agent("kb", role="questioner")
