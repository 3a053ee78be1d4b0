"""Do the offline Undercover agents treat a person fairly? Prints JSON figures.

Each simulated table has one seat played by a scripted "reasonable person" whose clues come from a
held-out list written in people's phrasing (``benchmarks/undercover_people.py``), the other seats
by the offline agent. Only pairs whose two words both have held-out clues are played. Figures:

- ``person_normal_first_out``: of the games where the person holds the normal word and someone is
  voted out, the share where the person is the first one out; ``chance`` is 1/players, and
  ``ratio`` their quotient (target: at most 1.5).
- ``difference_found``: the share of games the normal players win (the difference is voted out),
  over the mixed tables and over all-agent tables of the same pairs.
- ``ended_by_vote_cap``: the share of games that no vote ended (the cap on vote rounds did), and
  ``clues_repeating``: the share of clues that repeat or recombine an earlier clue of their game
  (:func:`games.undercover.agents.repeats`), with ``passes``, the share of turns passed.
- ``vague_person``: the same figures at tables where the person's clues fit no word's vocabulary
  (like a study's pilot: "Pilot 0 offers plain idea number 1 about it.") and the person abstains.

    .venv/bin/python benchmarks/undercover_fairness.py --games 2000      # the full figures
    .venv/bin/python benchmarks/undercover_fairness.py --games 200       # a quick look
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.undercover_people import PEOPLE_CLUES, ScriptedPerson  # noqa: E402
from games.runner import play_game  # noqa: E402
from games.undercover.agents import make_offline_agent, repeats  # noqa: E402
from games.undercover.engine import ENGINE  # noqa: E402
from games.undercover.words import PAIRS  # noqa: E402

COVERED = [pair for pair in PAIRS if all(word in PEOPLE_CLUES for word in pair)]


def first_out(state) -> int | None:
    for _, eliminated in state.vote_rounds:
        if eliminated is not None:
            return eliminated
    return None


class VaguePerson:
    """A person whose clues carry no word's vocabulary (like a study's pilot) and who abstains in
    every vote: whether a game ends by a vote is then up to the agents."""

    async def act(self, observation: dict) -> dict:
        if observation["phase"] == "vote":
            return {"type": "vote", "target": None}
        number = len(observation["clues"]) + 1
        seat = observation["seat"]
        return {"type": "clue", "text": f"Pilot {seat} offers plain idea number {number} about it."}


async def one_game(seed: int, players: int, person: bool, vague: bool = False) -> dict:
    rng = random.Random(f"table:{seed}")  # independent of the engine's own draws from seed
    config = ENGINE.new_config(seed, players=players, pair=rng.choice(COVERED))
    person_seat = rng.randrange(players) if person else None
    agents = {
        seat: (VaguePerson() if vague else ScriptedPerson(seed=seed))
        if seat == person_seat
        else make_offline_agent("descriptor", seed=seed * 31 + seat)
        for seat in range(players)
    }
    state, _ = await play_game(ENGINE, config, agents)
    agent_clues = [
        (i, text) for i, (_, seat, text) in enumerate(state.clues) if seat != person_seat
    ]
    return {
        "person_seat": person_seat,
        "person_normal": person_seat is not None and person_seat != config["difference_seat"],
        "first_out": first_out(state),
        "found": state.winner == "normal",
        "vote_cap": state.end == "vote_cap",
        "agent_turns": len(agent_clues),
        "passes": sum(text is None for _, text in agent_clues),
        "repeating": sum(
            text is not None and repeats(text, [t for _, _, t in state.clues[:i] if t is not None])
            for i, text in agent_clues
        ),
    }


def summarise(games: list[dict], players: int) -> dict:
    normal = [g for g in games if g["person_normal"] and g["first_out"] is not None]
    out_first = sum(g["first_out"] == g["person_seat"] for g in normal)
    rate = out_first / len(normal) if normal else 0.0
    chance = 1 / players
    as_difference = [g for g in games if g["person_seat"] is not None and not g["person_normal"]]
    return {
        "games": len(games),
        "person_normal_games_with_a_vote_out": len(normal),
        "person_normal_first_out": round(rate, 4),
        "chance": round(chance, 4),
        "ratio": round(rate / chance, 3),
        "difference_found": round(sum(g["found"] for g in games) / len(games), 4),
        "ended_by_vote_cap": round(sum(g["vote_cap"] for g in games) / len(games), 4),
        "clues_repeating": round(
            sum(g["repeating"] for g in games)
            / max(sum(g["agent_turns"] - g["passes"] for g in games), 1),
            4,
        ),
        "passes": round(
            sum(g["passes"] for g in games) / max(sum(g["agent_turns"] for g in games), 1), 4
        ),
        "difference_found_when_the_person_is_the_difference": round(
            sum(g["found"] for g in as_difference) / len(as_difference), 4
        )
        if as_difference
        else None,
    }


async def run(games: int, players: int, seed: int) -> dict:
    mixed = [await one_game(seed + i, players, True) for i in range(games)]
    agents = [await one_game(seed + i, players, False) for i in range(games)]
    vague = [await one_game(seed + i, players, True, vague=True) for i in range(games)]
    all_agents = summarise(agents, players)
    return {
        "pairs": len(COVERED),
        "players": players,
        "mixed": summarise(mixed, players),
        "all_agents": {
            key: all_agents[key]
            for key in (
                "games",
                "difference_found",
                "ended_by_vote_cap",
                "clues_repeating",
                "passes",
            )
        },
        "vague_person": summarise(vague, players),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=2000, help="tables of each kind")
    parser.add_argument("--players", type=int, default=5, help="seats per table (4-8)")
    parser.add_argument("--seed", type=int, default=0, help="first table's seed")
    args = parser.parse_args()
    started = time.perf_counter()
    figures = asyncio.run(run(args.games, args.players, args.seed))
    figures["seconds"] = round(time.perf_counter() - started, 1)
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
