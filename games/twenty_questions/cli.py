"""``python -m games simulate|play twenty-questions``: agents against agents for a quick figure,
or a person against the offline oracle in the terminal to feel the rules."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections.abc import Callable
from typing import Any, TextIO

from games.agents import make_agent
from games.base import IllegalMove
from games.runner import next_event, play_game
from games.twenty_questions import CANDIDATES, ndcg_reward
from games.twenty_questions.engine import ENGINE, ORACLE, QUESTIONER
from games.twenty_questions.rules import RULES_FOR_TERMINAL as RULES

GAME = "twenty-questions"


def add_simulate(subparsers: Any) -> None:
    parser = subparsers.add_parser(GAME, help="a questioner and an oracle play N games")
    parser.add_argument("--questioner", default="offline:infogain", help="model spec")
    parser.add_argument("--oracle", default="offline:kb", help="model spec")
    parser.add_argument(
        "--games",
        type=int,
        default=len(CANDIDATES),
        help=f"number of games; a multiple of {len(CANDIDATES)} plays every word in paper order, "
        "any other number draws the answers from the seed",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    parser.set_defaults(func=simulate_command)


def add_play(subparsers: Any) -> None:
    parser = subparsers.add_parser(GAME, help="ask the questions yourself")
    parser.add_argument("--oracle", default="offline:kb", help="model spec of the oracle")
    parser.add_argument("--seed", type=int, default=None, help="picks the answer word")
    parser.set_defaults(func=play_command)


def answers_for(games: int, seed: int) -> list[str]:
    """The answer word of each game: every word in order when ``games`` is a multiple of the
    candidate count, so a run over all words is comparable with the paper; else seeded draws."""
    if games % len(CANDIDATES) == 0:
        return list(CANDIDATES) * (games // len(CANDIDATES))
    return [ENGINE.new_config(seed + i)["answer"] for i in range(games)]


async def simulate(questioner: str, oracle: str, games: int, seed: int) -> dict[str, Any]:
    """Play ``games`` games and summarise them."""
    rewards: list[float] = []
    questions: list[int] = []
    missed: list[str] = []
    started = time.perf_counter()
    for i, word in enumerate(answers_for(games, seed)):
        agents = {
            QUESTIONER: make_agent(questioner, game=GAME, role="questioner", seed=seed + i),
            ORACLE: make_agent(oracle, game=GAME, role="oracle", seed=seed + i),
        }
        state, _ = await play_game(ENGINE, ENGINE.new_config(seed + i, answer=word), agents)
        result = ENGINE.outcome(state)[QUESTIONER]
        rewards.append(result["reward"])
        questions.append(result["questions"])
        if not result["found"]:
            missed.append(word)
    n = max(games, 1)
    return {
        "game": GAME,
        "questioner": questioner,
        "oracle": oracle,
        "seed": seed,
        "games": games,
        "mean_reward": sum(rewards) / n,
        "found_rate": (games - len(missed)) / n,
        "mean_questions": sum(questions) / n,
        "not_found": missed,
        "seconds": round(time.perf_counter() - started, 3),
    }


def simulate_command(args: argparse.Namespace) -> int:
    if args.games < 1:
        print("--games must be 1 or more", file=sys.stderr)
        return 2
    summary = asyncio.run(simulate(args.questioner, args.oracle, args.games, args.seed))
    if args.json:
        print(json.dumps(summary))
    else:
        print(
            f"{summary['games']} games, {args.questioner} asking {args.oracle}: "
            f"mean reward {summary['mean_reward']:.4f}, found {summary['found_rate']:.1%}, "
            f"{summary['mean_questions']:.2f} questions on average"
        )
    return 0


def play(
    answer: str, oracle_spec: str, read: Callable[[str], str], out: TextIO, seed: int = 0
) -> dict[str, Any]:
    """One terminal game: ``read`` returns the person's next line, ``out`` receives the replies."""
    oracle = make_agent(oracle_spec, game=GAME, role="oracle", seed=seed)
    state = ENGINE.initial(ENGINE.new_config(seed, answer=answer))
    out.write(RULES + "\n")
    while not ENGINE.is_over(state):
        k = len(state.turns) + 1
        try:
            line = read(f"Question {k}> ")
        except EOFError:
            line = "quit"
        if line.strip().lower() in ("quit", "exit"):
            state = ENGINE.apply(state, {"type": "abort", "reason": "the player gave up"})
            break
        try:
            state = ENGINE.apply(state, {"type": "question", "seat": QUESTIONER, "text": line})
        except IllegalMove as err:
            out.write(f"Not accepted: {err.reason}\n")
            continue
        if ENGINE.to_move(state) == [ORACLE]:
            event = asyncio.run(next_event(ENGINE, state, ORACLE, oracle))
            state = ENGINE.apply(state, event)
            if event["type"] == "void":
                out.write(f"The oracle could not answer ({event['reason']}); not counted.\n")
                continue
        out.write(f"{state.turns[-1].answer}\n")
    result = ENGINE.outcome(state)[QUESTIONER]
    if result["found"]:
        out.write(
            f"You found it: {answer}, at question {result['questions']}. "
            f"Reward {ndcg_reward(result['questions']):.3f}.\n"
        )
    else:
        out.write(f"Not found. The word was {answer}. Reward 0.\n")
    return result


def play_command(args: argparse.Namespace) -> int:
    seed = args.seed if args.seed is not None else time.time_ns() % 2**31
    answer = ENGINE.new_config(seed)["answer"]
    play(answer, args.oracle, input, sys.stdout, seed=seed)
    return 0
