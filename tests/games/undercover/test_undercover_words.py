"""The word pairs and descriptors the game and its offline agent draw on."""

from __future__ import annotations

from games.undercover.engine import clue_problem, normalise
from games.undercover.words import DESCRIPTORS, PAIRS

ROLE_LABELS = ("difference", "normal", "undercover", "civilian")


def partners(word):
    return [b if a == word else a for a, b in PAIRS if word in (a, b)]


def test_there_are_at_least_a_hundred_pairs_and_no_pair_twice():
    keys = [frozenset(normalise(word) for word in pair) for pair in PAIRS]
    assert len(PAIRS) >= 100
    assert len(set(keys)) == len(keys)
    assert all(len(key) == 2 for key in keys)


def test_every_word_has_six_to_ten_distinct_descriptors():
    words = {word for pair in PAIRS for word in pair}
    assert set(DESCRIPTORS) == words
    for word, phrases in DESCRIPTORS.items():
        assert 6 <= len(phrases) <= 10, word
        assert len({normalise(phrase) for phrase in phrases}) == len(phrases), word


def test_descriptors_are_allowed_clues_that_name_neither_the_word_nor_its_partner():
    for word, phrases in DESCRIPTORS.items():
        for phrase in phrases:
            for named in [word, *partners(word)]:
                assert clue_problem(phrase, named, frozenset()) is None, (word, phrase, named)


def test_descriptors_never_mention_a_role():
    for word, phrases in DESCRIPTORS.items():
        for phrase in phrases:
            assert not any(label in phrase.lower() for label in ROLE_LABELS), (word, phrase)
