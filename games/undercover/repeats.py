"""When a Who is Undercover clue says an earlier one again: the rule of the game, for every seat.

Under rules version 1 a clue repeats an earlier one when its text is the same (lower case,
punctuation and possessives aside). Under version 2 (the default of new games) it also repeats one
when it says the same meaningful words in another wording: "you pour it over cereal" after
"poured over cereal" (the words' stems, framing words such as "it", "you" or "I think" aside).
The engine refuses such a clue from anyone, so a person types another and a model is asked again
with the reason, as for any illegal move; the offline agent, which words its clues as people do,
avoids them (and more: :func:`games.undercover.agents.repeats`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

_APOSTROPHES = re.compile(r"['\u2018\u2019`]")
_NON_WORD = re.compile(r"[^a-z0-9]+")
_WORD = re.compile(r"[^\W\d_]+")
_NUMBER = re.compile(r"\d+")

STOP_TEXT = """a an and are as at be by for from has have in is it its of on or the to with you your
one who what when where which can made used very this that they them their there people some lot
lots often really just like get got make
would say clue here something about think me my"""  # the last line: words people frame clues with
STOP_WORDS = frozenset(STOP_TEXT.split())
# What a repeat at a table with people does not count either: the vague clues' framing words and
# German function words (a stand-in at a German table speaks German).
FORM_STOP_TEXT = """
    ive youd theres thats isnt dont der die das den dem des ein eine einen einem und ist nicht
    ich man sehr viele auch mit von für auf wenn gibt hat kann schon noch sich sie wir bei"""
FORM_STOP_WORDS = STOP_WORDS | frozenset(FORM_STOP_TEXT.split())

_IRREGULAR = {
    "made": "mak",
    "eaten": "eat",
    "drunk": "drink",
    "drank": "drink",
    "sold": "sell",
    "kept": "keep",
    "grown": "grow",
    "worn": "wear",
    "wore": "wear",
    "fell": "fall",
    "fallen": "fall",
    "mice": "mouse",
    "children": "child",
    "its": "it",
}


def stem(token: str) -> str:
    """A word's rough stem: "poured", "pours" and "pour" are one; "made", "making" and "make"."""
    if token in _IRREGULAR:
        return _IRREGULAR[token]
    for suffix in ("ing", "ied", "ies", "ed", "es", "s"):
        if token.endswith(suffix) and len(token) - len(suffix) >= 3:
            token = token[: -len(suffix)] + ("y" if suffix in ("ied", "ies") else "")
            break
    if token.endswith("e") and len(token) > 3:
        token = token[:-1]
    if len(token) > 3 and token[-1] == token[-2] and token[-1] not in "aeiouls":
        token = token[:-1]
    return token


def normalise(text: str) -> str:
    """Lower case, possessive apostrophes dropped, punctuation as spaces, spaces collapsed."""
    text = _APOSTROPHES.sub("", text.lower())
    return _NON_WORD.sub(" ", text).strip()


def stems(text: str, stop_words: frozenset[str] = FORM_STOP_WORDS) -> frozenset[str]:
    """The stems of ``text``'s meaningful words (not in ``stop_words``): what a repeat shares."""
    return frozenset(
        stem(token)
        for token in _WORD.findall(normalise(text))
        if len(token) >= 3 and token not in stop_words
    )


@lru_cache(maxsize=8192)
def clue_stems(text: str) -> frozenset[str]:
    """:func:`stems` of a clue and its numbers in their order ("the 2nd of 3" is not "the 3rd of
    2"), cached (each clue of a game is compared with every later one)."""
    numbers = _NUMBER.findall(normalise(text))
    return stems(text) | {f"#{place}:{number}" for place, number in enumerate(numbers)}


def said_again(text: str, earlier: Iterable[str]) -> bool:
    """Whether ``text`` says one of the ``earlier`` clues again in other words: the same
    meaningful words, by their stems (a clue of framing words alone is compared whole, by the
    exact check)."""
    own = clue_stems(text)
    return bool(own) and any(clue_stems(clue) == own for clue in earlier)
