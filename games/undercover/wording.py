"""How the offline Undercover agent words a clue at a table with people, so that its clues read
like theirs.

People at a Who is the Difference table type short things, in their own way: often a bare
fragment ("white drink", "comes from cows"), sometimes a little sentence ("it's sticky and
golden", "you pour it over cereal"), now and then two things at once; some start with a capital
and end with a full stop, many do neither. A fixed lead-in before a fragment ("I would say: ...")
is nobody's way of writing, and it gives a blinded agent away. So a clue here is one of its
word's descriptors (:mod:`games.undercover.words`) in a form people use for that kind of phrase,
drawn by the seat's seed, with the seat's own habits of case and stops: a seat that already gave
clues (its own, or the person's whose seat it took over, or a failed model's) keeps their style;
a seat's first clue draws one at the rates people write with.

A clue is never said twice at a table: :func:`games.undercover.repeats.stems` is what two clues
share when one repeats the other however it is worded ("poured over cereal", "you pour it over
cereal").
"""

from __future__ import annotations

import random
import re

# Rates of form among people's clues (what a seat with no clues of its own yet draws from): the
# share that starts with a capital, that ends with a full stop, that gives two things at once,
# and that adds a hedge. Each is in the range the clues people type at such tables show (the
# test data of tests/games/test_undercover_form.py).
CAPITAL_SHARE = 0.12  # names keep theirs ("Italian"), and "I": 0.2 in all
STOP_SHARE = 0.12
PAIR_SHARE = 0.03
HEDGE_SHARE = 0.03
KEYWORD_WEIGHT = 0.3  # a descriptor's key word alone ("cereal"), next to its whole (1.0)
HEDGES = ("i think", "mostly", "usually", "sometimes", "i guess")

# Verbs a descriptor may start with (third person): "it" may go before it.
_VERBS_TEXT = """
    has lives grows eats comes smells melts makes keeps holds swims goes carries runs flies
    hunts climbs shows opens takes cooks scares needs waddles lays jumps catches gives cleans
    tidies tells floats sweetens wakes fits causes puffs sizzles purrs chases sleeps barks
    never always often"""
_VERBS = frozenset(_VERBS_TEXT.split())
# Past participles a descriptor may start with, and the verb a person would use with "you":
# "served with curry" -> "you serve it with curry" (None: only "it's served ...").
_PARTICIPLES: dict[str, str | None] = {
    "made": None,
    "eaten": "eat",
    "served": "serve",
    "sold": None,
    "baked": "bake",
    "sliced": "slice",
    "used": "use",
    "boiled": "boil",
    "worn": "wear",
    "grilled": "grill",
    "squeezed": "squeeze",
    "dipped": "dip",
    "topped": "top",
    "cooked": "cook",
    "roasted": "roast",
    "poured": "pour",
    "brewed": "brew",
    "drunk": "drink",
    "drizzled": "drizzle",
    "filled": "fill",
    "steamed": "steam",
    "grated": "grate",
    "melted": "melt",
    "mashed": "mash",
    "packed": "pack",
    "wrapped": "wrap",
    "fried": "fry",
    "stuffed": "stuff",
    "rolled": "roll",
    "smoked": "smoke",
    "carried": "carry",
    "plugged": "plug",
    "knitted": "knit",
    "kept": "keep",
    "picked": "pick",
    "delivered": None,
    "folded": "fold",
    "twirled": "twirl",
    "dunked": "dunk",
    "scooped": "scoop",
    "fluffed": "fluff",
    "peeled": "peel",
    "stacked": "stack",
    "flipped": "flip",
    "popped": "pop",
    "poached": "poach",
    "crushed": "crush",
    "simmered": "simmer",
    "added": "add",
    "uncorked": "uncork",
    "slurped": "slurp",
    "steeped": "steep",
    "spread": "spread",
    "grown": None,
    "churned": None,
    "aged": None,
    "frozen": None,
    "fermented": None,
    "pressed": None,
    "pleated": None,
    "sealed": None,
}
# Words that describe ("it's sticky and golden"): a descriptor of these alone takes "it's".
_ADJECTIVES_TEXT = """
    small big long white red yellow sweet crunchy green soft round dark rich dry crispy brown
    hot sharp loud quiet sour bright tangy flat chewy tiny light spicy juicy heavy strong thick
    fluffy smart slow colorful narrow warm black bitter sticky golden fizzy salty icy tart fuzzy
    cold creamy cheap expensive popular common delicate stubborn nocturnal striped woolly oval
    casual fast blue pink thin buttery peppery and or very quite really"""
_ADJECTIVES = frozenset(_ADJECTIVES_TEXT.split())
# How a person joins two things in one clue ("white drink and comes from cows").
_PAIRING = (" and ", " and ", ", ")


def kind_of(phrase: str) -> str:
    """What a descriptor is, for the forms it can take: ``verb`` ("comes from cows"),
    ``participle`` ("poured over cereal"), ``adjective`` ("sticky and golden") or ``other``."""
    words = phrase.split()
    first = words[0].lower().rstrip(",")
    if first in _VERBS and len(words) > 1:
        return "verb"
    if first in _PARTICIPLES and len(words) > 1:
        return "participle"
    if all(word.lower().rstrip(",") in _ADJECTIVES for word in words):
        return "adjective"
    return "other"


