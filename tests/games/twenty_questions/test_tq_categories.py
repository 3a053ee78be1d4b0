"""The offline oracle on the category questions people open with, over all 157 words.

``category_answers.json`` holds careful answers written word by word (not read off the
knowledge base): for each category, the words for which the answer is Yes, and the few words
on which careful people disagree. Every phrasing of a category must give exactly those answers
(either answer on the disputed words), so "Is it man-made?" and "Is it made by humans?" cannot
part ways.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from games.twenty_questions import CANDIDATES
from games.twenty_questions.agents import answer_question

TABLE = json.loads(Path(__file__).with_name("category_answers.json").read_text())["categories"]
CASES = [(category, question) for category, spec in TABLE.items() for question in spec["questions"]]


def test_the_table_names_only_candidates_and_covers_the_categories_people_open_with():
    words = set(CANDIDATES)
    for category, spec in TABLE.items():
        assert set(spec["yes"]) <= words, category
        assert set(spec["either"]) <= words, category
        assert not set(spec["yes"]) & set(spec["either"]), category
        assert len(spec["questions"]) >= 3, category
    assert len(CANDIDATES) == 157
    assert set(TABLE) >= {
        "man_made", "living", "animal", "vehicle", "instrument", "furniture", "clothing",
        "jewelry", "kitchen", "tool", "electric", "fruit",
    }  # fmt: skip


@pytest.mark.parametrize(("category", "question"), CASES)
def test_each_phrasing_answers_every_word_as_the_table_does(category, question):
    spec = TABLE[category]
    yes, either = set(spec["yes"]), set(spec["either"])
    wrong = []
    for word in CANDIDATES:
        reply = answer_question(question, word)
        if word in either and reply in ("Yes", "No"):
            continue
        expected = "Yes" if word in yes else "No"
        if reply != expected:
            wrong.append(f"{word}: {reply}, not {expected}")
    assert not wrong, f"{question!r}: " + "; ".join(wrong)


def test_the_papers_opening_question_is_yes_for_everything_in_the_kitchen():
    for word in ("Fork", "Spoon", "Cup", "Plate", "Bowl", "Pan", "Cooking pot", "Chopstick"):
        for question in ("Is it man-made?", "Is it made by humans?", "Is it manufactured?"):
            assert answer_question(question, word) == "Yes", (question, word)
