"""Which questions are guesses (rules version 2), as people and models phrase them, and the
explicit guess move."""

from __future__ import annotations

import pytest

from games.base import IllegalMove
from games.twenty_questions import CANDIDATES
from games.twenty_questions.agents import guess_question
from games.twenty_questions.engine import ENGINE, RULES_VERSION
from games.twenty_questions.names import guess_of, guess_text, guess_word

GUESSES = [
    ("Is it a dog?", "Dog"),
    ("Is the word dog?", "Dog"),
    ("Dog?", "Dog"),
    ("dog", "Dog"),
    ("Is it dogs?", "Dog"),
    ("Is it a Dog", "Dog"),
    ("IS IT A DOG???", "Dog"),
    ("My guess is dog", "Dog"),
    ("my guess is a dog.", "Dog"),
    ("I think it's a dog", "Dog"),
    ("I think that it is a dog!", "Dog"),
    ("Could it be a dog?", "Dog"),
    ("Might it be a horse?", "Horse"),
    ("Are you a dog?", "Dog"),
    ("Is your word 'dog'?", "Dog"),
    ('Is the secret word "Dog"?', "Dog"),
    ("Final answer: dog", "Dog"),
    ("It's a dog!", "Dog"),
    ("Is the answer a baseball bat?", "Baseball bat"),
    ("Is it a baseball?", "Baseball"),
    ("Is it a pair of scissors?", "Scissors"),
    ("Are they scissors?", "Scissors"),
    ("Are they shoes?", "Shoes"),
    ("Is it an apple?", "Apple"),
    ("Is it perhaps a violin?", "Violin"),
    ("Is it a violin, by any chance?", "Violin"),
    ("So is it a tiger then?", "Tiger"),
    ("Hmm, could it be the ocean?", "Ocean"),
    ("Is it the sea?", "Sea"),
    ("Guess: lion", "Lion"),
    ("My final guess: a lion", "Lion"),
    ("I'd say a lion.", "Lion"),
    ("I'll go with lion", "Lion"),
    ("I'm guessing it's a lion", "Lion"),
    ("Let me guess: a lion", "Lion"),
    ("It must be a lion.", "Lion"),
    ("Lion is my final answer", "Lion"),
    ("Are you thinking of a lion?", "Lion"),
    ("Is the thing you're thinking of a lion?", "Lion"),
    ("Is it a lion, is that right?", "Lion"),
    ("It's a lion, isn't it?", "Lion"),
    ("Q20: Is it a lion?", "Lion"),
    ("**Is it a lion?**", "Lion"),
    ("Is it a TV?", "Television"),
    ("Is it a phone?", "Smartphone"),
    ("Is it a fridge?", "Refrigerator"),
    ("Is it a lawn-mower?", "Lawn mower"),
    ("Is it paper?", "Paper"),
    ("Is it some glue?", "Glue"),
    ("Is it an orange?", "Orange"),
    ("Are they oranges?", "Orange"),
    ("Orange?", "Orange"),
    ("Is the word orange?", "Orange"),
    ("My guess is orange", "Orange"),
    ("Is it the word orange?", "Orange"),
    ("Is it a peach?", "Peach"),
    ("Watch?", "Watch"),
    ("Is it a watch?", "Watch"),
    ("Is it a saw?", "Saw"),
    ("Is it a computer keyboard?", "Computer keyboard"),
    ("Is it a keyboard?", "Computer keyboard"),
    ("Is it a tree?", "Tree"),
    ("Can I guess horse?", "Horse"),
    ("I'd like to guess a horse", "Horse"),
    ("i think its a horse", "Horse"),
    ("Is it going to be a horse?", "Horse"),
    ("Does the answer happen to be horse?", "Horse"),
    ("You're a horse!", "Horse"),
    ("Is it: a horse?", "Horse"),
    ("Is it a horse or not?", "Horse"),
    ("Is it a horse? (This is my guess.)", "Horse"),
]