def forms(phrase: str) -> list[tuple[str, float]]:
    """The ways a person writes ``phrase`` as a clue, each with its weight."""
    kind = kind_of(phrase)
    words = phrase.split()
    found = [(phrase, 1.0)]
    if kind == "verb":
        found.append((f"it {phrase}", 0.45))
    elif kind == "participle":
        found.append((f"it's {phrase}", 0.25))
        base = _PARTICIPLES.get(words[0].lower())
        if base and len(words) > 1 and words[1] not in ("by", "as"):
            found.append((f"you {base} it {' '.join(words[1:])}", 0.3))
    elif kind == "adjective":
        found.append((f"it's {phrase}", 0.5))
    keys = [*parts(phrase), *keywords(phrase)]
    found.extend((key, KEYWORD_WEIGHT / len(keys)) for key in dict.fromkeys(keys))
    return found


_JOINS = re.compile(r",\s*|\s+(?:and|or)\s+")


def parts(phrase: str) -> list[str]:
    """The parts of a descriptor of several things ("tomato sauce and melted cheese"), each a
    clue of its own; none for a descriptor of one thing."""
    found = [part.strip() for part in _JOINS.split(phrase) if part.strip()]
    return found if len(found) > 1 else []


_FUNCTION_WORDS_TEXT = """
    from with into over under onto about after before during for the and but with your you
    its it them they this that their there when where which what often very really also one
    kind some lots most many more than only just like made used sold around inside outside
    through near without against behind between favorite favourite first every each other
    sells"""
_FUNCTION_WORDS = frozenset(_FUNCTION_WORDS_TEXT.split())


def keywords(phrase: str) -> list[str]:
    """The words of a descriptor that say something on their own, as people often give one
    ("kept cold in the fridge": "cold", "fridge"): those that are neither function words nor
    short; none for a descriptor of one word."""
    words = [word.strip(",.") for word in phrase.split()]
    if len(words) < 2:
        return []
    return [
        word
        for word in words
        if len(word) >= 4
        and word.lower() not in _FUNCTION_WORDS
        and word.lower() not in _VERBS
        and word.lower() not in _PARTICIPLES
        and not word.lower().endswith("ed")
        and "'" not in word
    ]


class Style:
    """A seat's habits of form: how often its clues start with a capital and end with a stop."""

    def __init__(self, capital: float, stop: float) -> None:
        self.capital = capital
        self.stop = stop

    @classmethod
    def of(cls, clues: list[str], rng: random.Random) -> Style:
        """The style of a seat that gave ``clues`` (its own earlier clues, whoever typed them);
        with none, one drawn at people's rates: most people keep one habit, a few mix."""
        if clues:
            capital = sum(clue[:1].isupper() for clue in clues) / len(clues)
            stop = sum(clue.rstrip().endswith(".") for clue in clues) / len(clues)
            return cls(capital, stop)
        # Most people keep one habit, a few mix; either way the shares over seats are people's.
        stop = rng.random() < STOP_SHARE
        capital_share = 0.8 if stop else (CAPITAL_SHARE - 0.8 * STOP_SHARE) / (1 - STOP_SHARE)
        if rng.random() < 0.2:  # a seat that mixes
            return cls(capital_share, STOP_SHARE)
        return cls(float(rng.random() < capital_share), float(stop))

    def apply(self, text: str, rng: random.Random, name_first: bool = False) -> str:
        """``text`` with this style's capital and stop; ``name_first``: it starts with a name
        ("Italian", "New York"), which keeps its capital."""
        text = text.strip().rstrip(".")
        if rng.random() < self.capital:
            text = text[:1].upper() + text[1:]
        elif not name_first and not re.match(r"I\b", text):
            text = text[:1].lower() + text[1:]
        if rng.random() < self.stop and text[-1:] not in "?!":
            text += "."
        return text


# What a model puts before its clue and no person types ("My clue: ...", "I would say ..."), and
# the quotes it wraps a clue in: what a study's ``model_clue_form`` takes off a model's clue.
_LEAD_IN = re.compile(
    r"^\s*(?:(?:here is |here's )?my clue(?: is)?|clue|hint|i would say|i'd say|i will say"
    r"|i'll say|i say)\s*[:,\-\u2013\u2014]?\s+",
    re.IGNORECASE,
)
_QUOTES = "\"'\u201c\u201d\u2018\u2019`"


def peoples_form(text: str, own: list[str], seed: object) -> str:
    """A model's clue ``text`` in the form people type theirs, as the offline agent's are: no fixed
    lead-in or wrapping quotes, and the seat's own habits of capital and full stop (``own``: the
    seat's earlier clues, whoever typed them; none: drawn at people's rates, seeded by ``seed``).
    Only a study that asks for it (``model_clue_form``) applies it: a model's own words are what
    a study measures. Returns ``text`` unchanged when nothing of it would be left."""
    rng = random.Random(f"{seed}:model-form")
    plain = _LEAD_IN.sub("", text.strip(), count=1).strip().strip(_QUOTES).strip()
    if not plain:
        return text
    return Style.of(own, rng).apply(plain, rng)


def wordings(phrase: str, rng: random.Random) -> list[str]:
    """The forms of ``phrase`` (:func:`forms`) in an order drawn by their weights: the first is
    the one a seat gives, the rest what it falls back on when one would repeat a clue."""
    options = forms(phrase)
    keyed = [(rng.random() ** (1 / weight), text) for text, weight in options]
    return [text for _, text in sorted(keyed, reverse=True)]


def render(text: str, rng: random.Random, style: Style, extra: str | None = None) -> str:
    """``text`` (one of :func:`wordings`) written as a clue by a seat of ``style``; with
    ``extra``, a second descriptor given in the same clue ("white drink, comes from cows")."""
    if extra is not None:
        text += rng.choice(_PAIRING) + extra
    elif " " in text and rng.random() < HEDGE_SHARE:
        text += " " + rng.choice(HEDGES)
    return style.apply(text, rng, name_first=text[:1].isupper())
