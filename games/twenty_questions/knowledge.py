"""What the offline agents know about the 157 words: a category and a yes/no value for every
feature, read from ``knowledge.json`` so the facts can be reviewed and corrected without code.

Each feature also carries the question the offline questioner asks about it and the words and
phrases (``keywords``, and ``opposites`` that mean the reverse, such as "small" for "bigger than a
breadbox") by which the offline oracle recognises a question about it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from games.twenty_questions import CANDIDATES

PATH = Path(__file__).with_name("knowledge.json")


@dataclass(frozen=True)
class Feature:
    name: str
    question: str
    keywords: tuple[str, ...]
    opposites: tuple[str, ...]
    words: frozenset[str]  # the candidates for which the feature holds


def load(path: Path = PATH) -> tuple[dict[str, Feature], dict[str, str]]:
    """Read and check the knowledge base; return ``(features by name, category by word)``.

    Every candidate must say yes or no to every feature, exactly once, so a feature added to the
    file cannot silently default to "no" for the words nobody classified.
    """
    data = json.loads(path.read_text(encoding="utf-8"))
    names = list(data["features"])
    if list(data["words"]) != list(CANDIDATES):
        raise ValueError(
            f"{path.name}: the words must be the {len(CANDIDATES)} candidates in order"
        )
    holders: dict[str, set[str]] = {name: set() for name in names}
    for word, entry in data["words"].items():
        yes, no = entry["yes"], entry["no"]
        if sorted(yes + no) != sorted(names) or set(yes) & set(no):
            raise ValueError(f"{path.name}: {word} must list every feature once, in yes or in no")
        for name in yes:
            holders[name].add(word)
    features = {
        name: Feature(
            name=name,
            question=spec["question"],
            keywords=tuple(spec["keywords"]),
            opposites=tuple(spec["opposites"]),
            words=frozenset(holders[name]),
        )
        for name, spec in data["features"].items()
    }
    categories = {word: entry["category"] for word, entry in data["words"].items()}
    return features, categories


FEATURES, CATEGORIES = load()


def has(word: str, feature: str) -> bool:
    """Whether ``feature`` holds for candidate ``word``."""
    return word in FEATURES[feature].words
