"""The clauses of a question: which concepts it asks about, in which relation ("can you eat it?"
asks ``use:eat``), joined by "or" or negated."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from games.twenty_questions.knowledge.base import knowledge_base
from games.twenty_questions.knowledge.lexicon import (
    AT_FRAME,
    HAS_FRAME,
    IN_PHRASE,
    IT,
    MADE_FRAME,
    MOTION,
    NEGATIONS,
    OF_WORDS,
    PERCEIVE,
    PRONOUNS,
    PURPOSE,
    QUANTIFIED,
    QUANTIFIERS,
    SKIP,
    SUBJECTS,
    TRAILING,
    split_tokens,
)

Test = Callable[[str], bool]


@dataclass(frozen=True)
class Clause:
    relation: str | None
    concept: str
    negated: bool
    loose: bool = False  # "used for writing": writing with it, on it or in it


def read_clauses(text: str) -> tuple[list[Clause], bool, bool]:
    """The concepts a question asks about, whether it joins them with "or", and whether the
    whole question is negated ("is it not alive?")."""
    kb = knowledge_base()
    words = split_tokens(text)
    tokens: list[str] = []  # lemmas, with IT for the thing asked about
    surface: list[str] = []
    for word in words:
        if word in PRONOUNS:
            tokens.append(IT)
        else:
            tokens.append(kb.lemma(word))
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
        if token in NEGATIONS:
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
        while j < n and len(seq) < kb.longest:
            if tokens[j] in IN_PHRASE and seq and (*seq, tokens[j]) not in kb.phrases:
                j += 1  # "made by people" is a phrase of its own; "eat from a bowl" is not
                continue
            if seq and seq[-1] in QUANTIFIED and tokens[j] in QUANTIFIERS:  # "carry lots of …"
                j += 2 if j + 1 < n and tokens[j + 1] == "of" else 1
                continue
            if tokens[j] in (",", "?", ".", "!", ";", ":"):
                break
            seq.append(tokens[j])
            positions.append(j)
            hit = kb.phrases.get(tuple(seq))
            if hit is not None and not (
                # "live in" (fish live in it) but not "live in the forest"
                len(seq) > 1
                and seq[-1] in TRAILING
                and _next(tokens, j) not in (IT, None, "?", ".", "!", ",")
            ):
                best = (hit, positions[-1])
            j += 1
        if best is not None and len(best[0]) == 1 and _is_verb(tokens[i]):
            # "eat soup out of it", "write notes on it": the verb with the preposition
            for k in range(best[1] + 1, min(best[1] + 4, n - 1)):
                if tokens[k] in TRAILING and _next(tokens, k) == IT:
                    hit = kb.phrases.get((tokens[i], tokens[k]))
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
            and any(t in MOTION for t in tokens[max(0, i - 4) : i - 1])
        ):
            i = (best[1] if best else i) + 1  # "ride it to school": where to, not what it is
            continue
        if best is not None and best[0] == ():  # words that add nothing ("on top", "in place")
            i = best[1] + 1
            continue
        single = best is not None and best[1] == i
        if (best is None or single) and token in PERCEIVE and _next(tokens, i) == IT:
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
            or (single and tokens[i] in SKIP)
            or (single and tokens[i] in OF_WORDS and i + 1 < n and tokens[i + 1] == "of")
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
        if surface[i].endswith("ing") and last + 1 < n and tokens[last + 1] in kb.relations:
            purpose = True  # "an eating utensil", "a cutting tool": what it is for
        before = [t for t in tokens[:i] if t not in IN_PHRASE]
        following = _next(tokens, last)
        if (
            before
            and before[-1] in HAS_FRAME
            and all("has" not in kb.relations.get(c, ()) for _, c, _ in meaning)
            and following is not None
            and "has" in kb.relations.get(following, ())
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
    kb = knowledge_base()
    relations = kb.relations.get(concept, set())
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
    kb = knowledge_base()
    previous = [t for t in tokens[:start] if t not in ("a", "an", "the", "your", "my", "some")]
    if previous and previous[-1] in AT_FRAME and previous[-1] != "from":
        return "at"
    relations = kb.relations.get(concept, set())
    if previous and previous[-1] == "with":
        return "with"  # "used with paint", "played with a bow": in any relation
    if previous and previous[-1] in HAS_FRAME and "has" in relations:
        return "has"  # "does it have bark?", "does it have a display?"
    if len(previous) > 1 and previous[-1] == "of" and previous[-2] in MADE_FRAME:
        return "made"
    if _is_verb(concept) and not kb.relations[concept] <= {"is", "has", "made", "at"}:
        # "can you eat it" / "do monkeys eat it": it is the object
        for k in range(end + 1, min(end + 4, len(tokens))):
            if tokens[k] == IT:
                return "use"
            if tokens[k] in (",", "?", "."):
                break
        word = surface[start]
        participle = word in _PARTICIPLES or (_PARTICIPLE.match(word) and word != tokens[start])
        if participle and start > 0:
            before = [t for t in tokens[:start] if t not in SKIP or t in _BE]
            if before and before[-1] in _BE:
                return "use"
        for k in range(start - 1, -1, -1):
            token, word = tokens[k], surface[k]
            if token == IT:
                return "act"
            if word in SUBJECTS or token in PURPOSE:
                return "use"
        return "act"
    found = "is"
    for k in range(start - 1, max(start - 5, -1), -1):
        token = tokens[k]
        if token in MADE_FRAME:
            return "made"
        if token in ("from", "of"):  # "made from wood", but "comes from space"
            found = "at" if token == "from" else found
            continue
        if token in HAS_FRAME:
            return "has"
        if token in AT_FRAME:
            return "at"
        if token in ("be", IT) or _is_verb(token):
            break
    return found
