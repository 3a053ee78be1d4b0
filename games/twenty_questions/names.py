"""How a text names the Twenty Questions candidates: every candidate by its name, its common
aliases and plurals, read as whole words, case-insensitive, longest match first; which candidate
a question guesses (:mod:`games.twenty_questions.guesses` has the grammar) or an explicit guess
names; and the question that stands for an explicit guess. The engine
(:mod:`games.twenty_questions.engine`) resolves guesses with these."""

from __future__ import annotations

import re
from typing import Any

from games import languages
from games.base import Event
from games.twenty_questions import CANDIDATES
from games.twenty_questions.guesses import Mention, guess_in

# Other names people use for a candidate. Only names that point at one candidate belong here:
# "aircraft" (a helicopter is one too) or "bat" (an animal) would turn honest questions into guesses.
ALIASES: dict[str, tuple[str, ...]] = {
    "Airplane": ("plane", "aeroplane", "airliner"),
    "Baseball bat": ("baseball-bat",),
    "Basketball": ("basket ball",),
    "Boots": ("boot",),
    "Bookcase": ("bookshelf", "bookshelves", "book case"),
    "Bush": ("shrub",),
    "Chopstick": ("chop stick",),
    "Computer": ("laptop", "pc", "desktop computer"),
    "Computer keyboard": ("keyboard",),
    "Cooking pot": ("pot", "saucepan", "stockpot"),
    "Corn": ("maize", "corncob", "corn on the cob"),
    "Couch": ("sofa", "settee"),
    "Cow": ("cattle",),
    "Cup": ("mug",),
    "Diary": ("journal",),
    "Dresser": ("chest of drawers",),
    "Earring": ("ear ring",),
    "Gloves": ("glove",),
    "Hairclip": ("hair clip", "barrette", "hairpin", "hair pin"),
    "Headphone": ("headphones", "earphone", "earphones", "headset"),
    "Lawn mower": ("lawnmower", "mower"),
    "Lego": ("legos", "lego brick", "lego bricks"),
    "Meteorite": ("meteor",),
    "Microwave": ("microwave oven",),
    "Motorcycle": ("motorbike", "motor bike"),
    "Nightstand": ("night stand", "bedside table"),
    "Paintbrush": ("paint brush",),
    "Pan": ("frying pan", "skillet"),
    "Pants": ("trousers", "jeans"),
    "Peas": ("pea", "green peas"),
    "Pliers": ("plier",),
    "Rabbit": ("bunny",),
    "Refrigerator": ("fridge", "freezer"),
    "Rock": ("boulder",),
    "Sculpture": ("statue",),
    "Sharpie": ("permanent marker",),
    "Shoes": ("shoe", "sneaker", "sneakers"),
    "Smartphone": ("phone", "cellphone", "cell phone", "mobile phone", "iphone", "smart phone"),
    "Socks": ("sock",),
    "Television": ("tv", "telly", "tv set"),
    "Tennis racket": ("tennis racquet", "racket", "racquet"),
    "Toothbrush": ("tooth brush",),
    "Toothpaste": ("tooth paste",),
    "Truck": ("lorry",),
    "Volleyball": ("volley ball",),
    "Watch": ("wristwatch",),
}

_IRREGULAR_PLURALS = {"Knife": "knives", "Cactus": "cacti"}
# Names that are plural already, or whose plural is the same word.
_NO_PLURAL = {"Pants", "Peas", "Pliers", "Scissors", "Shoes", "Boots", "Gloves", "Socks", "Sheep"}

_TOKEN = re.compile(r"[a-z0-9]+|[^\sa-z0-9]")


def tokens(text: str) -> list[str]:
    """Lower-case words and punctuation marks; hyphens and apostrophes only separate words."""
    return _TOKEN.findall(text.lower().replace("-", " ").replace("'", " "))


def _plurals(name: str) -> list[str]:
    """Plurals of a lower-case name, made by the usual English spelling rules on its last word."""
    head, _, last = name.rpartition(" ")
    if last.endswith(("s", "x", "sh", "ch")):
        forms = [last + "es"]
    elif last.endswith("o"):
        forms = [last + "s", last + "es"]
    elif last.endswith("y") and last[-2:-1] not in ("a", "e", "i", "o", "u"):
        forms = [last[:-1] + "ies"]
    else:
        forms = [last + "s"]
    return [f"{head} {form}".strip() for form in forms]


