"""The shared case sequence: the same configs for humans and models, no repeats within a cycle."""

from __future__ import annotations

import pytest

from games.cases import case_config, case_item
from games.twenty_questions import CANDIDATES
from games.undercover.words import PAIRS


@pytest.mark.parametrize("game", ["twenty-questions", "undercover"])
def test_a_sequence_repeats_no_item_within_a_cycle(game):
    size = len(CANDIDATES) if game == "twenty-questions" else len(PAIRS)
    items = [case_item(game, 7, k) for k in range(size)]
    assert len(set(items)) == size


def test_a_longer_sequence_goes_on_with_a_fresh_shuffle():
    n = len(CANDIDATES)
    first = [case_item("twenty-questions", 3, k) for k in range(n)]
    second = [case_item("twenty-questions", 3, k) for k in range(n, 2 * n)]
    assert sorted(first) == sorted(second)
    assert first != second


def test_the_same_seed_and_case_give_the_same_config_every_time():
    assert case_config("undercover", 11, 4, players=5) == case_config(
        "undercover", 11, 4, players=5
    )
    assert case_config("twenty-questions", 11, 4) == case_config("twenty-questions", 11, 4)
    assert case_config("twenty-questions", 11, 4) != case_config("twenty-questions", 12, 4)


def test_thirty_two_cases_are_thirty_two_different_words():
    words = {case_config("twenty-questions", 0, k)["answer"] for k in range(32)}
    assert len(words) == 32


def test_a_negative_case_is_refused():
    with pytest.raises(ValueError):
        case_item("twenty-questions", 0, -1)