NOT_GUESSES = [
    "Can you watch it?",
    "Can you watch TV on it?",
    "Is it bigger than a car?",
    "Is it smaller than an apple?",
    "Is it heavier than a dog?",
    "Is it used with a computer?",
    "Is it a fruit, like an apple?",
    "Is it an instrument like a guitar?",
    "Is it orange in colour?",
    "Is it orange?",
    "It's orange?",
    "Are they orange?",
    "Is it orange or red?",
    "Is it peach coloured?",
    "Is it the color orange?",
    "Is it NOT a dog?",
    "Is it not a dog?",
    "It's not a dog, is it?",
    "Is it a kind of dog?",
    "Is it a type of tree?",
    "Does it eat dogs?",
    "Is it a pet like a dog?",
    "Is it something a dog would chase?",
    "Is it made of glass?",
    "Is it made of paper?",
    "Is it an animal?",
    "Is it a cat or a dog?",
    "Is it an apple or a banana?",
    "Is it a big dog?",
    "Is it a dog toy?",
    "Is it dog-sized?",
    "Is it found in the ocean?",
    "Does it ring?",
    "Can it bear weight?",
    "Can you drill holes with it?",
    "Is it part of a car?",
    "Is it a computer part?",
    "Is it a fruit tree?",
    "Do you put it on a table?",
    "Would it fit in a cup?",
    "Is it as tall as a tree?",
    "Is it kept in a desk?",
    "Is it worn on the wrist like a watch?",
    "Is it related to a horse?",
    "Is it used to write, like a pen?",
    "Is it a ball?",
    "Does the word start with D?",
    "Does it happen to be orange?",
    "its orange?",
    "Is its colour orange?",
    "Is it a horse or something else?",
]


@pytest.mark.parametrize(("text", "word"), GUESSES)
def test_a_question_asking_whether_the_word_is_one_candidate_is_a_guess(text, word):
    assert guess_of(text) == word


@pytest.mark.parametrize("text", NOT_GUESSES)
def test_a_question_that_mentions_a_candidate_in_another_role_is_not_a_guess(text):
    assert guess_of(text) is None


def test_the_table_has_more_than_sixty_phrasings():
    assert len(GUESSES) + len(NOT_GUESSES) >= 100


def game(word: str = "Television", **options):
    return ENGINE.initial(ENGINE.new_config(0, answer=word, **options))


def ask(state, text: str):
    return ENGINE.apply(state, {"type": "question", "seat": 0, "text": text})


@pytest.mark.parametrize(
    ("word", "text"),
    [
        ("Television", "Can you watch it?"),
        ("Banana", "Is it a fruit, like an apple?"),
        ("Smartphone", "Does it run on a battery?"),
        ("Dog", "Is it NOT a dog?"),
        ("Orange", "Is it orange?"),
    ],
)
def test_the_issues_examples_go_to_the_oracle(word, text):
    state = ask(game(word), text)
    assert ENGINE.to_move(state) == [1]
    assert ENGINE.observe(state, 1)["question"] == text
    assert not ENGINE.is_over(state)


def test_a_wrong_guess_counts_as_a_question_answered_no_by_the_engine():
    state = ask(game("Dog"), "I think it's a cat")
    assert ENGINE.to_move(state) == [0]
    last = ENGINE.observe(state, 0)["history"][-1]
    assert (last["answer"], last["by"], last["guess"]) == ("No", "engine", "Cat")
    assert ENGINE.observe(state, 0)["questions_asked"] == 1


def test_a_right_guess_in_any_phrasing_ends_the_game():
    state = ask(game("Dog"), "Is it an animal?")
    state = ENGINE.apply(state, {"type": "answer", "seat": 1, "answer": "Yes"})
    state = ask(state, "Final answer: dogs")
    assert ENGINE.outcome(state)[0]["found"] is True
    assert ENGINE.outcome(state)[0]["questions"] == 2


def explicit(word, **extra):
    return {"type": "question", "seat": 0, "guess": word, **extra}


@pytest.mark.parametrize("sent", ["Orange", "orange", " ORANGE ", "oranges"])
def test_the_explicit_guess_move_is_a_guess_whatever_the_word(sent):
    state = ENGINE.apply(game("Orange"), explicit(sent))
    assert ENGINE.is_over(state)
    assert state.turns[-1].question == guess_text("Orange") == "Is the word Orange?"
    assert (state.turns[-1].answer, state.turns[-1].by) == ("Yes", "engine")


def test_a_wrong_explicit_guess_is_answered_no_and_counted():
    state = ENGINE.apply(game("Orange"), explicit("Peach"))
    assert ENGINE.to_move(state) == [0]
    assert len(state.turns) == 1
    assert (state.turns[0].answer, state.turns[0].guess) == ("No", "Peach")


