"""The knowledge base behind the offline agents: complete, consistent, and usable as questions."""

from __future__ import annotations

import json

import pytest

from games.twenty_questions import CANDIDATES
from games.twenty_questions.knowledge.base import CATEGORIES, KB, PATH, load
from games.twenty_questions.knowledge.oracle import FEATURES, has
from games.twenty_questions.names import named_candidates


def test_every_candidate_has_facts_a_size_and_a_weight():
    data = json.loads(PATH.read_text())
    assert list(data["words"]) == list(CANDIDATES)
    for word in CANDIDATES:
        assert len(KB.facts[word]) >= 15, word
        assert KB.size[word] > 0 and KB.weight[word] > 0, word
    assert 25 <= len(FEATURES) <= 45


def test_every_candidate_has_a_category():
    assert set(CATEGORIES) == set(CANDIDATES)
    assert all(CATEGORIES.values())


def test_it_refuses_a_file_where_a_word_has_no_size(tmp_path):
    data = json.loads(PATH.read_text())
    data["words"]["Apple"] = data["words"]["Apple"].replace("size=", "length=")
    broken = tmp_path / "knowledge.json"
    broken.write_text(json.dumps(data))
    with pytest.raises(ValueError, match="Apple needs size= and weight="):
        load(broken)


def test_it_refuses_a_word_of_an_unknown_class(tmp_path):
    data = json.loads(PATH.read_text())
    data["words"]["Apple"] = data["words"]["Apple"].replace("class: fruit", "class: fruits")
    broken = tmp_path / "knowledge.json"
    broken.write_text(json.dumps(data))
    with pytest.raises(ValueError, match="unknown class 'fruits'"):
        load(broken)


def test_a_word_can_drop_a_fact_of_its_class():
    # Boots are clothing, but not soft; a banana is a fruit without seeds worth mentioning
    assert ("is", "soft") in KB.facts["Shirt"]
    assert ("is", "soft") not in KB.facts["Boots"]
    assert ("has", "seed") not in KB.facts["Banana"]


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
