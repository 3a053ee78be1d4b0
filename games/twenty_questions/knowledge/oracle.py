"""The offline oracle: the answer to a question for a word, the candidates a question says Yes
for, and the yes/no features the offline questioner asks (computed on first use)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from games.twenty_questions import CANDIDATES
from games.twenty_questions.knowledge.base import knowledge_base
from games.twenty_questions.knowledge.reader import read
from games.twenty_questions.rules import INVALID, NO, YES


@dataclass(frozen=True)
class Feature:
    name: str
    question: str
    words: frozenset[str]  # the candidates for which the answer is Yes


def yes_set(question: str) -> frozenset[str] | None:
    """The candidates for which the answer to ``question`` is Yes; None when it is Invalid."""
    test = read(question)
    if test is None:
        return None
    return frozenset(word for word in CANDIDATES if test(word))


def answer(question: str, word: str) -> str:
    """The offline oracle's reply to ``question`` when the answer is ``word``."""
    test = read(question)
    if test is None:
        return INVALID
    return YES if test(word) else NO


@cache
def features() -> dict[str, Feature]:
    """The offline questioner's features by name, each with the words it holds for."""
    kb = knowledge_base()
    features = {}
    for name, question in kb.data["features"].items():
        words = yes_set(question)
        if words is None:
            raise ValueError(f"the oracle cannot read its own feature question {question!r}")
        features[name] = Feature(name=name, question=question, words=words)
    return features


def has(word: str, feature: str) -> bool:
    """Whether ``feature`` holds for candidate ``word``."""
    return word in features()[feature].words


def __getattr__(name: str):
    """``FEATURES``: :func:`features`, computed when first asked for."""
    if name == "FEATURES":
        return features()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
