"""The knowledge base behind the offline agents: complete, consistent, and usable as questions."""

from __future__ import annotations

import json

import pytest

from games.twenty_questions import CANDIDATES
from games.twenty_questions.engine import named_candidates
from games.twenty_questions.knowledge import CATEGORIES, FEATURES, PATH, has, load


def test_every_candidate_says_yes_or_no_to_every_feature():
    data = json.loads(PATH.read_text())
    assert list(data["words"]) == list(CANDIDATES)
    for word, entry in data["words"].items():
        assert sorted(entry["yes"] + entry["no"]) == sorted(data["features"]), word
    assert 25 <= len(FEATURES) <= 45


def test_every_candidate_has_a_category():
    assert set(CATEGORIES) == set(CANDIDATES)
    assert all(CATEGORIES.values())


def test_it_refuses_a_file_where_a_word_misses_a_feature(tmp_path):
    data = json.loads(PATH.read_text())
    data["words"]["Apple"]["no"].remove("vehicle")
    broken = tmp_path / "knowledge.json"
    broken.write_text(json.dumps(data))
    with pytest.raises(ValueError, match="Apple must list every feature"):
        load(broken)


@pytest.mark.parametrize(
    ("word", "feature", "value"),
    [
        ("Dog", "animal", True),
        ("Tree", "living", True),
        ("Apple", "fruit", True),
        ("Tomato", "vegetable", True),
        ("Television", "electric", True),
        ("Rock", "man_made", False),
        ("Ring", "jewelry", True),
        ("Ring", "worn", True),
        ("Elephant", "bigger_than_person", True),
        ("Pen", "handheld", True),
        ("Truck", "wheels", True),
        ("Violin", "musical_instrument", True),
        ("Knife", "sharp", True),
        ("Ocean", "natural_place", True),
        ("Couch", "furniture", True),
        ("Spoon", "metal", True),
        ("Hammer", "food", False),
    ],
)
def test_it_knows_the_plain_facts(word, feature, value):
    assert has(word, feature) is value


def test_no_feature_question_names_a_candidate():
    # a question that names one candidate would be read by the engine as a guess
    for feature in FEATURES.values():
        assert named_candidates(feature.question) == [], feature.question


def test_every_feature_holds_for_some_words_and_not_for_others():
    for feature in FEATURES.values():
        assert 0 < len(feature.words) < len(CANDIDATES), feature.name
