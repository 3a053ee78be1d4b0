"""Reading a question (:func:`read`): the test it asks of a word, or None when it is not a yes/no
question about the word's meaning. Comparisons and counts are read here, the rest of the question
by :mod:`.clauses`."""

from __future__ import annotations

import re
from functools import lru_cache

from games.twenty_questions.knowledge.base import knowledge_base
from games.twenty_questions.knowledge.clauses import Clause, Test, read_clauses
from games.twenty_questions.knowledge.lexicon import FILLER, SKIP, split_tokens
from games.twenty_questions.names import scan

_LETTERS = re.compile(
    r"\b(the letters? [a-z]\b|letters? [a-z]\b|how many letters|letters? (in|of) (the|its|this)"
    r"|(word|name)\b.*\bletters?|letters?\b.*\b(word|name)|\bletters? long|same letter|double letter"
    r"|(\d+|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve) (letters|characters)"
    r"|spell\w*|spelt|alphabet\w*|syllables?|vowels?|consonants?|rhymes?|initials?"
    r"|anagram|plural|singular|capital(ized|ised)?|pronounc\w*"
    r"|(starts?|begins?|ends?|starting|beginning|ending|finish\w*) with( an?)?( [a-z])?\b"
    r"|characters? long|(long|short) (word|name)|(word|name) (is )?(long|short)|words? long"
    r"|first (letter|word)|last (letter|word)|how long is the word)\b"
    r"|['\"][a-z]['\"]|\b[a-z]\?$"
)
_NOT_YES_NO = re.compile(
    r"^\s*(what|what's|whats|which|where|why|how|who|whom|whose|when|name|tell me|describe)\b"
)
_COMPARISON = re.compile(
    r"\b(weigh\s+|weighs\s+|weight\s+)?(?:(more|less|bigger|larger|smaller|heavier|lighter|taller|shorter|longer|wider|tinier"
    r"|greater|higher|huger|thinner)\s*(?:(big|large|small|heavy|light|tall|long|wide|huge)\s*)?"
    r"(?:in size\s*|in weight\s*|overall\s*)?than|(?:about |around |roughly |approximately )?"
    r"(?:the )?(same size as|as big as|as large as|the size of|as heavy as|size of))"
    r"\s+(?:an?\s+|the\s+|your\s+|my\s+|typical\s+|average\s+|normal\s+|regular\s+|standard\s+)*"
    r"([a-z0-9][a-z0-9 .\-]*?)(?=\s*(?:[?,!;]|\.\s|\.$|\bor\b|\band\b|\bbut\b|$))"
)
# units people compare with: size in cm or weight in kg per unit
_UNITS = {
    "kg": ("weight", 1.0), "kilo": ("weight", 1.0), "kilogram": ("weight", 1.0),
    "kilogramme": ("weight", 1.0), "g": ("weight", 0.001), "gram": ("weight", 0.001),
    "gramme": ("weight", 0.001), "pound": ("weight", 0.4536), "lb": ("weight", 0.4536),
    "lbs": ("weight", 0.4536), "ounce": ("weight", 0.02835), "oz": ("weight", 0.02835),
    "ton": ("weight", 1000.0), "tonne": ("weight", 1000.0), "stone": ("weight", 6.35),
    "cm": ("size", 1.0), "centimeter": ("size", 1.0), "centimetre": ("size", 1.0),
    "mm": ("size", 0.1), "millimeter": ("size", 0.1), "millimetre": ("size", 0.1),
    "m": ("size", 100.0), "meter": ("size", 100.0), "metre": ("size", 100.0),
    "inch": ("size", 2.54), "inche": ("size", 2.54), "in": ("size", 2.54), "foot": ("size", 30.48),
    "feet": ("size", 30.48), "ft": ("size", 30.48), "yard": ("size", 91.44),
    "km": ("size", 100000.0), "kilometer": ("size", 100000.0), "kilometre": ("size", 100000.0),
    "mile": ("size", 160934.0),
}  # fmt: skip
_AMOUNT = re.compile(
    r"^(?:(\d+(?:\.\d+)?)|(an?|one|two|three|four|five|six|ten|twenty|fifty|a hundred|hundred))?"
    r"\s*([a-z]+)$"
)
_AMOUNT_WORDS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "ten": 10,
    "twenty": 20, "fifty": 50, "a hundred": 100, "hundred": 100,
}  # fmt: skip


