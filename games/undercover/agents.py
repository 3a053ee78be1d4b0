"""The offline Who is Undercover agent: the no-network default and the reference line on plots.

It plays by the rules people are given. Its clues are only ever descriptors of its own word (the
phrases in :mod:`games.undercover.words`); it never takes up the word it hears from others, and it
never repeats or recombines a clue already given in the game, by any seat: a descriptor whose
words were all said in one earlier clue, or that contains an earlier clue's phrase, is skipped,
and when none is left it passes. At a table with people (``sentences``) it words each clue as
people word theirs, in the seat's own style (:mod:`games.undercover.wording`), counts a clue
said in other words ("you pour it over cereal" after "poured over cereal") as a repeat, and, its
descriptors spent, gives a vague clue instead of passing. It votes from evidence: it infers the other word from the clues
it heard (the word whose descriptors they share most words with), and for each player weighs how
much better their clues fit that word than its own. A clue that fits neither, the way people often
talk, is weak evidence either way, so a player is not voted out for describing the word in their
own words. With no clear evidence against anyone it abstains in the first vote; from the second
vote on it votes, as people are asked to, for the player whose clues fit its own word least, so
that a game ends by a vote rather than by the cap. ``benchmarks/undercover_fairness.py`` measures
this next to a scripted person.
"""

from __future__ import annotations

import random
import re
import statistics
from collections import Counter
from functools import cache, lru_cache

from games.base import Event, Observation
from games.undercover.engine import clue_problem
from games.undercover.repeats import FORM_STOP_WORDS, STOP_WORDS, normalise, stems
from games.undercover.wording import PAIR_SHARE, Style, render, wordings
from games.undercover.words import DESCRIPTORS

NAMES = ("descriptor", "kb", "random")  # one agent; the aliases let `offline:kb` serve every game

# Pseudo-words added to every clue's length: a clue with one matching word among many, or a short
# vague one, counts for less than a clue full of a word's vocabulary.
VAGUENESS = 2.0
# Evidence a player must show before a vote against them: at least one clue that leans clearly
# towards the other word.
MIN_EVIDENCE = 0.15


@lru_cache(maxsize=8192)
def content_words(text: str) -> frozenset[str]:
    """The meaningful words of ``text``, lower case, with a trailing plural "s" dropped."""
    words = set()
    for token in normalise(text).split():
        if len(token) < 3 or token in STOP_WORDS:
            continue
        words.add(token[:-1] if token.endswith("s") and len(token) > 3 else token)
    return frozenset(words)


