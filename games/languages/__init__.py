"""The games' words in the languages a study can run in, as data, and what language means for
the agents.

English is the games' own language (``games/undercover/words.py``, ``games.twenty_questions``'s
candidates). Each other language ships as a data file beside this module:

- ``undercover_<code>.txt``: the Undercover word pairs, line for line in the order of
  ``words.PAIRS``, so case *k* of a seed is the same pair in every language (:mod:`games.cases`);
- ``twenty_questions_<code>.txt``: each Twenty Questions candidate and its name, tab-separated.
  The engine keeps the canonical (English) candidate as the answer, so scores and the case
  sequence are the same in every language; a table in that language shows the names and takes a
  guess written with them.

The offline agents read and write English only (their clues, questions and answers are English
word lists): in another language they are refused with the reason (:func:`offline_problem`),
and a model agent is told the language of the table (:func:`instruction`). One thing stands in for
a model at a table in another language: when a model seat could not give its Undercover clue, the
offline agent gives a sentence that describes nothing in particular, in the table's language
(``undercover_sentences_<code>.txt``, :func:`undercover_sentences`), never an English one, and
never one said before at the table.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

HERE = Path(__file__).resolve().parent
NAMES = {"en": "English", "de": "German (Deutsch)"}
LANGUAGES = tuple(NAMES)


def _lines(path: Path) -> list[str]:
    return [
        line
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith("#")
    ]


def _check(language: str) -> None:
    if language not in NAMES:
        raise ValueError(f"no words for language {language!r}; known: {', '.join(LANGUAGES)}")


@cache
def undercover_pairs(language: str = "en") -> tuple[tuple[str, str], ...]:
    """The Undercover word pairs in ``language``, in the order of ``words.PAIRS``."""
    from games.undercover.words import PAIRS

    _check(language)
    if language == "en":
        return tuple(PAIRS)
    pairs = []
    for line in _lines(HERE / f"undercover_{language}.txt"):
        first, second = (part.strip() for part in line.split(" / "))
        pairs.append((first, second))
    if len(pairs) != len(PAIRS):
        raise ValueError(f"undercover_{language}.txt has {len(pairs)} pairs, not {len(PAIRS)}")
    return tuple(pairs)


def undercover_pair(pair: tuple[str, str] | list[str], language: str = "en") -> tuple[str, str]:
    """The pair ``pair`` (an English pair of ``words.PAIRS``) in ``language``."""
    if language == "en":
        return (pair[0], pair[1])
    from games.undercover.words import PAIRS

    index = PAIRS.index((pair[0], pair[1]))
    return undercover_pairs(language)[index]


@cache
def candidate_names(language: str = "en") -> dict[str, str]:
    """Each Twenty Questions candidate's name in ``language`` (itself in English)."""
    from games.twenty_questions import CANDIDATES

    _check(language)
    if language == "en":
        return {word: word for word in CANDIDATES}
    names = {}
    for line in _lines(HERE / f"twenty_questions_{language}.txt"):
        word, _, name = line.partition("\t")
        names[word.strip()] = name.strip()
    missing = [word for word in CANDIDATES if word not in names]
    if missing:
        raise ValueError(f"twenty_questions_{language}.txt lacks {', '.join(missing[:5])}")
    return {word: names[word] for word in CANDIDATES}


def candidate_of(name: str, language: str = "en") -> str | None:
    """The canonical candidate a name in ``language`` stands for (case and spaces ignored)."""
    wanted = " ".join(name.split()).casefold()
    for word, shown in candidate_names(language).items():
        if shown.casefold() == wanted:
            return word
    return None


@cache
def undercover_sentences(language: str) -> tuple[str, ...]:
    """The vague Undercover clues of ``language`` (the ``sentence:`` lines of
    ``undercover_sentences_<code>.txt``); English's live in :mod:`games.undercover.agents`. A
    language without the file has none: ValueError."""
    _check(language)
    path = HERE / f"undercover_sentences_{language}.txt"
    if language == "en" or not path.is_file():
        raise ValueError(f"no Undercover sentences for language {language!r}")
    found = []
    for line in _lines(path):
        kind, _, text = line.partition(":")
        if kind != "sentence" or not text.strip():
            raise ValueError(f"{path.name}: a line must start 'sentence:': {line!r}")
        found.append(text.strip())
    if len({sentence.casefold() for sentence in found}) != len(found):
        raise ValueError(f"{path.name}: a sentence is given twice")
    return tuple(found)


GUESS_TEXTS = {"en": "Is the word {word}?", "de": "Ist das Wort {word}?"}


def guess_text(name: str, language: str = "en") -> str:
    """The question that stands for an explicit guess of ``name``, in ``language``."""
    return GUESS_TEXTS.get(language, GUESS_TEXTS["en"]).format(word=name)


def offline_problem(spec: str, language: str) -> str:
    """Why an offline agent cannot play at a table in ``language`` ('' when it can)."""
    if not spec.startswith("offline:") or language == "en":
        return ""
    return (
        f"{spec} plays in English only (its clues, questions and answers come from English word "
        f"lists), so it cannot sit at a table in {NAMES.get(language, language)}: choose a "
        "language model (e.g. openai:gpt-4o-mini) for this seat"
    )


def instruction(language: str, role: str) -> str:
    """What a model seat is told about the table's language ('' for English). The oracle's
    answers keep their fixed form (Yes, No, Invalid), which the pages translate."""
    if language == "en":
        return ""
    name = NAMES.get(language, language)
    if role == "oracle":
        return (
            f"The questions at this table are written in {name}. Read them in that language, and "
            "still answer with exactly one of the answers the rules allow, in English as given."
        )
    return (
        f"This table plays in {name}: the secret words and the other players' messages are in "
        f"{name}. Write every clue, question and guess in {name}, in full sentences as a person "
        "would; keep the answer tags and any fixed answer format exactly as instructed."
    )