def _amount(reference: str) -> tuple[str, float] | None:
    """ "50 kg" -> ("weight", 50.0); "a meter" -> ("size", 100.0); None if not an amount."""
    match = _AMOUNT.match(reference.strip())
    if match is None:
        return None
    digits, words, unit = match.groups()
    unit = unit if unit in _UNITS else unit.rstrip("s")
    if unit not in _UNITS:
        return None
    number = float(digits) if digits else _AMOUNT_WORDS.get(words or "one", 1)
    measure, factor = _UNITS[unit]
    return measure, number * factor


def _comparison(match: re.Match) -> Test | None:
    kb = knowledge_base()
    weigh, word, adjective, same, reference = match.groups()
    amount = _amount(reference)
    if amount is not None:
        measure, value = amount
        table = kb.weight if measure == "weight" else kb.size
        bigger = word in ("more", "bigger", "larger", "heavier", "taller", "longer", "wider",
                          "greater", "higher", "huger")  # fmt: skip
        if same:
            return lambda w: value / 3 <= table[w] <= value * 3
        if bigger:
            return lambda w: table[w] > value
        return lambda w: table[w] < value
    lemmas = tuple(kb.lemma(t) for t in split_tokens(reference))
    found = None
    for end in range(len(lemmas), 0, -1):
        for start in range(0, end):
            if lemmas[start:end] in kb.references:
                found = kb.references[lemmas[start:end]]
                break
        if found:
            break
    if found is None:
        return None
    ref_size, ref_weight = found
    if same:
        by_weight = "heavy" in same
        table, ref = (kb.weight, ref_weight) if by_weight else (kb.size, ref_size)
        return lambda w: ref / 3 <= table[w] <= ref * 3
    if word in ("more", "less"):
        by_weight = adjective in ("heavy", "light") or bool(weigh)
        bigger = (word == "more") != (adjective in ("small", "light"))
    else:
        by_weight = word in ("heavier", "lighter")
        bigger = word not in ("smaller", "lighter", "shorter", "tinier", "thinner")
    table, ref = (kb.weight, ref_weight) if by_weight else (kb.size, ref_size)
    if bigger:
        return lambda w: table[w] > ref
    return lambda w: table[w] < ref


_NUMBER_WORDS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "1": 1, "2": 2, "3": 3, "4": 4, "5": 5, "6": 6, "7": 7, "8": 8,
}  # fmt: skip
_COUNT = re.compile(
    r"\b(more than|over|at least|fewer than|less than|under|exactly|only|have|has|got|with)\s+"
    r"(one|two|three|four|five|six|seven|eight|[1-8])\s+([a-z]+)"
)
_USUAL_COUNT = {"leg": 4, "wheel": 4, "eye": 2, "ear": 2, "wing": 2, "string": 4}


def _count_test(match: re.Match) -> Test:
    """ "more than two legs": the number of a part, from facts such as ``has:four_leg``."""
    kb = knowledge_base()
    how, number, noun = match.groups()
    n = _NUMBER_WORDS[number]
    part = kb.lemma(noun)

    def count(word: str) -> int | None:
        facts = kb.facts[word]
        for name, value in (("two", 2), ("four", 4), ("many", 10)):
            if ("has", f"{name}_{part}") in facts:
                return value
        return None if ("has", part) in facts else 0  # None: has some, number not known

    def usual(word: str) -> int:
        known = count(word)
        return _USUAL_COUNT.get(part, 1) if known is None else known

    compare = {
        "more than": lambda c: c > n,
        "over": lambda c: c > n,
        "at least": lambda c: c >= n,
        "fewer than": lambda c: c < n,
        "less than": lambda c: c < n,
        "under": lambda c: c < n,
        "exactly": lambda c: c == n,
        "only": lambda c: c == n,
    }.get(how)
    if compare is None:  # "does it have two legs?": No only when it has another number of them
        return lambda w: count(w) == n or (count(w) is None and n > 0)
    return lambda w: compare(usual(w))