class DescriptorAgent:
    """Gives the next unused descriptor of its own word; votes for the player whose clues point
    most clearly to the other word, or abstains when nobody's do."""

    def __init__(self, seed: int = 0, *, sentences: bool = False, language: str = "en") -> None:
        self.seed = seed
        # At a table with people (``sentences``) it keeps their rules of form: each clue is a
        # sentence, and it never passes, since a person's clue form cannot.
        self.sentences = sentences
        # Its descriptors are English: in another language (only ever as a failed model seat's
        # stand-in, :mod:`games.languages`) it gives that language's vague sentences alone.
        self.language = language

    async def act(self, observation: Observation) -> Event:
        if observation["phase"] == "vote":
            return self.vote(observation)
        return self.clue(observation)

    def phrases(self, word: str) -> list[str]:
        """Its word's descriptors, in an order fixed by the seed."""
        single = list(DESCRIPTORS.get(word, ()))
        random.Random(f"{self.seed}:{word}").shuffle(single)
        return single

    def clue(self, observation: Observation) -> Event:
        word = observation["word"]
        earlier = [clue["text"] for clue in observation["clues"] if clue["text"] is not None]
        said = frozenset(normalise(text) for text in earlier)
        told = tuple(earlier)  # the rules' own repeat check, in other words too (version 2)
        rejected = observation.get("rejected")
        refused = rejected["action"].get("text") if rejected else None

        def allowed(text: str) -> bool:
            return (
                text != refused
                and clue_problem(text, word, said, told) is None
                and not repeats(text, earlier, stemmed=self.sentences)
            )

        if not self.sentences:  # a table of agents: its descriptors as they are
            for phrase in self.phrases(word):
                if allowed(phrase):
                    return {"type": "clue", "text": phrase}
            return {"type": "clue", "text": None}
        # At a table with people: worded as people word theirs (games.undercover.wording), in
        # the seat's own style, never a clue said before at the table in any wording.
        rng = random.Random(f"{self.seed}:{word}:form")
        own = [
            clue["text"]
            for clue in observation["clues"]
            if clue["seat"] == observation["seat"] and clue["text"] is not None
        ]
        style = Style.of(own, rng)
        english = self.language == "en"
        phrases = self.phrases(word) if english else []
        for i, phrase in enumerate(phrases):
            extra = phrases[i + 1] if i + 1 < len(phrases) else None
            if extra is None or rng.random() >= PAIR_SHARE or not allowed(extra):
                extra = None
            for wording in wordings(phrase, rng):
                for text in (render(wording, rng, style, extra), render(wording, rng, style)):
                    if allowed(text):
                        return {"type": "clue", "text": text}
        # Its descriptors are spent (or it speaks another language): a vague clue, as people
        # give, each said once at a table.
        spare = vague_sentences(self.language)
        for sentence in rng.sample(spare, len(spare)):
            text = style.apply(sentence, rng)
            if (
                text != refused
                and clue_problem(text, word, said, told) is None
                and not said_in(text, said)
            ):
                return {"type": "clue", "text": text}
        return {"type": "clue", "text": None}

    def evidence(self, observation: Observation) -> dict[int, float]:
        """Per other player still in the game: how much better their clues fit the other word
        than this seat's own (positive: they seem to hold the other word)."""
        own = observation["word"]
        other = other_word(observation)
        evidence = {}
        for seat in _others(observation):
            score = 0.0
            for clue in observation["clues"]:
                if clue["seat"] == seat and clue["text"] is not None:
                    words = content_words(clue["text"])
                    size = len(words) + VAGUENESS
                    score += (
                        len(words & _vocabulary(other)) - len(words & _vocabulary(own))
                    ) / size
            evidence[seat] = score
        return evidence

    def vote(self, observation: Observation) -> Event:
        targets = _targets(observation)
        if observation.get("rejected") or not targets:
            return {"type": "vote", "target": None}
        # Only a player whose clues lean clearly to the other word is a suspect; one it merely
        # cannot read (vague clues, other words than its descriptors) is not. When most players
        # lean that way this seat is likely the difference itself, and the rule still holds: it
        # votes for the clearest of them, never for the player it cannot read.
        # Evidence counts against a player only as far as it stands out from the table's: words
        # that every player uses say nothing about who holds which word.
        evidence = self.evidence(observation)
        usual = statistics.median(evidence.values()) if evidence else 0.0
        suspects = {
            seat: score
            for seat, score in evidence.items()
            if score >= MIN_EVIDENCE and score - usual >= MIN_EVIDENCE and seat in targets
        }
        if not suspects:
            if observation["vote_round"] <= 1:
                return {"type": "vote", "target": None}
            # Later votes: no one stands out, but the game has to go on. The player whose clues
            # fit this seat's own word least is the likeliest to hold the other one.
            suspects = {seat: score for seat, score in evidence.items() if seat in targets}
        best = max(suspects.values())
        rng = random.Random(f"{self.seed}:{observation['seat']}:{observation['vote_round']}")
        return {"type": "vote", "target": rng.choice([s for s, v in suspects.items() if v == best])}


# Clues that describe nothing in particular, for a seat whose descriptors are spent, written as
# people type them (the seat's style adds its capital and stop), opening as people's clues open
# (mostly with a describing word, now and then with "you", "it", "in", "I"): each is said once
# at a table, and none is another with a lead-in.
VAGUE_SENTENCES = (
    "pretty common",
    "well known",
    "familiar to most",
    "not rare",
    "quite popular",
    "everyday thing",
    "hard to describe",
    "simple enough",
    "nothing special",
    "easy to find",
    "very normal",
    "seen it loads",
    "loved by many",
    "depends on the type",
    "many kinds",
    "comes in different sizes",
    "around for ages",
    "a classic",
    "known all over",
    "popular with kids",
    "not for everyone",
    "nice sometimes",
    "found in many places",
    "used a lot",
    "no big deal",
    "usual thing",
    "widely known",
    "big in some countries",
    "ordinary really",
    "normal stuff",
    "everybody knows it",
    "lots of types",
    "common enough",
    "recognisable",
    "typical",
    "people like it",
    "sort of everyday",
    "basic",
    "plenty of them around",
    "often talked about",
    "quite ordinary",
    "kids know it",
    "no surprise there",
    "mainstream",
    "different kinds exist",
    "you see it a lot",
    "you'd recognise it",
    "you know this one",
    "you come across it often",
    "it's everywhere",
    "it's nothing unusual",
    "it can be nice",
    "it has a few kinds",
    "in most countries",
    "in films sometimes",
    "with a few varieties",
    "I like it",
    "I see it often",
    "my family knows it",
    "you'd know it if you saw it",
    "most people have seen one at some point",
    "I have come across it quite a lot",
    "depends a lot on which kind you get",
    "some people love it and some don't",
    "there are a few different kinds of it",
    "my whole family has an opinion about it",
    "nothing you would be surprised to see",
    "quite easy to picture in your head",
    "not something you see only once a year",
    "it shows up in a lot of places",
    "people from lots of countries know it",
)