@pytest.mark.parametrize(
    ("event", "reason"),
    [
        (explicit("Unicorn"), '"Unicorn" is not one of the 157 candidate words'),
        (explicit("a big dog"), "not one of the 157"),
        (explicit("cat or dog"), "not one of the 157"),
        (explicit(""), "not one of the 157"),
        (explicit(7), "not one of the 157"),
        (explicit("Dog", text="Is it a dog?"), "not both"),
        ({**explicit("Dog"), "seat": 1}, "questioner"),
    ],
)
def test_the_explicit_guess_refuses_a_word_that_is_not_a_candidate(event, reason):
    state = game()
    with pytest.raises(IllegalMove, match=reason):
        ENGINE.apply(state, event)


def test_guess_word_reads_a_name_and_nothing_else():
    assert guess_word("Baseball bat") == "Baseball bat"
    assert guess_word("tv") == "Television"
    assert guess_word("dog?") == "Dog"
    assert guess_word("dog house") is None
    assert guess_word(None) is None


def test_every_candidate_can_be_guessed_by_name_and_by_the_agents_form():
    for word in CANDIDATES:
        assert guess_of(f"Is it a {word.lower()}?") == word
        assert guess_of(guess_question(word)) == word
        assert guess_word(word) == word


def test_new_configs_carry_the_rules_version():
    assert RULES_VERSION == "2"
    assert ENGINE.new_config(3)["rules_version"] == RULES_VERSION
    assert game().rules_version == RULES_VERSION


def test_a_config_without_a_version_plays_by_version_1_and_replays_as_it_was_played():
    old = {"answer": "Television", "max_questions": 20}
    events = [{"type": "question", "seat": 0, "text": "Can you watch it?"}]
    state = ENGINE.replay(old, events)
    assert state.rules_version == "1"
    assert (state.turns[0].answer, state.turns[0].by, state.turns[0].guess) == (
        "No",
        "engine",
        "Watch",
    )
    with pytest.raises(IllegalMove, match="rules version 2"):
        ENGINE.apply(state, explicit("Television"))
    data = ENGINE.state_to_json(state)
    assert ENGINE.state_from_json(data) == state
    del data["rules_version"]  # a state saved before versions were kept
    assert ENGINE.state_from_json(data).rules_version == "1"


def test_an_unknown_rules_version_is_refused():
    with pytest.raises(ValueError, match="unknown rules_version"):
        ENGINE.initial({"answer": "Dog", "max_questions": 20, "rules_version": "9"})
    with pytest.raises(ValueError, match="unknown rules_version"):
        ENGINE.new_config(0, rules_version="0")


def test_the_rules_models_read_restate_the_papers_and_say_how_to_guess():
    from games.llm import render

    rules = render.rules_for_config("twenty-questions", ENGINE.new_config(0))
    assert "157 candidate words" in rules and "up to 20" in rules
    assert "Yes, No, or Invalid" in rules and "letters or spelling" in rules
    assert "To make a guess" in rules
    assert '("Is it a cat or a dog?") is not a guess' in rules
    assert guess_of("Is it a cat or a dog?") is None
    assert ", ".join(CANDIDATES) in rules
    for house_rule in ("log2", "reward", "earns", "names exactly one", "naming"):
        assert house_rule not in rules.lower()
    example = rules.split("for example ")[1].split(";")[0].strip('"')
    assert guess_of(example) == "Violin"


def test_each_repeating_class_of_the_grammar_reads_a_run_of_words_one_way_only():
    from games.twenty_questions.guesses import REPEATED, uniquely_readable

    assert set(REPEATED) == {"lead", "hedge", "tail"}
    for name, codes in REPEATED.items():
        assert uniquely_readable(codes), name
    assert not uniquely_readable(frozenset({("so",), ("then",), ("so", "then")}))
    assert not uniquely_readable(frozenset({("a", "b"), ("b", "c"), ("a",), ("c",)}))
    assert ("so", "then") not in REPEATED["lead"] and guess_of("So then, a dog?") == "Dog"


@pytest.mark.parametrize(
    "text",
    [
        "so then " * 13 + "dog big",  # took 27 s with "so then" in the lead class
        "then " * 27 + "dog big",
        "ok, " * 40 + "is it a dog?",
        "is it " * 13 + "dog, maybe?" + " hmm" * 3 + " big",
    ],
)
def test_a_hostile_question_is_decided_at_once(text):
    import time

    started = time.perf_counter()
    assert guess_of(text) is None
    assert time.perf_counter() - started < 0.5


def test_a_long_text_is_never_a_guess():
    assert guess_of("ok " * 26 + "is it a dog?") == "Dog"
    assert guess_of("ok " * 27 + "is it a dog?") is None