def _normalise(question: str) -> tuple[str, bool]:
    """Lower-case text with contractions spelt out; True when it opens with a negative
    auxiliary ("Isn't it an animal?"), which asks for confirmation rather than negating."""
    text = question.lower().replace("’", "'").replace("‘", "'").strip()
    text = re.sub(
        r"^[\W_]*((q(uestion)?\s*\d+|ok(ay)?|so|hmm+|alright|well|next|and)\b[\W_]*)+", "", text
    )
    leading = bool(
        re.match(
            r"^(isn't|aren't|doesn't|don't|can't|won't|wouldn't|couldn't|hasn't|haven't|wasn't"
            r"|shouldn't|didn't|isnt|arent|doesnt|dont|cant|wont|wouldnt|couldnt)\b",
            text,
        )
    )
    text = re.sub(r"\bcan't\b|\bcannot\b|\bcant\b", "can not", text)
    text = re.sub(r"\bwon't\b|\bwont\b", "will not", text)
    text = re.sub(r"n't\b", " not", text)
    text = re.sub(r"\b(isnt|doesnt|dont|arent|wouldnt|couldnt|hasnt|havent|didnt)\b",
                  lambda m: m.group(1)[:-2] + " not", text)  # fmt: skip
    text = re.sub(r"\b(it|that|this|there|what)'s\b", r"\1 is", text)
    text = re.sub(r"\b(you|they|we|i)'(d|ll|re|ve)\b", r"\1", text)
    text = re.sub(r"'s\b", "", text)
    text = re.sub(r",?\s*or not\s*\??\s*$", "?", text)
    text = re.sub(r"\bout of\b", "from", text)
    text = re.sub(r"\b(live|lives|living|grow|grows|growing|found|swim|swims|go|goes)\s+there\b",
                  r"\1 in it", text)  # fmt: skip
    # "is it a fruit, like an apple?": the example only illustrates
    text = (
        re.sub(
            r"(,\s*|\(\s*|\s)(like|such as|for example|for instance|e\.g\.?|say)\s+[a-z ]+?(?=\s*[?.!,)]|$)",
            " ",
            text,
        )
        if re.search(r"(,|\()\s*(like|such as|for example|for instance|e\.g)|\bsuch as\b", text)
        else text
    )
    if leading:
        text = re.sub(r"\bnot\b", "", text, count=1)
    return text, leading


def _set_question(question: str) -> frozenset[str] | None:
    named, rest = scan(question)
    if named and all(word in FILLER for word in rest):
        return frozenset(named)
    return None


@lru_cache(maxsize=4096)
def read(question: str) -> Test | None:
    """The test a question asks of a word, or None when it is not a yes/no question about the
    word's meaning."""
    kb = knowledge_base()
    text, _ = _normalise(question)
    if not text or _LETTERS.search(text) or _NOT_YES_NO.match(text):
        return None
    named = _set_question(text)
    if named is not None:
        if len(named) == 1:
            # "Is it orange?", "Is it a rock?", "Is it a cat?": the word itself, or a thing
            # the word names (a colour, a kind) that the answer is too
            (name,) = named
            concept = kb.concept(name.lower().replace(" ", "_"))
            return lambda w: w == name or ("is", concept) in kb.facts[w]
        return lambda w: w in named
    tests: list[Test] = []
    for match in list(_COUNT.finditer(text)):
        how, number, noun = match.groups()
        if how in ("have", "has", "got", "with") and (
            f"{number}_{kb.lemma(noun)}" in kb.relations or number == "one"
        ):
            continue  # a fact of its own ("four_wheel"), or "one" meaning "a"
        if "has" in kb.relations.get(kb.lemma(noun), ()):
            tests.append(_count_test(match))
            keep = how if how in ("have", "has", "got", "with") else ""
            text = text.replace(match.group(0), f" {keep} ")
        else:  # "can more than one person sit on it?"
            text = text.replace(match.group(0), " " + match.group(3))
    for match in list(_COMPARISON.finditer(text)):
        test = _comparison(match)
        if test is None:
            return None
        tests.append(test)
        text = text.replace(match.group(0), " ")
    clauses, disjunctive, negated = read_clauses(text)
    if not clauses and not tests:
        return None
    if not tests and _nonsense(text, len(clauses)):
        return None

    def clause_test(clause: Clause) -> Test:
        check = kb.holds_loosely if clause.loose else kb.holds
        return lambda w: check(w, clause.relation, clause.concept) != clause.negated

    tests += [clause_test(c) for c in clauses]
    if disjunctive:
        return lambda w: any(t(w) for t in tests) != negated
    return lambda w: all(t(w) for t in tests) != negated


_OPENERS = {
    "is", "are", "was", "were", "does", "do", "did", "can", "could", "would", "will", "has",
    "have", "should", "might", "may", "it", "its", "they", "isn", "aren", "doesn", "don", "am",
}  # fmt: skip


def _nonsense(text: str, known: int) -> bool:
    """A string of words that is not a question ("purple monkey dishwasher?"): it does not open
    like a question and most of its words mean nothing to the knowledge base."""
    kb = knowledge_base()
    words = [w for w in split_tokens(text) if w.isalpha()]
    if not words or words[0] in _OPENERS:
        return False
    lexicon = kb.lexicon
    unknown = [
        w
        for w in words
        if kb.lemma(w) not in lexicon.whole | lexicon.parts and w not in SKIP | FILLER
    ]
    return len(unknown) > known
