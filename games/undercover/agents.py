"""The offline Who is Undercover agent: the no-network default and the reference line on plots.

It describes its word with the phrases in :mod:`games.undercover.words` and votes for the seat whose
clues share the fewest words with those phrases. It follows the paper's two strategy tips in their
plainest form: when the clues of two or more other seats do not fit its word, it takes itself for
the difference, guesses the word the others hold, and describes that word from then on.
"""

from __future__ import annotations

import random
from collections import Counter
from functools import cache, lru_cache
from itertools import combinations

from games.base import Event, Observation
from games.undercover.engine import clue_problem, normalise
from games.undercover.words import DESCRIPTORS

NAMES = ("descriptor", "kb", "random")  # one agent; the aliases let `offline:kb` serve every game

_STOP_TEXT = """a an and are as at be by for from has have in is it its of on or the to with you your
one who what when where which can made used very"""
_STOP_WORDS = frozenset(_STOP_TEXT.split())


@lru_cache(maxsize=8192)
def content_words(text: str) -> frozenset[str]:
    """The meaningful words of ``text``, lower case, with a trailing plural "s" dropped."""
    words = set()
    for token in normalise(text).split():
        if len(token) < 3 or token in _STOP_WORDS:
            continue
        words.add(token[:-1] if token.endswith("s") and len(token) > 3 else token)
    return frozenset(words)


class DescriptorAgent:
    """Gives the next unused descriptor of its word; votes for the clues that fit its word least."""

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed

    async def act(self, observation: Observation) -> Event:
        if observation["phase"] == "vote":
            return self.vote(observation)
        return self.clue(observation)

    def phrases(self, word: str) -> list[str]:
        """Single descriptors first, then pairs of them, in an order fixed by the seed."""
        single = list(DESCRIPTORS.get(word, ()))
        random.Random(f"{self.seed}:{word}").shuffle(single)
        return single + [f"{first}, and {second}" for first, second in combinations(single, 2)]

    def clue(self, observation: Observation) -> Event:
        word = self.believed_word(observation)
        said = frozenset(
            normalise(clue["text"]) for clue in observation["clues"] if clue["text"] is not None
        )
        rejected = observation.get("rejected")
        refused = rejected["action"].get("text") if rejected else None
        for phrase in self.phrases(word):
            if phrase != refused and clue_problem(phrase, observation["word"], said) is None:
                return {"type": "clue", "text": phrase}
        return {"type": "clue", "text": None}

    def believed_word(self, observation: Observation) -> str:
        """Its own word, or the word it guesses the others hold once their clues say it differs."""
        word = observation["word"]
        spoke = {clue["seat"] for clue in observation["clues"] if clue["text"] is not None}
        fits = _fits(observation, word, [seat for seat in _others(observation) if seat in spoke])
        if sum(1 for fit in fits.values() if fit < 0.5) < 2:
            return word
        heard: set[str] = set()
        for clue in observation["clues"]:
            if clue["seat"] != observation["seat"] and clue["text"] is not None:
                heard |= content_words(clue["text"])
        return _guess_word(frozenset(heard), word)

    def vote(self, observation: Observation) -> Event:
        if observation.get("rejected"):
            return {"type": "vote", "target": None}
        fits = _fits(observation, self.believed_word(observation), _targets(observation))
        if not fits:
            return {"type": "vote", "target": None}
        lowest = min(fits.values())
        suspects = [seat for seat, fit in fits.items() if fit == lowest]
        rng = random.Random(f"{self.seed}:{observation['seat']}:{observation['vote_round']}")
        return {"type": "vote", "target": rng.choice(suspects)}


@cache
def _vocabulary(word: str) -> frozenset[str]:
    words = set(content_words(word))
    for phrase in DESCRIPTORS.get(word, ()):
        words |= content_words(phrase)
    return frozenset(words)


@cache
def _words_using() -> dict[str, list[str]]:
    """Content word -> the words whose descriptors use it, for a fast best-match search."""
    index: dict[str, list[str]] = {}
    for word in DESCRIPTORS:
        for token in _vocabulary(word):
            index.setdefault(token, []).append(word)
    return index


def _guess_word(heard: frozenset[str], own: str) -> str:
    """The word (not ``own``) whose descriptors share the most words with ``heard``; the first in
    table order wins a tie."""
    counts: Counter[str] = Counter()
    for token in heard:
        counts.update(_words_using().get(token, ()))
    counts.pop(own, None)
    if not counts:
        return next(word for word in DESCRIPTORS if word != own)
    best = max(counts.values())
    order = list(DESCRIPTORS)
    return min((word for word, n in counts.items() if n == best), key=order.index)


def _fits(observation: Observation, word: str, seats: list[int]) -> dict[int, float]:
    """Per seat, the share of the words in its clues that also describe ``word`` (0 if silent)."""
    vocabulary = _vocabulary(word)
    fits = {}
    for seat in seats:
        words: set[str] = set()
        for clue in observation["clues"]:
            if clue["seat"] == seat and clue["text"] is not None:
                words |= content_words(clue["text"])
        fits[seat] = len(words & vocabulary) / len(words) if words else 0.0
    return fits


def _others(observation: Observation) -> list[int]:
    return [seat for seat in observation["alive"] if seat != observation["seat"]]


def _targets(observation: Observation) -> list[int]:
    for action in observation["legal_actions"]:
        if action["type"] == "vote":
            return list(action["targets"])
    return _others(observation)


def make_offline_agent(name: str, *, role: str = "player", seed: int = 0) -> DescriptorAgent:
    """The offline agent called ``name`` (``descriptor``, or its aliases ``kb`` and ``random``)."""
    if name not in NAMES:
        raise ValueError(f"no offline undercover agent {name!r}; choose one of {', '.join(NAMES)}")
    return DescriptorAgent(seed=seed)
