"""Each game's rules are written once, in its package (games/<game>/rules.py): the shipped model
prompts, the engine, the oracles, the LLM agents and the CLI all say what the package says."""

from __future__ import annotations

import asyncio

import pytest

from games import rules_for_people
from games.base import IllegalMove
from games.cases import case_config
from games.llm import prompts
from games.llm.agents import valid_reply
from games.twenty_questions import cli as tq_cli
from games.twenty_questions import engine as tq_engine
from games.twenty_questions import rules as tq_rules
from games.twenty_questions.agents import make_offline_agent
from games.twenty_questions.knowledge.oracle import answer
from games.undercover import rules as uc_rules


def test_the_shipped_model_prompts_are_the_game_packages_texts():
    shipped = prompts.GAMES.shipped().texts
    assert shipped["twenty_questions_rules"] == tq_rules.RULES_FOR_MODELS
    assert shipped["twenty_questions_oracle"] == tq_rules.ORACLE_FOR_MODELS
    assert shipped["undercover_rules"] == uc_rules.RULES_FOR_MODELS


def test_the_engine_takes_exactly_the_three_replies_of_the_rules():
    assert tq_engine.ANSWERS == tq_rules.ANSWERS == ("Yes", "No", "Invalid")
    state = tq_engine.ENGINE.initial(case_config("twenty-questions", 0, 0))
    state = tq_engine.ENGINE.apply(state, {"type": "question", "seat": 0, "text": "Is it alive?"})
    for reply in tq_rules.ANSWERS:
        tq_engine.ENGINE.apply(state, {"type": "answer", "seat": 1, "answer": reply})
    with pytest.raises(IllegalMove, match="one of Yes, No, Invalid"):
        tq_engine.ENGINE.apply(state, {"type": "answer", "seat": 1, "answer": "Maybe"})


def test_the_oracles_reply_only_with_the_rules_answers():
    assert answer("Is it alive?", "Dog") == tq_rules.YES
    assert answer("Is it made of metal?", "Dog") == tq_rules.NO
    assert answer("Does its name start with a D?", "Dog") == tq_rules.INVALID
    assert [valid_reply(r) for r in ("yes.", "No, it is not", "INVALID", "maybe")] == [
        "Yes",
        "No",
        "Invalid",
        None,
    ]
    oracle = make_offline_agent("kb", role="oracle", seed=0)
    state = tq_engine.ENGINE.initial(case_config("twenty-questions", 0, 0))
    for question, reply in [("Is it alive?", None), ("How many letters?", "Invalid")]:
        state = tq_engine.ENGINE.apply(state, {"type": "question", "seat": 0, "text": question})
        event = asyncio.run(oracle.act(tq_engine.ENGINE.observe(state, tq_engine.ORACLE)))
        assert event["answer"] in tq_rules.ANSWERS and event["answer"] == (reply or event["answer"])
        state = tq_engine.ENGINE.apply(state, {**event, "seat": tq_engine.ORACLE})


def test_people_read_the_same_rule_the_default_check_asks():
    people = rules_for_people("twenty-questions")
    assert tq_rules.ANSWERS_TEXT in people and tq_rules.ANSWERS_TEXT in tq_cli.RULES
    for person in ("questioner", "oracle"):
        (check,) = tq_rules.DEFAULT_CHECKS[person]
        assert check["answer"] == "Yes, No or Invalid" and check["answer"] in check["options"]
    (check,) = uc_rules.DEFAULT_CHECKS
    assert check["answer"] in check["options"]
    assert "without saying it, spelling it" in rules_for_people("undercover")
    with pytest.raises(ValueError, match="unknown game"):
        rules_for_people("chess")
