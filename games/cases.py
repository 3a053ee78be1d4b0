"""The sequence of game configs that a model experiment and a human study share.

Case ``k`` of a sequence with seed ``s`` is the same config wherever it is played: test case ``k``
of ``python -m games experiment --seed s`` and round ``k + 1`` of every participant of a study with
seed ``s``. So human round t and model round t meet the same word (or word pair), and the curves
are comparable by construction (DESIGN, "Facts from the papers").

Words are drawn without replacement: a sequence walks through a seeded shuffle of all the
candidates (157 Twenty Questions words, or the Undercover pairs) before any repeats, and a longer
sequence goes on with a fresh shuffle (a new *cycle*). Memory of "the secret word was X" can then
never pass for learning within one cycle.
"""

from __future__ import annotations

import random
from functools import lru_cache
from typing import Any

from games import get_engine
from games.base import Config


def _seed(*parts: object) -> int:
    return random.Random(":".join(str(p) for p in parts)).randrange(2**31)


def case_seed(seed: int, case: int) -> int:
    """The seed of case ``case``: the same in every setting, model, sample and participant."""
    return _seed(seed, "case", case)


def _pool(game: str) -> list[Any]:
    if game == "twenty-questions":
        from games.twenty_questions import CANDIDATES

        return list(CANDIDATES)
    from games.undercover.words import PAIRS

    return list(PAIRS)


@lru_cache(maxsize=256)
def _cycle(game: str, seed: int, cycle: int) -> tuple[Any, ...]:
    pool = _pool(game)
    random.Random(f"{seed}:{game}:cycle:{cycle}").shuffle(pool)
    return tuple(pool)


def case_item(game: str, seed: int, case: int) -> Any:
    """The word (Twenty Questions) or word pair (Undercover) of case ``case`` (0-based)."""
    if case < 0:
        raise ValueError(f"case must be 0 or more, not {case}")
    order = _cycle(game, seed, case // len(_pool(game)))
    return order[case % len(order)]


def case_config(game: str, seed: int, case: int, language: str = "en", **options: Any) -> Config:
    """The game config of case ``case``; ``options`` are the engine's (``players`` for
    Undercover, ``max_questions`` for Twenty Questions). The word comes from the sequence; the
    rest of the config (the difference seat, which word of a pair is the difference's) from
    :func:`case_seed`, so it is the same for every player of the case too. In another
    ``language`` the case is the same word: Undercover's pair in that language's words, Twenty
    Questions' canonical answer with the language's names (:mod:`games.languages`)."""
    from games import languages

    item = case_item(game, seed, case)
    if game == "twenty-questions":
        if language != "en":
            options["language"] = language
        return get_engine(game).new_config(case_seed(seed, case), answer=item, **options)
    pair = languages.undercover_pair(item, language)
    return get_engine(game).new_config(case_seed(seed, case), pair=pair, **options)
