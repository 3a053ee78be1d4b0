"""What the offline agents know about the 157 words, and how the offline oracle reads a question.

The facts live in ``knowledge.json`` so they can be reviewed and corrected without code:

- ``classes``: kinds of things with the facts they share ("fruit": is sweet, has seeds, you eat
  it...); a class may build on other classes.
- ``words``: for every candidate its classes, its own facts, the facts of its classes that do not
  hold for it (``-has:leg``), and its typical size (longest side in cm) and weight (kg).
- ``synonyms`` and ``phrases``: other words and phrasings people use for a fact.
- ``references``: size and weight of everyday things people compare with ("a breadbox").
- ``known``: things no candidate is or has ("feathers", "a reptile"), so they are answered No.
- ``features``: the yes/no questions the offline questioner asks.

A fact is a relation and a concept: ``is`` (kind, colour, property), ``has`` (parts), ``made``
(material), ``at`` (where it is found, or worn), ``use`` (what people do with it) and ``act`` (what
it does itself). Concepts are lemmas joined by ``_`` ("sleep_on" is written "sleep_on").

Reading a question (:func:`read`) turns it into a test on a word, or None when the question is
not a yes/no question about meaning (letters, spelling, "what colour is it?", nonsense). The test
is the same for every word, so the questioner's idea of what a question means (:func:`yes_set`)
always matches the oracle's answer.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from games.twenty_questions import CANDIDATES
from games.twenty_questions.engine import ALIASES as _ALIASES
from games.twenty_questions.engine import scan

PATH = Path(__file__).with_name("knowledge.json")
RELATIONS = ("is", "has", "made", "at", "use", "act")

# Word forms the suffix rules below cannot undo.
IRREGULAR = {
    "leaves": "leaf", "knives": "knife", "shelves": "shelf", "wolves": "wolf", "halves": "half",
    "loaves": "loaf", "lives": "live", "teeth": "tooth", "feet": "foot", "geese": "goose",
    "mice": "mouse", "men": "man", "women": "woman", "children": "child", "people": "people",
    "ate": "eat", "eaten": "eat", "worn": "wear", "wore": "wear", "ridden": "ride", "rode": "ride",
    "flew": "fly", "flown": "fly", "flies": "fly", "driven": "drive", "drove": "drive",
    "made": "make", "built": "build", "held": "hold", "kept": "keep", "found": "find",
    "grown": "grow", "grew": "grow", "thrown": "throw", "threw": "throw", "drawn": "draw",
    "written": "write", "wrote": "write", "seen": "see", "saw": "saw", "sold": "sell",
    "bought": "buy", "brought": "bring", "caught": "catch", "taught": "teach", "hung": "hang",
    "sat": "sit", "slept": "sleep", "swum": "swim", "swam": "swim", "dug": "dig", "cut": "cut",
    "hit": "hit", "put": "put", "lay": "lie", "lain": "lie", "lying": "lie", "dying": "die",
    "tying": "tie", "fries": "fry", "has": "have", "had": "have", "is": "be", "are": "be",
    "was": "be", "were": "be", "been": "be", "being": "be", "am": "be", "does": "do", "did": "do",
    "done": "do", "goes": "go", "went": "go", "gone": "go", "its": "it", "bus": "bus",
    "glass": "glass", "gas": "gas", "grass": "grass", "dress": "dress", "brass": "brass",
    "canvas": "canvas", "cactus": "cactus", "cacti": "cactus", "pants": "pants", "peas": "peas",
    "scissors": "scissors", "pliers": "pliers", "this": "this", "used": "use", "yes": "yes",
    "always": "always", "sometimes": "sometimes", "glasses": "glasses", "clothes": "clothes",
    "series": "series", "species": "species", "news": "news", "bigger": "big", "biggest": "big",
    "better": "good", "best": "best", "mattress": "mattress", "headphones": "headphone",
    "less": "less", "asparagus": "asparagus", "octopus": "octopus", "boots": "boot",
    "gloves": "glove", "socks": "sock", "shoes": "shoe", "swung": "swing", "spun": "spin",
    "struck": "strike", "blown": "blow", "blew": "blow", "shorn": "shear", "torn": "tear",
    "tore": "tear", "woven": "weave", "frozen": "freeze", "broken": "break", "broke": "break",
    "sung": "sing", "sang": "sing", "rung": "ring", "rang": "ring", "hidden": "hide",
    "bitten": "bite", "bit": "bite", "chosen": "choose", "shot": "shoot", "fed": "feed",
    "led": "lead", "spent": "spend", "shook": "shake", "shaken": "shake", "taken": "take",
    "took": "take", "given": "give", "gave": "give", "stood": "stand", "ran": "run",
}  # fmt: skip
IT = "<it>"  # the thing being asked about ("it", "they", "this thing")
_PRONOUNS = {"it", "its", "they", "them", "this", "itself", "themselves", "thing"}
_SUBJECTS = {
    "you", "i", "we", "people", "person", "someone", "somebody", "anyone", "anybody", "one",
    "human", "humans", "user", "users", "u", "ya",
}  # fmt: skip
_PURPOSE = {"use", "for", "to", "help", "let", "allow", "able"}
_SKIP = {
    "a", "an", "the", "your", "my", "his", "her", "their", "our", "some", "any", "very", "really",
    "usually", "typically", "generally", "normally", "commonly", "often", "mostly", "mainly",
    "primarily", "always", "sometimes", "ever", "also", "even", "still", "just",
    "actually", "possibly", "probably", "maybe", "perhaps", "kind", "type", "sort", "form",
    "sorta", "kinda", "quite", "pretty", "fairly", "rather", "somewhat", "of", "be", "do", "can",
    "could", "would", "will", "should", "might", "may", "must", "shall", "get", "got", "have",
    "that", "which", "who", "something", "anything", "object", "item", "thing", "stuff", "one",
    "you", "i", "we", "people", "person", "someone", "somebody", "anyone", "anybody", "u",
    "so", "ok", "okay", "well", "hmm", "hm", "um", "uh", "please", "question", "next", "then",
    "and", "or", "either", "neither", "nor", "if", "whether", "like", "considered", "call",
    "called", "describe", "described", "say", "said", "as", "particular",
    "specific", "certain", "both", "all", "every", "each", "other", "another", "else", "too",
    "lot", "lots", "much", "many", "more", "most", "less", "least", "frequently",
    "regularly", "daily", "typical", "usual", "normal", "common", "general",
    "there", "here", "when", "while", "where", "before", "after", "during", "about",
    "keep", "kept", "find", "found", "locate", "located", "see", "seen", "situated",
    "purpose", "purposes", "origin", "setting", "settings",
    "go", "goes", "went", "take", "bring", "put", "own",
}  # fmt: skip
# "a piece of furniture", "a kind of fruit": the first word only introduces the second
_OF_WORDS = {"piece", "kind", "type", "sort", "form", "member", "example", "variety", "bit", "item"}
_HAS_FRAME = {
    "have", "contain", "include", "with", "feature", "possess", "come", "use", "need", "require",
    "take", "consume",
}  # fmt: skip
_MADE_FRAME = {"make", "build", "construct", "consist", "compose", "craft", "manufacture"}
_AT_FRAME = {
    "in", "on", "at", "near", "inside", "around", "under", "into", "onto", "by", "beside",
    "next", "among", "within", "across", "from", "beneath", "below", "above", "over", "outside",
    "part",
}  # fmt: skip
_PREP_NORMAL = {"off": "from", "into": "in", "onto": "on"}
_TRAILING = {"in", "on", "at", "with", "from"}  # prepositions that may end a verb phrase
_IN_PHRASE = {"a", "an", "the", "your", "my", "their", "some", IT, "you", "us", "me", "people"}
_PERCEIVE = {"hear", "see", "find", "notice", "meet", "encounter", "spot"}
_QUANTIFIERS = {"lot", "lots", "many", "several", "much", "plenty", "loads", "bunch"}
_QUANTIFIED = {"carry", "have", "hold", "contain", "store", "seat", "fit", "transport"}
_MOTION = {"ride", "drive", "take", "go", "bring", "carry", "walk", "fly", "sail", "travel", "run"}
_NEGATIONS = {"not", "never", "no", "non"}
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
# Words that may surround a list of candidate names without changing its meaning.
_FILLER = {
    "is", "it", "a", "an", "the", "one", "of", "these", "those", "following", "either", "or",
    "and", "any", "maybe", "perhaps", "could", "be", "among", "in", "this", "list", "set",
    "group", "word", "words", "answer", "candidate", "candidates", "option", "options",
    "choices", "something", "thing", "belong", "to", "are", "they", "them", "my",
    "guess", "i", "think", "s", "two", "three", "few", ",", ":", ";", ".", "?", "!",
    "/", "(", ")", "-", "possibly", "probably",
}  # fmt: skip
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


def _load_json(path: Path) -> dict:
    data = json.loads(path.read_text(encoding="utf-8"))
    if list(data["words"]) != list(CANDIDATES):
        raise ValueError(
            f"{path.name}: the words must be the {len(CANDIDATES)} candidates in order"
        )
    return data


def _undouble(stem: str) -> list[str]:
    if len(stem) > 2 and stem[-1] == stem[-2] and stem[-1] not in "lsz":
        return [stem[:-1]]
    return []


def _forms(word: str) -> list[str]:
    """Possible lemmas of a word form, most likely first."""
    if word in IRREGULAR:
        return [IRREGULAR[word]]
    forms = [word]
    if word.endswith("ies") and len(word) > 4:
        forms += [word[:-3] + "y", word[:-1]]
    if word.endswith("es") and len(word) > 3:
        if word[:-2].endswith(("s", "x", "z", "ch", "sh", "o")):
            forms += [word[:-2], word[:-1]]
        else:
            forms += [word[:-1], word[:-2]]
    if word.endswith("s") and not word.endswith(("ss", "us", "is")) and len(word) > 2:
        forms.append(word[:-1])
    if word.endswith("ing") and len(word) > 4:
        stem = word[:-3]
        forms += [*_undouble(stem), stem, stem + "e"]
    if word.endswith("ied") and len(word) > 4:
        forms.append(word[:-3] + "y")
    if word.endswith("ed") and len(word) > 3:
        stem = word[:-2]
        forms += [*_undouble(stem), stem, word[:-1]]
    if word.endswith("er") and len(word) > 4:
        forms += [*_undouble(word[:-2]), word[:-2], word[:-1]]
    if word.endswith("est") and len(word) > 5:
        forms += [*_undouble(word[:-3]), word[:-3]]
    if word.endswith("ly") and len(word) > 4:
        forms.append(word[:-2])
    if word.endswith("y") and len(word) > 4:
        forms.append(word[:-1])
    if word.endswith("en") and len(word) > 4:
        forms.append(word[:-2])
    return forms


class Lexicon:
    """Lemmas known to the knowledge base, and a lemmatiser that prefers them."""

    def __init__(self, whole: set[str], parts: set[str], keys: set[str] = frozenset()) -> None:
        self.whole = whole
        self.parts = parts
        self.keys = keys  # other words for concepts; an inflected one ("kids") is still "kid"

    @lru_cache(maxsize=8192)  # noqa: B019 - one lexicon per process
    def lemma(self, word: str) -> str:
        forms = _forms(word)
        if word in self.keys and word not in IRREGULAR and word.endswith("s"):
            for form in forms[1:]:
                if form in self.whole:
                    return form
        for known in (self.whole, self.parts):
            for form in forms:
                if form in known:
                    return form
        if word.endswith("s") and len(forms) > 1 and not word.endswith(("ss", "us", "is")):
            return forms[-1] if forms[-1] == word[:-1] else forms[1]
        return word


def _split_tokens(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+|[?,.;:!/()]", text.lower().replace("-", " "))


@dataclass(frozen=True)
class Feature:
    name: str
    question: str
    words: frozenset[str]  # the candidates for which the answer is Yes


class KnowledgeBase:
    def __init__(self, path: Path = PATH) -> None:
        data = _load_json(path)
        self.data = data
        whole: set[str] = set(IRREGULAR.values())  # words that are a concept by themselves
        parts: set[str] = set()  # words that are part of a longer concept
        items = []
        for text in [*data["classes"].values(), *data["words"].values()]:
            relation = "is"
            for token in text.replace("|", " ").split():
                if token.endswith(":"):
                    relation = token[:-1]
                elif "=" not in token and relation != "class":
                    items.append(token.lstrip("-").split(":")[-1])
        items += [item for text in data["known"].values() for item in text.split()]
        for value in [*data["synonyms"].values(), *data["phrases"].values()]:
            items += [part.lstrip("!").split(".")[-1] for part in value.split("+")]
        items += list(data["synonyms"])
        for item in items:
            (whole if "_" not in item else parts).update(item.split("_"))
        for key in data["phrases"]:
            parts.update(_split_tokens(key))
        self.lexicon = Lexicon(whole, parts, set(data["synonyms"]))
        # a fact may be written the way a question puts it: "sit_on" is the concept "sit"
        self.aliases = {
            key: value
            for key, value in data["phrases"].items()
            if " " in key and not any(mark in value for mark in "+!.-")
        }
        self.classes = {name: self._parse(text) for name, text in data["classes"].items()}
        self.facts: dict[str, frozenset[tuple[str, str]]] = {}
        self.size: dict[str, float] = {}
        self.weight: dict[str, float] = {}
        for word, text in data["words"].items():
            self.facts[word] = self._word_facts(word, text)
        real = {pair for facts in self.facts.values() for pair in facts}
        self.relations: dict[str, set[str]] = {}
        for relation, concept in real:
            self.relations.setdefault(concept, set()).add(relation)
        for relation, items in data["known"].items():
            for item in items.split():  # asked in this relation, a known concept is answered No
                concept = self.concept(item)
                held = self.relations.setdefault(concept, set())
                if relation in ("use", "act") and held & {"use", "act"}:
                    continue  # "is it grown?" asks what it does, in other words
                held.add(relation)

        # token sequence (lemmas) -> the concepts it names, each with True where negated
        self.phrases: dict[tuple[str, ...], tuple[tuple[str | None, str, bool], ...]] = {}
        for concept in self.relations:
            self.phrases.setdefault(tuple(concept.split("_")), ((None, concept, False),))
        for key, value in [*data["synonyms"].items(), *data["phrases"].items()]:
            meaning = tuple(_meaning(self, part) for part in value.split("+") if part != "-")
            for _, concept, _ in meaning:
                if concept not in self.relations:
                    raise ValueError(f"{path.name}: {key!r} means {concept!r}, which no fact uses")
            lemmas = tuple(self.lemma(t) for t in _split_tokens(key))
            if len(lemmas) == 1 and lemmas[0] != key and lemmas[0] in self.relations:
                continue  # "woods" is a form of "wood", which is a concept of its own
            self.phrases[lemmas] = meaning
        self.longest = max(len(key) for key in self.phrases)
        # concept -> the purposes it is part of ("book" -> "store_book", "hold_book")
        self.purposes: dict[str, set[str]] = {}
        for relation, concept in real:
            if relation in ("use", "act") and "_" in concept and not concept.startswith("need_"):
                for part in concept.split("_")[1:]:
                    names = {part, *(c for _, c, _ in self.phrases.get((part,), ()))}
                    for name in names:
                        self.purposes.setdefault(name, set()).add(concept)
        self.references = {
            tuple(self.lemma(t) for t in _split_tokens(name)): (float(s), float(w))
            for name, (s, w) in data["references"].items()
        }
        for word in CANDIDATES:
            for name in [word, *_ALIASES.get(word, ())]:
                key = tuple(self.lemma(t) for t in _split_tokens(name))
                self.references[key] = (self.size[word], self.weight[word])

    def lemma(self, word: str) -> str:
        return _PREP_NORMAL.get(word) or self.lexicon.lemma(word)

    def concept(self, item: str) -> str:
        alias = self.aliases.get(item.replace("_", " "))
        if alias is not None and alias != item:
            return self.concept(alias)
        return "_".join(self.lemma(part) for part in item.split("_"))

    def _parse(self, text: str) -> dict[str, list]:
        """``{"class": [...], "add": [(rel, concept)], "drop": [...], "size": x, "weight": y}``."""
        out: dict[str, list] = {"class": [], "add": [], "drop": []}
        relation = "is"
        for token in text.replace("|", " ").split():
            if token.endswith(":"):
                relation = token[:-1]
                if relation not in (*RELATIONS, "class"):
                    raise ValueError(f"unknown relation {relation!r} in {text!r}")
            elif "=" in token:
                key, _, value = token.partition("=")
                out[key] = [float(value)]
            elif token.startswith("-"):
                rel, _, item = token[1:].partition(":")
                out["drop"].append((rel, self.concept(item)))
            elif relation == "class":
                out["class"].append(token)
            else:
                out["add"].append((relation, self.concept(token)))
        return out

    def _class_facts(self, name: str, seen: tuple[str, ...] = ()) -> set[tuple[str, str]]:
        if name not in self.classes:
            raise ValueError(f"unknown class {name!r}")
        if name in seen:
            raise ValueError(f"class {name!r} builds on itself")
        spec = self.classes[name]
        facts: set[tuple[str, str]] = set()
        for parent in spec["class"]:
            facts |= self._class_facts(parent, (*seen, name))
        facts |= set(spec["add"])
        facts -= set(spec["drop"])
        return facts

    def _word_facts(self, word: str, text: str) -> frozenset[tuple[str, str]]:
        spec = self._parse(text)
        if "size" not in spec or "weight" not in spec:
            raise ValueError(f"{word} needs size= and weight=")
        size, weight = spec["size"][0], spec["weight"][0]
        self.size[word], self.weight[word] = size, weight
        facts: set[tuple[str, str]] = set()
        for name in spec["class"]:
            facts |= self._class_facts(name)
        facts |= set(spec["add"])
        facts |= {("is", c) for c in _derived(size, weight) if ("is", c) not in spec["drop"]}
        facts |= {("is", word.lower().replace(" ", "_"))}
        hard = {
            "metal",
            "wood",
            "stone",
            "rock",
            "glass",
            "ceramic",
            "porcelain",
            "plastic",
            "steel",
        }
        if ("is", "soft") not in facts and any(("made", m) in facts for m in hard):
            facts.add(("is", "hard"))
        if ("is", "loud") in facts:
            facts |= {("act", "make_noise"), ("act", "make_sound")}
        if ("is", "alive") not in facts:
            facts.add(("is", "not_alive"))
        facts -= set(spec["drop"])
        return frozenset(facts)

    def holds_loosely(self, word: str, relation: str | None, concept: str) -> bool:
        """Like :meth:`holds`, also counting the concept with a preposition ("write_on"), and
        the purposes the concept is part of ("for books": "store_book")."""
        forms = (concept, *(f"{concept}_{p}" for p in ("on", "in", "with", "from", "at")))
        if any(self.holds(word, relation, form) for form in forms if form in self.relations):
            return True
        facts = self.facts[word]
        if any((r, p) in facts for p in self.purposes.get(concept, ()) for r in ("use", "act")):
            return True
        return any(  # "used for carrying things": carries people, cargo, water...
            r in ("use", "act") and fact.startswith(concept + "_") and not fact.startswith("need_")
            for r, fact in facts
        )

    def holds(self, word: str, relation: str | None, concept: str) -> bool:
        """Whether a concept holds for a word, read in the relation the question suggests
        when the knowledge base uses the concept in that relation, in any relation otherwise."""
        relations = self.relations.get(concept, set())
        facts = self.facts[word]
        if relation in relations:
            return (relation, concept) in facts
        return any((r, concept) in facts for r in relations)


def _meaning(kb: KnowledgeBase, part: str) -> tuple[str | None, str, bool]:
    """``"!edible"`` -> (None, "edible", True); ``"has.battery"`` -> ("has", "battery", False)."""
    negated = part.startswith("!")
    relation, _, item = part.lstrip("!").rpartition(".")
    return relation or None, kb.concept(item), negated


def _derived(size: float, weight: float) -> list[str]:
    """Size words that follow from the typical size (cm) and weight (kg)."""
    out = []
    if size >= 60 and weight >= 3:
        out += ["big"]
    if size < 30:
        out += ["small"]
    if size <= 5:
        out += ["tiny"]
    if size >= 400:
        out += ["huge"]
    if weight >= 8:
        out += ["heavy"]
    if weight <= 1:
        out += ["light"]
    if size <= 45 and weight <= 2:
        out += ["handheld"]
    if size <= 16 and weight <= 0.5:
        out += ["pocket_size"]
    if size <= 45 and weight <= 10:
        out += ["backpack_size"]
    if size <= 150 and weight <= 300:
        out += ["car_size"]
    if size <= 250 and weight <= 500:
        out += ["house_size"]
    if weight <= 25 and size <= 250:
        out += ["carryable"]
    if weight <= 5 and size <= 100:
        out += ["portable"]
    return out


KB = KnowledgeBase()
CATEGORIES = {
    word: next(iter(KB._parse(text)["class"]), "thing") for word, text in KB.data["words"].items()
}


# ---------------------------------------------------------------------------------------------
# Reading a question


Test = Callable[[str], bool]


@dataclass(frozen=True)
class Clause:
    relation: str | None
    concept: str
    negated: bool
    loose: bool = False  # "used for writing": writing with it, on it or in it


def _comparison(match: re.Match) -> Test | None:
    weigh, word, adjective, same, reference = match.groups()
    amount = _amount(reference)
    if amount is not None:
        measure, value = amount
        table = KB.weight if measure == "weight" else KB.size
        bigger = word in ("more", "bigger", "larger", "heavier", "taller", "longer", "wider",
                          "greater", "higher", "huger")  # fmt: skip
        if same:
            return lambda w: value / 3 <= table[w] <= value * 3
        if bigger:
            return lambda w: table[w] > value
        return lambda w: table[w] < value
    lemmas = tuple(KB.lemma(t) for t in _split_tokens(reference))
    found = None
    for end in range(len(lemmas), 0, -1):
        for start in range(0, end):
            if lemmas[start:end] in KB.references:
                found = KB.references[lemmas[start:end]]
                break
        if found:
            break
    if found is None:
        return None
    ref_size, ref_weight = found
    if same:
        by_weight = "heavy" in same
        table, ref = (KB.weight, ref_weight) if by_weight else (KB.size, ref_size)
        return lambda w: ref / 3 <= table[w] <= ref * 3
    if word in ("more", "less"):
        by_weight = adjective in ("heavy", "light") or bool(weigh)
        bigger = (word == "more") != (adjective in ("small", "light"))
    else:
        by_weight = word in ("heavier", "lighter")
        bigger = word not in ("smaller", "lighter", "shorter", "tinier", "thinner")
    table, ref = (KB.weight, ref_weight) if by_weight else (KB.size, ref_size)
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
    how, number, noun = match.groups()
    n = _NUMBER_WORDS[number]
    part = KB.lemma(noun)

    def count(word: str) -> int | None:
        facts = KB.facts[word]
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
    if named and all(word in _FILLER for word in rest):
        return frozenset(named)
    return None


@lru_cache(maxsize=4096)
def read(question: str) -> Test | None:
    """The test a question asks of a word, or None when it is not a yes/no question about the
    word's meaning."""
    text, _ = _normalise(question)
    if not text or _LETTERS.search(text) or _NOT_YES_NO.match(text):
        return None
    named = _set_question(text)
    if named is not None:
        if len(named) == 1:
            # "Is it orange?", "Is it a rock?", "Is it a cat?": the word itself, or a thing
            # the word names (a colour, a kind) that the answer is too
            (name,) = named
            concept = KB.concept(name.lower().replace(" ", "_"))
            return lambda w: w == name or ("is", concept) in KB.facts[w]
        return lambda w: w in named
    tests: list[Test] = []
    for match in list(_COUNT.finditer(text)):
        how, number, noun = match.groups()
        if how in ("have", "has", "got", "with") and (
            f"{number}_{KB.lemma(noun)}" in KB.relations or number == "one"
        ):
            continue  # a fact of its own ("four_wheel"), or "one" meaning "a"
        if "has" in KB.relations.get(KB.lemma(noun), ()):
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
    clauses, disjunctive, negated = _clauses(text)
    if not clauses and not tests:
        return None
    if not tests and _nonsense(text, len(clauses)):
        return None

    def clause_test(clause: Clause) -> Test:
        check = KB.holds_loosely if clause.loose else KB.holds
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
    words = [w for w in _split_tokens(text) if w.isalpha()]
    if not words or words[0] in _OPENERS:
        return False
    lexicon = KB.lexicon
    unknown = [
        w
        for w in words
        if KB.lemma(w) not in lexicon.whole | lexicon.parts and w not in _SKIP | _FILLER
    ]
    return len(unknown) > known