def _phrases() -> dict[tuple[str, ...], str]:
    """Every token sequence that names a candidate, mapped to the candidate's spelling."""
    table: dict[tuple[str, ...], str] = {}
    for word in CANDIDATES:
        names = [word.lower(), *ALIASES.get(word, ())]
        forms = set(names)
        if word not in _NO_PLURAL:
            for name in names:
                forms.update(_plurals(name))
        if word in _IRREGULAR_PLURALS:
            forms.add(_IRREGULAR_PLURALS[word])
        for form in forms:
            key = tuple(tokens(form))
            if table.setdefault(key, word) != word:
                raise ValueError(f"{form!r} would name both {table[key]} and {word}")
    return table


PHRASES = _phrases()
# For each token that can start a name, the lengths of those names, longest first.
_STARTS: dict[str, tuple[int, ...]] = {}
for _key in PHRASES:
    _STARTS[_key[0]] = tuple(sorted({*_STARTS.get(_key[0], ()), len(_key)}, reverse=True))


def read(text: str) -> list[tuple[str | None, tuple[str, ...]]]:
    """A text as a list of (candidate, its tokens) for each name and (None, (token,)) for every
    other token. Names are read longest first, so "baseball bat" is Baseball bat and not
    Baseball, and a name never spans punctuation, so "baseball, bat" names only Baseball."""
    words = tokens(text)
    items: list[tuple[str | None, tuple[str, ...]]] = []
    i, n = 0, len(words)
    while i < n:
        for length in _STARTS.get(words[i], ()):
            key = tuple(words[i : i + length])
            word = PHRASES.get(key)
            if word is not None:
                items.append((word, key))
                i += length
                break
        else:
            items.append((None, (words[i],)))
            i += 1
    return items


def scan(text: str) -> tuple[list[str], list[str]]:
    """Split a text into the candidates it names (in order of first mention) and its other tokens."""
    found: list[str] = []
    rest: list[str] = []
    for word, key in read(text):
        if word is None:
            rest.append(key[0])
        elif word not in found:
            found.append(word)
    return found, rest


def named_candidates(text: str) -> list[str]:
    """The candidates a text names, in order of first mention."""
    return scan(text)[0]


def guess_of(text: str) -> str | None:
    """The candidate ``text`` guesses under the current rules: it asks whether the secret word is
    that one candidate and nothing more (:mod:`games.twenty_questions.guesses`); else None."""
    words: list[str | Mention] = []
    for word, key in read(text):
        if word is not None:
            words.append(Mention(word, exact=key == tuple(tokens(word.lower()))))
        elif key[0][0].isalnum():
            words.append(key[0])
    return guess_in(words)


def guess_text(word: str) -> str:
    """The question that stands for a guess of ``word``: an explicit guess is recorded as this,
    and it is a guess under every rules version."""
    return f"Is the word {word}?"


def question_text(event: Event) -> str:
    """What a ``question`` event asked, as transcripts show it: its text, or for an explicit
    guess the question that stands for it."""
    if event.get("guess") is not None:
        word = guess_word(event["guess"])
        return guess_text(word or str(event["guess"]))
    return str(event.get("text") or "")


def guess_word(text: Any) -> str | None:
    """The candidate a text is the name of (any case, an alias or a plural), or None: what the
    explicit guess move accepts."""
    if not isinstance(text, str):
        return None
    items = [(word, key) for word, key in read(text) if word is not None or key[0][0].isalnum()]
    if len(items) == 1 and items[0][0] is not None:
        return items[0][0]
    return None


def named_in(text: str, language: str) -> list[str]:
    """The candidates a text names by their names in ``language`` (whole words, any case), in
    order of first mention: how a table in another language reads a guess in a question."""
    found = []
    folded = text.casefold()
    for word, name in languages.candidate_names(language).items():
        match = re.search(rf"(?<!\w){re.escape(name.casefold())}(?!\w)", folded)
        if match:
            found.append((match.start(), word))
    return [word for _, word in sorted(found)]
