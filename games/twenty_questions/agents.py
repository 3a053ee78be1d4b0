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
from typing import Any

from games.base import Event, Observation
from games.twenty_questions import CANDIDATES
from games.twenty_questions.engine import MAX_QUESTION_CHARS
from games.twenty_questions.knowledge import oracle
from games.twenty_questions.names import guess_text
from games.twenty_questions.rules import INVALID, NO, YES


def yes_set(question: str) -> frozenset[str] | None:
    """The candidates for which the answer to ``question`` is Yes; None when it is Invalid."""
    return oracle.yes_set(question)


def answer_question(question: str, answer: str) -> str:
    """The offline oracle's reply: "Yes", "No" or "Invalid"."""
    return oracle.answer(question, answer)


def remaining(history: list[dict[str, Any]]) -> list[str]:
    """Candidates (in paper order) still consistent with every Yes and No answered so far."""
    left = set(CANDIDATES)
    for turn in history:
        if turn["answer"] not in (YES, NO):
            continue
        holders = yes_set(turn["question"])
        if holders is None:
            continue
        left = left & holders if turn["answer"] == YES else left - holders
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
            return {"type": "answer", "answer": INVALID}
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
        for feature in oracle.features().values():
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
        features = [f.question for f in oracle.features().values() if f.question not in asked]
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
