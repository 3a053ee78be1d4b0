"""Offline Twenty Questions agents: deterministic, no network, the reference lines on every plot.

- ``offline:kb`` (oracle) answers from the knowledge base. It understands questions about a
  feature in common phrasings ("Can you eat it?", "Is it bigger than a breadbox?"), questions
  naming a set of candidates ("Is it one of: apple, banana, mango?", "Is it a cat or a dog?") and
  guesses; anything else, and any question about letters or spelling, gets Invalid.
- ``offline:infogain`` (questioner) asks the question that best halves the candidates still
  possible, the "perfect binary questioning" line of the paper's human-study figure.
- ``offline:random`` (questioner) asks random feature questions and makes random guesses.

Both questioners read the meaning of earlier questions with the oracle's own parser
(:func:`yes_set`), so they keep no memory of their own and can pick up any game halfway.
"""

from __future__ import annotations

import random
import re
from typing import Any

from games.base import Event, Observation
from games.twenty_questions import CANDIDATES
from games.twenty_questions.engine import MAX_QUESTION_CHARS, guess_text, scan, tokens
from games.twenty_questions.knowledge import FEATURES

ALL = frozenset(CANDIDATES)

_LETTERS = re.compile(
    r"\b(letters?|spell\w*|spelt|alphabet\w*|syllables?|vowels?|consonants?|rhymes?|initials?"
    r"|(starts?|begins?|ends?|starting|beginning|ending) with|characters? long)\b"
    r"|['\"][a-z]['\"]"
)
# Words that may surround a list of names without changing its meaning.
_FILLER = frozenset(
    tokens(
        "is it a an the one of these those following either or and any maybe perhaps could be "
        "among in this list set group word words answer candidate candidates option options "
        "choices something thing does belong to , : ; . ? ! / ( )"
    )
)


def _keyword_table() -> dict[tuple[str, ...], list[tuple[str, bool]]]:
    """Token sequence -> the features it asks about, with False where it means the opposite."""
    table: dict[tuple[str, ...], list[tuple[str, bool]]] = {}
    for feature in FEATURES.values():
        for phrase in feature.keywords:
            table.setdefault(tuple(tokens(phrase)), []).append((feature.name, True))
        for phrase in feature.opposites:
            table.setdefault(tuple(tokens(phrase)), []).append((feature.name, False))
    return table


_KEYWORDS = _keyword_table()
_LONGEST_KEYWORD = max(len(key) for key in _KEYWORDS)


def _features_asked(words: list[str]) -> list[tuple[str, bool]]:
    """The (feature, polarity) pairs a question mentions, reading the longest phrase first."""
    asked: list[tuple[str, bool]] = []
    i, n = 0, len(words)
    while i < n:
        for length in range(min(_LONGEST_KEYWORD, n - i), 0, -1):
            hits = _KEYWORDS.get(tuple(words[i : i + length]))
            if hits is not None:
                asked.extend(hit for hit in hits if hit not in asked)
                i += length
                break
        else:
            i += 1
    # "smaller than a breadbox": the size word sets the direction, the object only names the
    # feature, so a feature mentioned both ways is asked about in reverse.
    reversed_ = {name for name, polarity in asked if not polarity}
    return [(name, polarity) for name, polarity in asked if not (polarity and name in reversed_)]


def yes_set(question: str) -> frozenset[str] | None:
    """The candidates for which the answer to ``question`` is Yes; None when it is Invalid.

    A question that only names candidates asks whether the answer is one of them. Otherwise the
    features it mentions decide: all of them must hold, or any of them if the question says "or".
    """
    lowered = question.lower()
    if _LETTERS.search(lowered):
        return None
    named, rest = scan(question)
    if named and all(word in _FILLER for word in rest):
        return frozenset(named)
    asked = _features_asked(rest)
    if not asked:
        return None
    sets = [
        FEATURES[name].words if polarity else ALL - FEATURES[name].words for name, polarity in asked
    ]
    if "or" in rest:
        return frozenset().union(*sets)
    return frozenset.intersection(*sets)


