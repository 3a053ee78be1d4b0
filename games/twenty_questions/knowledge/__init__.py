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

Reading a question (:func:`.reader.read`) turns it into a test on a word, or None when the question is
not a yes/no question about meaning (letters, spelling, "what colour is it?", nonsense). The test
is the same for every word, so the questioner's idea of what a question means (:func:`.oracle.yes_set`)
always matches the oracle's answer.

The package, in the order each part builds on the last: :mod:`.lexicon` (lemmas and the closed
classes of words), :mod:`.base` (the knowledge base, read on first use, not at import),
:mod:`.clauses` and :mod:`.reader` (reading a question) and :mod:`.oracle` (answers and the
questioner's features). Import from those modules; the names below are the package's short list.
"""

from games.twenty_questions.knowledge.base import PATH, KnowledgeBase, knowledge_base, load
from games.twenty_questions.knowledge.oracle import Feature, answer, features, has, yes_set
from games.twenty_questions.knowledge.reader import read

__all__ = [
    "PATH",
    "Feature",
    "KnowledgeBase",
    "answer",
    "features",
    "has",
    "knowledge_base",
    "load",
    "read",
    "yes_set",
]
