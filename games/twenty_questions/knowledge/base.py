"""The knowledge base: the facts of ``knowledge.json`` about the 157 words, read and checked on
first use (:func:`knowledge_base`), not at import."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

from games.twenty_questions import CANDIDATES
from games.twenty_questions.knowledge.lexicon import IRREGULAR, PREP_NORMAL, Lexicon, split_tokens
from games.twenty_questions.names import ALIASES as _ALIASES

PATH = Path(__file__).parent.parent / "knowledge.json"
RELATIONS = ("is", "has", "made", "at", "use", "act")


def _load_json(path: Path) -> dict:
    data = json.loads(path.read_text(encoding="utf-8"))
    if list(data["words"]) != list(CANDIDATES):
        raise ValueError(
            f"{path.name}: the words must be the {len(CANDIDATES)} candidates in order"
        )
    return data


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
            parts.update(split_tokens(key))
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
            lemmas = tuple(self.lemma(t) for t in split_tokens(key))
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
            tuple(self.lemma(t) for t in split_tokens(name)): (float(s), float(w))
            for name, (s, w) in data["references"].items()
        }
        for word in CANDIDATES:
            for name in [word, *_ALIASES.get(word, ())]:
                key = tuple(self.lemma(t) for t in split_tokens(name))
                self.references[key] = (self.size[word], self.weight[word])

    def lemma(self, word: str) -> str:
        return PREP_NORMAL.get(word) or self.lexicon.lemma(word)

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


def load(path: Path = PATH) -> KnowledgeBase:
    """Read and check a knowledge file."""
    return KnowledgeBase(path)


@cache
def knowledge_base() -> KnowledgeBase:
    """The knowledge base of ``knowledge.json``, read once, on first use."""
    return KnowledgeBase()


@cache
def categories() -> dict[str, str]:
    """Each candidate's first class ("fruit"), or "thing"."""
    kb = knowledge_base()
    return {
        word: next(iter(kb._parse(text)["class"]), "thing")
        for word, text in kb.data["words"].items()
    }


def __getattr__(name: str):
    """``KB`` and ``CATEGORIES``: :func:`knowledge_base` and :func:`categories`, read when first
    asked for."""
    if name == "KB":
        return knowledge_base()
    if name == "CATEGORIES":
        return categories()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