def _clauses(text: str) -> tuple[list[Clause], bool, bool]:
    """The concepts a question asks about, whether it joins them with "or", and whether the
    whole question is negated ("is it not alive?")."""
    words = _split_tokens(text)
    tokens: list[str] = []  # lemmas, with IT for the thing asked about
    surface: list[str] = []
    for word in words:
        if word in _PRONOUNS:
            tokens.append(IT)
        else:
            tokens.append(KB.lemma(word))
        surface.append(word)
    disjunctive = "or" in words or "nor" in words
    negated = "neither" in words  # "neither a fruit nor a vegetable": not (a fruit or a vegetable)
    clauses: list[Clause] = []
    subjects: list[Clause] = []  # read as clauses only when nothing else is asked
    object_of = -1  # where the object of the last verb would stand
    without = False
    i, n = 0, len(tokens)
    while i < n:
        token = tokens[i]
        if token in _NEGATIONS:
            negated = not negated
            i += 1
            continue
        if token == "without":
            without = True
            i += 1
            continue
        # the longest phrase starting here, skipping articles and the pronoun
        best = None
        j, seq, positions = i, [], []
        while j < n and len(seq) < KB.longest:
            if tokens[j] in _IN_PHRASE and seq and (*seq, tokens[j]) not in KB.phrases:
                j += 1  # "made by people" is a phrase of its own; "eat from a bowl" is not
                continue
            if seq and seq[-1] in _QUANTIFIED and tokens[j] in _QUANTIFIERS:  # "carry lots of …"
                j += 2 if j + 1 < n and tokens[j + 1] == "of" else 1
                continue
            if tokens[j] in (",", "?", ".", "!", ";", ":"):
                break
            seq.append(tokens[j])
            positions.append(j)
            hit = KB.phrases.get(tuple(seq))
            if hit is not None and not (
                # "live in" (fish live in it) but not "live in the forest"
                len(seq) > 1
                and seq[-1] in _TRAILING
                and _next(tokens, j) not in (IT, None, "?", ".", "!", ",")
            ):
                best = (hit, positions[-1])
            j += 1
        if best is not None and len(best[0]) == 1 and _is_verb(tokens[i]):
            # "eat soup out of it", "write notes on it": the verb with the preposition
            for k in range(best[1] + 1, min(best[1] + 4, n - 1)):
                if tokens[k] in _TRAILING and _next(tokens, k) == IT:
                    hit = KB.phrases.get((tokens[i], tokens[k]))
                    if hit is not None:
                        best = (hit, k)
                    break
                if tokens[k] in (",", "?", ".", IT):
                    break
        if token == "when" and clauses and (best is None or best[0] == ()):
            break  # "does it make a sound when played?": the rest only says when
        if tokens[i] in ("inside", "outside") and (
            # "red inside", "spiky on the outside", "hammers inside"
            (clauses and clauses[-1].relation in ("is", "has", "made"))
            or _next(tokens, i) not in (None, "?", ".", "!", ",", "or", "and", IT)  # "in shoes"
        ):
            i += 1
            continue
        if (
            i >= 2
            and tokens[i - 1] == "to"
            and any(t in _MOTION for t in tokens[max(0, i - 4) : i - 1])
        ):
            i = (best[1] if best else i) + 1  # "ride it to school": where to, not what it is
            continue
        if best is not None and best[0] == ():  # words that add nothing ("on top", "in place")
            i = best[1] + 1
            continue
        single = best is not None and best[1] == i
        if (best is None or single) and token in _PERCEIVE and _next(tokens, i) == IT:
            i += 1  # "would you hear it at a concert?": the place is what is asked
            continue
        if (
            (best is None or single)
            and token in ("work", "function", "operate", "run")
            and (
                (i + 1 < n and tokens[i + 1] in ("without", "with", "on"))
                or (i > 0 and tokens[i - 1] == "to")  # "does it need water to work?"
            )
        ):
            i += 1  # "does it work without electricity?": the rest says what is asked
            continue
        if (
            best is None
            or (single and tokens[i] in _SKIP)
            or (single and tokens[i] in _OF_WORDS and i + 1 < n and tokens[i + 1] == "of")
        ):
            i += 1
            continue
        meaning, last = best
        if _subject(tokens, i, last, meaning):
            subjects.extend(Clause("is", c, False) for _, c, _ in meaning)
            i = last + 1
            continue
        if (
            clauses
            and clauses[-1].relation in ("use", "act")
            and object_of == i
            and not any(fixed or _is_verb(c) for fixed, c, _ in meaning)
        ):
            # "does it display images": the verb says it; an object the knowledge base does
            # not pair with the verb ("display_image") would only narrow it by accident
            i = last + 1
            continue
        purpose = i > 0 and (
            tokens[i - 1] == "for" or (tokens[i - 1] in ("to", "in") and "use" in tokens[:i])
        )
        if surface[i].endswith("ing") and last + 1 < n and tokens[last + 1] in KB.relations:
            purpose = True  # "an eating utensil", "a cutting tool": what it is for
        before = [t for t in tokens[:i] if t not in _IN_PHRASE]
        following = _next(tokens, last)
        if (
            before
            and before[-1] in _HAS_FRAME
            and all("has" not in KB.relations.get(c, ()) for _, c, _ in meaning)
            and following is not None
            and "has" in KB.relations.get(following, ())
        ):
            i = last + 1  # "does it have a big seed?": the part is asked, not its size
            continue
        for fixed, concept, negated_word in meaning:
            relation = fixed or _relation(tokens, surface, i, last, concept)
            if concept == "carry" and relation != "act" and not purpose:
                relation, concept = "is", "carryable"  # "can you carry it?": light enough
            clauses.append(Clause(relation, concept, negated_word != without, purpose))
        object_of = _next_index(tokens, last)
        without = False
        i = last + 1
    return clauses or subjects, disjunctive, negated


