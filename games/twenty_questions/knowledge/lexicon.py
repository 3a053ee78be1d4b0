"""The words of the offline oracle: a lemmatiser that prefers the knowledge base's lemmas, and the
closed classes of words (pronouns, frames, fillers) the question reader looks for."""

from __future__ import annotations

import re
from functools import lru_cache

# ---------------------------------------------------------------------------------------------
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
PRONOUNS = {"it", "its", "they", "them", "this", "itself", "themselves", "thing"}
SUBJECTS = {
    "you", "i", "we", "people", "person", "someone", "somebody", "anyone", "anybody", "one",
    "human", "humans", "user", "users", "u", "ya",
}  # fmt: skip
PURPOSE = {"use", "for", "to", "help", "let", "allow", "able"}
SKIP = {
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
OF_WORDS = {"piece", "kind", "type", "sort", "form", "member", "example", "variety", "bit", "item"}
HAS_FRAME = {
    "have", "contain", "include", "with", "feature", "possess", "come", "use", "need", "require",
    "take", "consume",
}  # fmt: skip
MADE_FRAME = {"make", "build", "construct", "consist", "compose", "craft", "manufacture"}
AT_FRAME = {
    "in", "on", "at", "near", "inside", "around", "under", "into", "onto", "by", "beside",
    "next", "among", "within", "across", "from", "beneath", "below", "above", "over", "outside",
    "part",
}  # fmt: skip
PREP_NORMAL = {"off": "from", "into": "in", "onto": "on"}
TRAILING = {"in", "on", "at", "with", "from"}  # prepositions that may end a verb phrase
IN_PHRASE = {"a", "an", "the", "your", "my", "their", "some", IT, "you", "us", "me", "people"}
PERCEIVE = {"hear", "see", "find", "notice", "meet", "encounter", "spot"}
QUANTIFIERS = {"lot", "lots", "many", "several", "much", "plenty", "loads", "bunch"}
QUANTIFIED = {"carry", "have", "hold", "contain", "store", "seat", "fit", "transport"}
MOTION = {"ride", "drive", "take", "go", "bring", "carry", "walk", "fly", "sail", "travel", "run"}
NEGATIONS = {"not", "never", "no", "non"}
# Words that may surround a list of candidate names without changing its meaning.
FILLER = {
    "is", "it", "a", "an", "the", "one", "of", "these", "those", "following", "either", "or",
    "and", "any", "maybe", "perhaps", "could", "be", "among", "in", "this", "list", "set",
    "group", "word", "words", "answer", "candidate", "candidates", "option", "options",
    "choices", "something", "thing", "belong", "to", "are", "they", "them", "my",
    "guess", "i", "think", "s", "two", "three", "few", ",", ":", ";", ".", "?", "!",
    "/", "(", ")", "-", "possibly", "probably",
}  # fmt: skip


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


def split_tokens(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+|[?,.;:!/()]", text.lower().replace("-", " "))
