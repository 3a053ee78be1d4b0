"""The rules of Twenty Questions, one table row or one small game per rule."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from games import get_engine
from games.base import IllegalMove
from games.twenty_questions import CANDIDATES, ndcg_reward
from games.twenty_questions.engine import ENGINE, NO_QUESTION
from games.twenty_questions.names import named_candidates


def question(text: str) -> dict:
    return {"type": "question", "seat": 0, "text": text}


def answer(reply: str) -> dict:
    return {"type": "answer", "seat": 1, "answer": reply}


def new_game(word: str = "Baseball bat", max_questions: int = 20):
    return ENGINE.initial(ENGINE.new_config(0, answer=word, max_questions=max_questions))


def ask_and_answer(state, n: int, reply: str = "No"):
    for i in range(n):
        state = ENGINE.apply(state, question(f"Is it bigger than a breadbox, take {i}?"))
        state = ENGINE.apply(state, answer(reply))
    return state


def test_the_candidates_are_the_157_words_of_the_paper_in_order():
    assert len(CANDIDATES) == len(set(CANDIDATES)) == 157
    assert CANDIDATES[:5] == ("Airplane", "Apple", "Banana", "Baseball", "Baseball bat")
    assert CANDIDATES[-3:] == ("Watermelon", "Whisk", "Wrench")
    assert "Computer keyboard" in CANDIDATES and "Sharpie" in CANDIDATES


def test_get_engine_returns_this_engine():
    assert get_engine("twenty-questions") is ENGINE


@pytest.mark.parametrize(
    ("k", "reward"),
    [(1, 1.0), (3, 0.5), (20, 0.22767), (None, 0.0)],
)
def test_it_pays_ndcg_at_the_question_that_names_the_answer(k, reward):
    assert ndcg_reward(k) == pytest.approx(reward, abs=1e-5)


@pytest.mark.parametrize("k", [1, 3, 20])
def test_a_game_found_at_question_k_pays_the_same_to_both_seats(k):
    state = ask_and_answer(new_game("Apple"), k - 1)
    state = ENGINE.apply(state, question("Is it an apple?"))
    assert ENGINE.is_over(state)
    outcome = ENGINE.outcome(state)
    assert outcome[0] == outcome[1]
    assert outcome[0]["found"] is True
    assert outcome[0]["questions"] == k
    assert outcome[0]["reward"] == pytest.approx(1 / math.log2(k + 1))


def test_a_game_not_found_in_20_questions_pays_nothing():
    state = ask_and_answer(new_game(), 20)
    assert ENGINE.is_over(state)
    assert ENGINE.outcome(state)[0] == {
        "reward": 0.0,
        "win": None,
        "found": False,
        "questions": 20,
        "aborted": False,
        "voids": 0,
    }


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("Is it a baseball bat?", ["Baseball bat"]),
        ("Is it a BASEBALL?", ["Baseball"]),
        ("is it a computer keyboard", ["Computer keyboard"]),
        ("Is it a computer?", ["Computer"]),
        ("Is it a tennis racket?", ["Tennis racket"]),
        ("Is it a lawn-mower?", ["Lawn mower"]),
        ("Is it a watermelon?", ["Watermelon"]),
        ("Is it a pant?", []),
        ("Is it a bat?", []),
        ("Baseball, bat", ["Baseball"]),
        ("Is it one of: apple, banana, mango?", ["Apple", "Banana", "Mango"]),
    ],
)
def test_it_reads_names_as_whole_words_longest_first(text, named):
    assert named_candidates(text) == named


@pytest.mark.parametrize(
    ("text", "word"),
    [
        ("Is it a plane?", "Airplane"),
        ("Is it a TV?", "Television"),
        ("Is it a phone?", "Smartphone"),
        ("Is it a cellphone?", "Smartphone"),
        ("Is it a cell phone?", "Smartphone"),
        ("Is it a sofa?", "Couch"),
        ("Is it a fridge?", "Refrigerator"),
        ("Is it a keyboard?", "Computer keyboard"),
        ("Is it a laptop?", "Computer"),
        ("Is it a motorbike?", "Motorcycle"),
        ("Are they headphones?", "Headphone"),
        ("Are they knives?", "Knife"),
        ("Are they strawberries?", "Strawberry"),
        ("Are they peaches?", "Peach"),
        ("Are they buses?", "Bus"),
        ("Is it a shoe?", "Shoes"),
        ("Is it a pea?", "Peas"),
        ("Are they chopsticks?", "Chopstick"),
        ("Is it a bedside table?", "Nightstand"),
    ],
)
def test_it_accepts_aliases_and_plurals(text, word):
    assert named_candidates(text) == [word]


def test_a_wrong_guess_is_answered_no_by_the_engine():
    state = ENGINE.apply(new_game("Apple"), question("Is it a banana?"))
    assert ENGINE.to_move(state) == [0]
    last = ENGINE.observe(state, 0)["history"][-1]
    assert (last["answer"], last["by"], last["guess"]) == ("No", "engine", "Banana")


def test_a_question_naming_several_candidates_goes_to_the_oracle():
    state = ENGINE.apply(new_game("Apple"), question("Is it an apple or a banana?"))
    assert ENGINE.to_move(state) == [1]
    assert ENGINE.observe(state, 1)["question"] == "Is it an apple or a banana?"


def test_naming_baseball_does_not_find_a_baseball_bat():
    state = ENGINE.apply(new_game("Baseball bat"), question("Is it a baseball?"))
    assert not ENGINE.is_over(state)
    state = ENGINE.apply(state, question("Is it a baseball bat?"))
    assert ENGINE.outcome(state)[0]["reward"] == pytest.approx(ndcg_reward(2))


def test_it_rejects_a_21st_question():
    state = ask_and_answer(new_game(), 20)
    with pytest.raises(IllegalMove, match="over"):
        ENGINE.apply(state, question("Is it a baseball bat?"))


@pytest.mark.parametrize(
    ("event", "reason"),
    [
        (question(""), "empty"),
        (question("   "), "empty"),
        ({"type": "question", "seat": 0}, "empty"),
        (question("Is it " + "very " * 60 + "big?"), "limit is 300"),
        ({"type": "question", "seat": 1, "text": "Is it big?"}, "questioner"),
        (answer("Yes"), "no question waiting"),
        ({"type": "dance", "seat": 0}, "unknown event type"),
    ],
)
def test_it_rejects_a_bad_question_with_a_reason(event, reason):
    state = new_game()
    with pytest.raises(IllegalMove, match=reason):
        ENGINE.apply(state, event)


@pytest.mark.parametrize(
    ("event", "reason"),
    [
        (answer("Maybe"), "one of Yes, No, Invalid"),
        (answer("yes"), "one of Yes, No, Invalid"),
        ({"type": "answer", "seat": 0, "answer": "Yes"}, "oracle"),
        (question("Is it red?"), "oracle's turn"),
    ],
)
def test_it_rejects_a_bad_answer_with_a_reason(event, reason):
    state = ENGINE.apply(new_game(), question("Is it big?"))
    with pytest.raises(IllegalMove, match=reason):
        ENGINE.apply(state, event)


def test_a_rejected_event_leaves_the_state_unchanged():
    state = ENGINE.apply(new_game(), question("Is it big?"))
    before = ENGINE.state_to_json(state)
    with pytest.raises(IllegalMove):
        ENGINE.apply(state, answer("Perhaps"))
    assert ENGINE.state_to_json(state) == before


def test_apply_returns_a_new_state_and_keeps_the_old_one():
    start = new_game()
    after = ENGINE.apply(start, question("Is it big?"))
    assert start.turns == () and len(after.turns) == 1


def test_it_rejects_any_move_after_the_answer_is_found():
    state = ENGINE.apply(new_game("Apple"), question("Is it an apple?"))
    with pytest.raises(IllegalMove, match="over"):
        ENGINE.apply(state, question("Is it a banana?"))


def test_the_questioner_never_sees_the_answer_and_the_oracle_does():
    state = ENGINE.apply(new_game("Watering can"), question("Is it big?"))
    state = ENGINE.apply(state, answer("No"))
    for current in (new_game("Watering can"), state):
        assert "Watering can" not in json.dumps(
            {k: v for k, v in ENGINE.observe(current, 0).items() if k != "candidates"}
        )
        assert ENGINE.observe(current, 1)["answer"] == "Watering can"


def test_the_fallbacks_are_legal_and_count_as_invalid():
    state = new_game()
    state = ENGINE.apply(state, ENGINE.fallback(state, 0))
    assert state.turns[-1].question == NO_QUESTION
    assert state.turns[-1].answer == "Invalid"
    state = ENGINE.apply(state, question("Is it big?"))
    state = ENGINE.apply(state, ENGINE.fallback(state, 1))
    assert state.turns[-1].answer == "Invalid"
    assert len(state.turns) == 2


def test_abort_ends_the_game_without_a_reward():
    state = ENGINE.apply(new_game(), {"type": "abort", "reason": "closed"})
    assert ENGINE.is_over(state)
    assert ENGINE.outcome(state)[0]["reward"] == 0.0
    assert ENGINE.outcome(state)[0]["aborted"] is True


def test_takeover_changes_nothing_in_the_rules():
    state = new_game()
    assert ENGINE.apply(state, {"type": "takeover", "seat": 0, "by": "offline:infogain"}) == state


def test_it_rejects_a_config_whose_answer_is_not_a_candidate():
    with pytest.raises(ValueError, match="not one of the 157"):
        ENGINE.initial({"answer": "Unicorn", "max_questions": 20})


def test_new_config_spells_the_answer_as_the_paper_does_and_is_seeded():
    assert ENGINE.new_config(1, answer="baseball BAT")["answer"] == "Baseball bat"
    assert ENGINE.new_config(7) == ENGINE.new_config(7)
    assert len({ENGINE.new_config(seed)["answer"] for seed in range(50)}) > 10


texts = st.sampled_from(
    ["Is it big?", "Is it an apple?", "Is it a cat or a dog?", "Is it a plane?", NO_QUESTION, ""]
)
events = st.lists(
    st.one_of(
        texts.map(question),
        st.sampled_from(["Yes", "No", "Invalid", "Maybe"]).map(answer),
        st.just({"type": "takeover", "seat": 1, "by": "human"}),
    ),
    max_size=50,
)


@settings(max_examples=60, deadline=None)
@given(word=st.sampled_from(CANDIDATES), moves=events)
def test_replaying_the_accepted_events_rebuilds_the_same_state(word, moves):
    config = ENGINE.new_config(0, answer=word, max_questions=6)
    state = ENGINE.initial(config)
    accepted = []
    for event in moves:
        before = ENGINE.state_to_json(state)
        try:
            state = ENGINE.apply(state, event)
        except IllegalMove:
            assert ENGINE.state_to_json(state) == before
            continue
        accepted.append(event)
    rebuilt = ENGINE.replay(config, json.loads(json.dumps(accepted)))
    assert rebuilt == state
    assert ENGINE.state_from_json(json.loads(json.dumps(ENGINE.state_to_json(state)))) == state
    assert len(state.turns) <= 6
