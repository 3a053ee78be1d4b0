"""Which questions are guesses (rules version 2): a small grammar over a question's words.

A question is a guess when it asks whether the secret word *is* one candidate, and nothing more:
"Is it a dog?", "Dog?", "Is the word 'dog'?", "Could it be dogs?", "My guess is dog",
"I think it's a dog", "Final answer: dog", "Dog, is that right?". A question that mentions a
candidate in any other role goes to the oracle: "Can you watch it?", "Is it bigger than a car?",
"Is it a fruit, like an apple?", "Is it NOT a dog?", "Is it a kind of dog?", and so does one that
names two candidates ("Is it a cat or a dog?"). The engine reads the question as a list of words
(punctuation and quotes dropped) with the one candidate's name in it as ``NAME``, and accepts it as
a guess when the whole list fits::

    guess := lead* [claim hedge*] [statement | question] hedge* [article] NAME tail*

- ``lead``: openers that say nothing about the word ("ok", "so", "hmm", "guess:", "final answer:",
  "let me guess", a question number);
- ``claim``: the speaker offering a guess ("I think", "I'd say", "I'll go with", "my guess is");
- ``statement`` / ``question``: a subject for the secret word ("it", "this", "you", "they", "the
  word", "your answer", "the thing you're thinking of") with a form of *to be*, in either order
  ("it's", "the answer must be", "is it", "could it be", "are you thinking of");
- ``hedge``: "maybe", "perhaps", "just", "by any chance", "called";
- ``article``: "a", "an", "the", "some", "a pair of", "the word";
- ``tail``: closers that ask nothing new ("by any chance", "right?", "or not", "is that it",
  "is my final answer", "you're thinking of").

Any other word before or after the name (a negation, an adjective, a comparison, a preposition,
a second noun) makes the question an ordinary one for the oracle. One ambiguity is settled by
rule: Orange and Peach are colours too, so with a pronoun subject and no article ("Is it orange?",
"It's peach?") they ask about the colour; "Is it an orange?", "Are they oranges?", "Orange?",
"Is the word orange?" and "My guess is orange" are guesses.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Mention:
    """A candidate named in a question: its spelling in the list and whether the name was plural
    (or an alias) rather than the word itself."""

    word: str
    exact: bool


# Candidates that are also colour adjectives.
COLOURS = frozenset({"Orange", "Peach"})
NAME = "NAME"  # stands for the candidate in the word list; real words are lower case


# A guess is short; a longer text is an ordinary question whatever its words.
MAX_GUESS_WORDS = 30
# Every word the grammar knows: a text with any other word (besides the name) is no guess, which
# settles most questions before the pattern runs.
VOCABULARY: set[str] = {NAME}
# The phrases of each class that may repeat (lead, hedge, tail), kept for the tests.
REPEATED: dict[str, frozenset[tuple[str, ...]]] = {}


def _any(*phrases: str) -> str:
    """A regex for any of ``phrases`` (space-separated words), each followed by one space."""
    ordered = sorted({p.strip() for p in phrases}, key=len, reverse=True)
    for phrase in ordered:
        VOCABULARY.update(phrase.split())
    return "(?:" + "|".join(re.escape(p) + " " for p in ordered) + ")"


def _split(phrase: tuple[str, ...], parts: set[tuple[str, ...]]) -> bool:
    """Whether ``phrase`` is two or more of ``parts`` one after another."""
    ends = {0}
    for end in range(1, len(phrase) + 1):
        if any(phrase[start:end] in parts and (start or end < len(phrase)) for start in ends):
            ends.add(end)
    return len(phrase) in ends


def _repeated(name: str, *phrases: str) -> str:
    """:func:`_any` for a class that may repeat (``(...)*``). A phrase that is a run of shorter
    ones is left out (the repetition matches it anyway), so that no run of words can be read in
    two ways: an ambiguous repetition makes a failing match try every reading, which grows
    exponentially with the length of the text (``tests`` check each class reads one way only)."""
    codes = {tuple(p.split()) for p in phrases}
    kept = {code for code in codes if not _split(code, codes - {code})}
    REPEATED[name] = frozenset(kept)
    return _any(*(" ".join(code) for code in kept))


def uniquely_readable(codes: frozenset[tuple[str, ...]]) -> bool:
    """Sardinas-Patterson: whether every run of ``codes`` splits into them in one way only."""
    dangling = {v[len(u) :] for u in codes for v in codes if u != v and v[: len(u)] == u}
    seen: set[tuple[str, ...]] = set()
    while dangling:
        if dangling & codes:
            return False
        seen |= dangling
        dangling = {
            *(w[len(c) :] for c in codes for w in dangling if len(w) > len(c) and w[: len(c)] == c),
            *(c[len(w) :] for c in codes for w in dangling if len(c) > len(w) and c[: len(w)] == w),
        } - seen
    return True


def _opt(pattern: str) -> str:
    return f"(?:{pattern})?"


LEAD = _repeated(
    "lead",
    "ok", "okay", "ok then", "so", "so then", "hmm", "hm", "hmmm", "um", "uh", "alright",
    "all right", "well", "and", "now", "then", "right", "fine", "yes", "yeah", "oh", "ah", "aha",
    "hey", "great", "good", "nice", "cool", "thanks", "thank you", "in that case", "if so",
    "next", "question", "q", "guess", "a guess", "my guess", "final guess", "my final guess",
    "last guess", "one guess", "answer", "my answer", "final answer", "my final answer",
    "let me guess", "let s guess", "let me try", "let me take a guess", "let me make a guess",
    "time to guess", "time for a guess", "here goes", "here s my guess", "last question",
    "final question", "wait",
) + r"|(?:q?\d+ )"  # fmt: skip

HEDGE = _repeated(
    "hedge",
    "maybe", "perhaps", "possibly", "probably", "likely", "then", "so", "really", "actually",
    "just", "definitely", "surely", "certainly", "by any chance", "by chance", "indeed", "simply",
    "obviously", "clearly", "exactly", "in fact", "finally", "now", "still", "called", "named",
    "known as",
)  # fmt: skip

_SUBJECT_NOUN = (
    "(?:"
    + _opt(
        _any(
            "secret", "mystery", "hidden", "target", "chosen", "correct", "right", "answer", "final"
        )
    )
    + _any("word", "answer", "object", "thing", "item", "one", "noun", "solution")
    + ")"
)
_THINKING = _any(
    "you re thinking of", "you are thinking of", "you re thinking about", "you have in mind",
    "you chose", "you picked", "you ve chosen", "i m looking for", "we re looking for",
)  # fmt: skip
SUBJECT = (
    "(?:"
    + _any("it", "this", "that", "they", "these", "those", "you", "u")
    + "|"
    + _any("the", "your", "ur", "this", "that")
    + _SUBJECT_NOUN
    + _opt(_THINKING)
    + ")"
)

_I_AUX = _any(
    "ll", "will", "would", "d", "m", "am", "m going to", "am going to", "m gonna", "am gonna",
    "want to", "wanna", "shall", "have to", "ll have to", "must", "can", "ll just", "m just",
    "d have to",
)  # fmt: skip
_I_VERB = _any(
    "guess", "guessing", "say", "saying", "go with", "going with", "pick", "picking", "choose",
    "choosing", "bet", "try", "answer", "think", "thinking", "believe", "suspect", "reckon",
    "feel like", "feel", "know", "sure", "pretty sure", "certain", "confident", "suppose",
)  # fmt: skip
_NOUN_CLAIM = (
    _opt(_any("my", "our", "the"))
    + _opt(_any("final", "last", "next", "first", "best", "only", "one"))
    + _any("guess", "answer", "bet", "pick", "choice", "attempt", "try", "shot")
    + _opt(
        _any(
            "is",
            "would be",
            "will be",
            "ll be",
            "s",
            "has to be",
            "must be",
            "is going to be",
            "here is",
        )  # fmt: skip
    )
)
CLAIM = (
    "(?:"
    + f"(?:i {_opt(_I_AUX)}{_I_VERB})"
    + "|"
    + _any("can i", "may i", "could i", "let me", "i d like to", "i would like to")
    + _I_VERB
    + "|"
    + _NOUN_CLAIM
    + "|"
    + _any("guessing", "going with", "go with", "say")
    + ")"
    + _opt(_any("that"))
)

_BE_AFTER = _any(
    "is", "s", "are", "re", "was", "must be", "has to be", "have to be", "should be", "could be",
    "might be", "would be", "will be", "ll be", "may be", "is going to be", "s got to be",
    "can only be", "can be", "is called", "s called",
)  # fmt: skip
STATEMENT = f"(?:{SUBJECT}{_BE_AFTER}|{_any('its')})"  # "its": a common way to type "it's"

_BE_BEFORE = _any(
    "is", "was", "are", "were", "could", "might", "can", "would", "will", "should", "must", "may",
)  # fmt: skip
QUESTION = (
    "(?:"
    + _BE_BEFORE
    + SUBJECT
    + _opt(_any("thinking of", "thinking about", "talking about"))
    + f"(?:{HEDGE})*"
    + _opt(_any("be", "be called", "be named", "going to be"))
    + "|"
    + _any("does", "do")
    + SUBJECT
    + _any("happen to be", "happen to be called")
    + ")"
)

ARTICLE = _any(
    "a", "an", "the", "some", "one", "a pair of", "pair of", "the word", "the answer",
    "a piece of", "piece of", "a sheet of",
)  # fmt: skip

TAIL = _repeated(
    "tail",
    "this is my guess", "that s my guess", "that is my guess", "just a guess", "a wild guess",
    "as a guess", "as my final guess", "by any chance", "perhaps", "maybe", "possibly",
    "probably", "then", "right", "correct", "yes", "yes or no", "or not", "or no", "is it", "isn t it", "is that it", "aren t they",
    "are they", "is that right", "is that correct", "am i right", "am i correct", "am i close",
    "did i get it", "is my guess", "is my final guess", "is my answer", "is my final answer",
    "is my bet", "final answer", "final guess", "my guess", "my final guess", "my answer",
    "as my guess", "as my answer", "as my final answer", "guess", "a guess", "please",
    "you re thinking of", "you are thinking of", "you re thinking about", "you have in mind",
    "i think", "i guess", "i believe", "i bet", "i suppose", "again", "this time", "now",
    "finally", "for real", "for sure", "lol", "haha", "hmm",
)  # fmt: skip

GUESS = re.compile(
    f"(?:{LEAD})*"
    + f"(?P<frame>(?:{CLAIM}(?:{HEDGE})*)?(?:{STATEMENT}|{QUESTION})?)"
    + f"(?:{HEDGE})*"
    + f"(?P<article>{ARTICLE})?"
    + f"{NAME} "
    + f"(?:{TAIL})*"
)

_PRONOUNS = frozenset({"it", "its", "this", "that", "they", "these", "those", "you", "u"})
# Words in a frame that make it about the word itself, so a colour word there is a noun.
_ABOUT_THE_WORD = frozenset(
    {"word", "answer", "guess", "bet", "pick", "choice", "solution", "noun", "called", "named"}
)


def guess_in(words: list[str | Mention]) -> str | None:
    """The candidate a question guesses, given its words (lower case, punctuation left out) with
    each candidate name as a :class:`Mention`; None when it is not a guess."""
    mentions = [w for w in words if isinstance(w, Mention)]
    if len(mentions) != 1:
        return None
    mention = mentions[0]
    line = "".join(f"{NAME if isinstance(w, Mention) else w} " for w in words)
    if len(words) > MAX_GUESS_WORDS or not all(
        word in VOCABULARY or word.removeprefix("q").isdigit() for word in line.split()
    ):
        return None
    match = GUESS.fullmatch(line)
    if match is None:
        return None
    if mention.word in COLOURS and mention.exact and match.group("article") is None:
        frame = set(match.group("frame").split())
        if frame & _PRONOUNS and not frame & _ABOUT_THE_WORD:
            return None  # "Is it orange?": the colour
    return mention.word