def answer_question(question: str, answer: str) -> str:
    """The offline oracle's reply: "Yes", "No" or "Invalid"."""
    holders = yes_set(question)
    if holders is None:
        return "Invalid"
    return "Yes" if answer in holders else "No"


def remaining(history: list[dict[str, Any]]) -> list[str]:
    """Candidates (in paper order) still consistent with every Yes and No answered so far."""
    left = set(CANDIDATES)
    for turn in history:
        if turn["answer"] not in ("Yes", "No"):
            continue
        holders = yes_set(turn["question"])
        if holders is None:
            continue
        left = left & holders if turn["answer"] == "Yes" else left - holders
    return [word for word in CANDIDATES if word in left]


def guess_question(word: str) -> str:
    """A question the engine reads as a guess of ``word`` whatever the word ("Is it Orange?"
    would ask about the colour)."""
    return guess_text(word)


def set_question(words: list[str]) -> str:
    return f"Is it one of: {', '.join(words)}?"


class KnowledgeOracle:
    """``offline:kb``: answers every question from the knowledge base."""

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed

    async def act(self, observation: Observation) -> Event:
        if observation.get("rejected"):
            return {"type": "answer", "answer": "Invalid"}
        reply = answer_question(observation["question"] or "", observation["answer"])
        return {"type": "answer", "answer": reply}


class InfoGainQuestioner:
    """``offline:infogain``: asks the feature or set question whose Yes side is closest to half of
    the candidates still possible; names the last one left."""

    def __init__(self, seed: int = 0) -> None:
        self.rng = random.Random(seed)

    async def act(self, observation: Observation) -> Event:
        asked = {turn["question"] for turn in observation["history"]}
        rejected = observation.get("rejected")
        if rejected:
            asked.add(rejected["action"].get("text"))
        left = remaining(observation["history"])
        if not left:  # the answers contradict the knowledge base; fall back to guessing
            left = [word for word in CANDIDATES if guess_question(word) not in asked]
        return {"type": "question", "text": self.choose(left, asked)}

    def choose(self, left: list[str], asked: set[str]) -> str:
        if len(left) <= 2:
            return guess_question(left[0])
        half = len(left) / 2
        options: list[tuple[float, float, str]] = []  # (imbalance, tie-break, question)
        pool = set(left)
        for feature in FEATURES.values():
            yes = len(feature.words & pool)
            if 0 < yes < len(left) and feature.question not in asked:
                options.append((abs(yes - half), self.rng.random(), feature.question))
        order = left[:]
        self.rng.shuffle(order)
        size = len(left) // 2
        while size >= 2:
            text = set_question(order[:size])
            if len(text) <= MAX_QUESTION_CHARS:
                options.append((abs(size - half), self.rng.random(), text))
                break
            size -= 1
        if not options:
            return guess_question(left[0])
        return min(options)[2]


class RandomQuestioner:
    """``offline:random``: a coin flip between a random unasked feature question and a guess of a
    random candidate not yet named."""

    def __init__(self, seed: int = 0) -> None:
        self.rng = random.Random(seed)

    async def act(self, observation: Observation) -> Event:
        asked = {turn["question"] for turn in observation["history"]}
        features = [f.question for f in FEATURES.values() if f.question not in asked]
        guesses = [guess_question(w) for w in CANDIDATES if guess_question(w) not in asked]
        pool = features if features and self.rng.random() < 0.5 else guesses
        return {"type": "question", "text": self.rng.choice(pool)}


def make_offline_agent(name: str, *, role: str, seed: int = 0) -> Any:
    """Build ``offline:<name>`` for a seat with label ``role`` ("questioner" or "oracle")."""
    builders = {
        ("kb", "oracle"): KnowledgeOracle,
        ("infogain", "questioner"): InfoGainQuestioner,
        ("random", "questioner"): RandomQuestioner,
    }
    builder = builders.get((name, role))
    if builder is None:
        choices = ", ".join(f"offline:{n} ({r})" for n, r in builders)
        raise ValueError(
            f"no offline twenty-questions agent {name!r} for the {role}; choose {choices}"
        )
    return builder(seed=seed)