@cache
def vague_sentences(language: str = "en") -> tuple[str, ...]:
    """Every vague clue of ``language``: :data:`VAGUE_SENTENCES` in English; in another language
    the sentences of :func:`games.languages.undercover_sentences`."""
    if language != "en":
        from games.languages import undercover_sentences

        return undercover_sentences(language)
    return VAGUE_SENTENCES


_PARTS = re.compile(r"[,;:.!?]+|\band\b|\bbut\b|\balso\b")


def phrases_of(text: str) -> list[frozenset[str]]:
    """The content words of each phrase of a clue: "rescue, and hoses" is two phrases."""
    parts = [content_words(part) for part in _PARTS.split(text.lower())]
    return [part for part in parts if part]


def repeats(text: str, earlier: list[str], stemmed: bool = False) -> bool:
    """Whether ``text`` repeats or recombines a clue in ``earlier``: all its words were said in
    one earlier clue, or one of its phrases is an earlier phrase (the same content words), or it
    contains an earlier phrase of two or more words. ``stemmed``, as at a table with people:
    words count as one by their stem ("poured over cereal" is "you pour it over cereal"), and a
    clue that holds all of an earlier one's words ("cereal", "poured over cereal") repeats it."""
    split = _stemmed_phrases if stemmed else phrases_of
    words = _stems(text) if stemmed else content_words(text)
    if not words:
        return False
    own = split(text)
    for clue in earlier:
        before = _stems(clue) if stemmed else content_words(clue)
        if words <= before:
            return True
        # with people, a clue that says an earlier one again with more words is a repeat too
        if stemmed and before and before <= words:
            return True
        # a phrase of one word ("red") may be said again in a new phrase ("red fruit")
        if any(part in own or (len(part) > 1 and part <= words) for part in split(clue)):
            return True
    return False


def said_in(text: str, said: frozenset[str]) -> bool:
    """Whether a vague clue says one of the (normalised) clues ``said`` again: the same words,
    or that clue inside it or it inside that clue. Vague clues are mostly words that say
    nothing ("most people know it"), so they are compared whole, not by their meaningful words."""
    plain = f" {normalise(text)} "
    return any(f" {old} " in plain or plain in f" {old} " for old in said if old)


@lru_cache(maxsize=8192)
def _stems(text: str) -> frozenset[str]:
    return stems(text, FORM_STOP_WORDS)


def _stemmed_phrases(text: str) -> list[frozenset[str]]:
    parts = [_stems(part) for part in _PARTS.split(text.lower())]
    return [part for part in parts if part]


def other_word(observation: Observation) -> str:
    """The word this seat infers the other side holds, from the clues it heard alone: the word
    (not its own) whose descriptors share the most words with them."""
    heard: set[str] = set()
    for clue in observation["clues"]:
        if clue["seat"] != observation["seat"] and clue["text"] is not None:
            heard |= content_words(clue["text"])
    return _guess_word(frozenset(heard), observation["word"])


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


def _others(observation: Observation) -> list[int]:
    return [seat for seat in observation["alive"] if seat != observation["seat"]]


def _targets(observation: Observation) -> list[int]:
    for action in observation["legal_actions"]:
        if action["type"] == "vote":
            return list(action["targets"])
    return _others(observation)


def make_offline_agent(
    name: str, *, role: str = "player", seed: int = 0, sentences: bool = False, language: str = "en"
) -> DescriptorAgent:
    """The offline agent called ``name`` (``descriptor``, or its aliases ``kb`` and ``random``);
    ``sentences``: it plays at a table with people; ``language``: the clues' (see
    :class:`DescriptorAgent`)."""
    if name not in NAMES:
        raise ValueError(f"no offline undercover agent {name!r}; choose one of {', '.join(NAMES)}")
    return DescriptorAgent(seed=seed, sentences=sentences, language=language)