_AUXILIARIES = {"do", "can", "could", "would", "will", "might", "should", "be"}


def _subject(tokens: list[str], start: int, end: int, meaning: tuple) -> bool:
    """Whether a noun is the subject of the question's verb ("do rabbits eat it?", "do fish
    live in it?"): it stands right after the opening auxiliary and a verb acting on the
    thing follows. Such a noun says who does something, not what the thing is."""
    if any(_is_verb(concept) for _, concept, _ in meaning):
        return False
    before = [t for t in tokens[:start] if t not in ("a", "an", "the", "most", "some", "many")]
    if len(before) != 1 or before[0] not in _AUXILIARIES:
        return False
    return IT in tokens[end + 1 :] and IT not in tokens[:start]


def _next(tokens: list[str], j: int) -> str | None:
    """The next token after ``j`` that is not an article."""
    for token in tokens[j + 1 :]:
        if token not in ("a", "an", "the", "your", "my", "their", "some"):
            return token
    return None


def _next_index(tokens: list[str], j: int) -> int:
    """The index of the next token after ``j`` that is not an article."""
    for k in range(j + 1, len(tokens)):
        if tokens[k] not in ("a", "an", "the", "your", "my", "their", "some"):
            return k
    return len(tokens)


def _is_verb(concept: str) -> bool:
    relations = KB.relations.get(concept, set())
    return bool(relations & {"use", "act"})


