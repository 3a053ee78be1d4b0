"""Offline agents follow the rule people are given: no clue repeats or recombines an earlier clue
of the same game, whoever said it. The check here is written apart from the agent's own."""

from __future__ import annotations

import asyncio
import re

from games.runner import play_game
from games.undercover.agents import make_offline_agent
from games.undercover.engine import ENGINE

FILLER = {"a", "an", "and", "the", "of", "to", "in", "on", "at", "for", "with", "it", "its", "is"}


def phrases(text: str) -> list[frozenset[str]]:
    """Each comma- or "and"-separated phrase of a clue as a set of its words (plural s dropped)."""
    found = []
    for part in re.split(r"[,;.!?]|\band\b", text.lower()):
        words = {w.rstrip("s") for w in re.findall(r"[a-z0-9]+", part) if w not in FILLER}
        if words:
            found.append(frozenset(words))
    return found


def repeated(text: str, earlier: list[str]) -> bool:
    said = {phrase for clue in earlier for phrase in phrases(clue)}
    return any(phrase in said for phrase in phrases(text))


def test_the_checker_catches_a_repeat_and_a_recombination():
    assert repeated("rescue, and hoses", ["rescue"])
    assert repeated("Hoses!", ["rescue, and hoses"])
    assert not repeated("red engine", ["rescue, and hoses"])


def test_over_200_offline_games_at_most_one_clue_in_a_hundred_repeats_an_earlier_phrase():
    async def play_all():
        clues = repeats = votes_capped = 0
        for game in range(200):
            players = 4 + game % 5
            config = ENGINE.new_config(game, players=players)
            agents = {
                seat: make_offline_agent("descriptor", seed=game * 10 + seat)
                for seat in range(players)
            }
            state, _ = await play_game(ENGINE, config, agents)
            votes_capped += state.end == "vote_cap"
            earlier: list[str] = []
            for _, _, text in state.clues:
                if text is None:
                    continue
                clues += 1
                repeats += repeated(text, earlier)
                earlier.append(text)
        return clues, repeats, votes_capped

    clues, repeats, votes_capped = asyncio.run(play_all())
    assert clues > 1500
    assert repeats <= clues / 100, (repeats, clues)
    # fewer than 10% of the games end by the cap on vote rounds
    assert votes_capped < 20, votes_capped