_BE = {"be", IT}
_PARTICIPLE = re.compile(r".+(ed|en)$")
_PARTICIPLES = {
    "worn", "ridden", "eaten", "flown", "driven", "drawn", "written", "seen", "held", "kept",
    "found", "made", "built", "sold", "bought", "thrown", "grown", "known", "played", "used",
    "hung", "dug", "cut", "hit", "put", "sat", "slept", "swum", "caught", "taught",
}  # fmt: skip


def _relation(tokens: list[str], surface: list[str], start: int, end: int, concept: str) -> str:
    """The relation a concept is asked about in, from the words around it."""
    previous = [t for t in tokens[:start] if t not in ("a", "an", "the", "your", "my", "some")]
    if previous and previous[-1] in _AT_FRAME and previous[-1] != "from":
        return "at"
    relations = KB.relations.get(concept, set())
    if previous and previous[-1] == "with":
        return "with"  # "used with paint", "played with a bow": in any relation
    if previous and previous[-1] in _HAS_FRAME and "has" in relations:
        return "has"  # "does it have bark?", "does it have a display?"
    if len(previous) > 1 and previous[-1] == "of" and previous[-2] in _MADE_FRAME:
        return "made"
    if _is_verb(concept) and not KB.relations[concept] <= {"is", "has", "made", "at"}:
        # "can you eat it" / "do monkeys eat it": it is the object
        for k in range(end + 1, min(end + 4, len(tokens))):
            if tokens[k] == IT:
                return "use"
            if tokens[k] in (",", "?", "."):
                break
        word = surface[start]
        participle = word in _PARTICIPLES or (_PARTICIPLE.match(word) and word != tokens[start])
        if participle and start > 0:
            before = [t for t in tokens[:start] if t not in _SKIP or t in _BE]
            if before and before[-1] in _BE:
                return "use"
        for k in range(start - 1, -1, -1):
            token, word = tokens[k], surface[k]
            if token == IT:
                return "act"
            if word in _SUBJECTS or token in _PURPOSE:
                return "use"
        return "act"
    found = "is"
    for k in range(start - 1, max(start - 5, -1), -1):
        token = tokens[k]
        if token in _MADE_FRAME:
            return "made"
        if token in ("from", "of"):  # "made from wood", but "comes from space"
            found = "at" if token == "from" else found
            continue
        if token in _HAS_FRAME:
            return "has"
        if token in _AT_FRAME:
            return "at"
        if token in ("be", IT) or _is_verb(token):
            break
    return found


def yes_set(question: str) -> frozenset[str] | None:
    """The candidates for which the answer to ``question`` is Yes; None when it is Invalid."""
    test = read(question)
    if test is None:
        return None
    return frozenset(word for word in CANDIDATES if test(word))


def answer(question: str, word: str) -> str:
    """The offline oracle's reply to ``question`` when the answer is ``word``."""
    test = read(question)
    if test is None:
        return "Invalid"
    return "Yes" if test(word) else "No"


def _features() -> dict[str, Feature]:
    features = {}
    for name, question in KB.data["features"].items():
        words = yes_set(question)
        if words is None:
            raise ValueError(f"the oracle cannot read its own feature question {question!r}")
        features[name] = Feature(name=name, question=question, words=words)
    return features


FEATURES = _features()


def has(word: str, feature: str) -> bool:
    """Whether ``feature`` holds for candidate ``word``."""
    return word in FEATURES[feature].words


def load(path: Path = PATH) -> KnowledgeBase:
    """Read and check a knowledge file (the module reads ``knowledge.json`` at import)."""
    return KnowledgeBase(path)
