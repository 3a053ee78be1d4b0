"""``python -m games simulate|play undercover``: agents against agents for a quick figure, or a
person at one seat against offline agents, to try the rules in a terminal."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections import Counter
from collections.abc import Callable
from typing import Any, TextIO

from games.agents import make_agent
from games.base import Agent, Event, IllegalMove
from games.runner import next_event, play_game
from games.undercover.engine import DEFAULT_MAX_VOTE_ROUNDS, ENGINE, State
from games.undercover.rules import RULES_FOR_TERMINAL as RULES

GAME = "undercover"
ENDS = ("voted_out", "three_left", "vote_cap", "abort")


def add_simulate(subparsers: Any) -> None:
    parser = subparsers.add_parser(GAME, help="agents fill every seat and play N games")
    parser.add_argument("--agent", default="offline:descriptor", help="model spec of every seat")
    parser.add_argument("--players", type=int, default=5, help="4 to 8 seats")
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-vote-rounds", type=int, default=DEFAULT_MAX_VOTE_ROUNDS)
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    parser.set_defaults(func=simulate_command)


def add_play(subparsers: Any) -> None:
    parser = subparsers.add_parser(GAME, help="take one seat against offline agents")
    parser.add_argument("--agent", default="offline:descriptor", help="model spec of the others")
    parser.add_argument("--players", type=int, default=5, help="4 to 8 seats")
    parser.add_argument("--seat", type=int, default=None, help="your seat (default: seeded)")
    parser.add_argument("--seed", type=int, default=None, help="picks the words and roles")
    parser.add_argument("--max-vote-rounds", type=int, default=DEFAULT_MAX_VOTE_ROUNDS)
    parser.set_defaults(func=play_command)


async def simulate(
    agent: str, players: int, games: int, seed: int, max_vote_rounds: int = DEFAULT_MAX_VOTE_ROUNDS
) -> dict[str, Any]:
    """Play ``games`` games with ``agent`` in every seat and count who won and how it ended."""
    wins: Counter[str] = Counter()
    ends: Counter[str] = Counter({end: 0 for end in ENDS})
    vote_rounds = events_played = 0
    started = time.perf_counter()
    for i in range(games):
        config = ENGINE.new_config(seed + i, players=players, max_vote_rounds=max_vote_rounds)
        agents = {
            seat: make_agent(agent, game=GAME, role="player", seed=(seed + i) * 10 + seat)
            for seat in range(players)
        }
        state, events = await play_game(ENGINE, config, agents)
        if state.winner is not None:
            wins[state.winner] += 1
        ends[state.end] += 1
        vote_rounds += len(state.vote_rounds)
        events_played += len(events)
    n = max(games, 1)
    return {
        "game": GAME,
        "agent": agent,
        "players": players,
        "max_vote_rounds": max_vote_rounds,
        "seed": seed,
        "games": games,
        "win_rate": {"normal": wins["normal"] / n, "difference": wins["difference"] / n},
        "ended": dict(ends),
        "mean_vote_rounds": vote_rounds / n,
        "mean_events": events_played / n,
        "seconds": round(time.perf_counter() - started, 3),
    }


def simulate_command(args: argparse.Namespace) -> int:
    if args.games < 1:
        print("--games must be 1 or more", file=sys.stderr)
        return 2
    try:
        ENGINE.new_config(args.seed, players=args.players, max_vote_rounds=args.max_vote_rounds)
    except ValueError as err:
        print(err, file=sys.stderr)
        return 2
    summary = asyncio.run(
        simulate(args.agent, args.players, args.games, args.seed, args.max_vote_rounds)
    )
    if args.json:
        print(json.dumps(summary))
    else:
        rates = summary["win_rate"]
        print(
            f"{summary['games']} games of {args.players} {args.agent} players: normal win rate "
            f"{rates['normal']:.1%}, difference win rate {rates['difference']:.1%}; "
            f"ended by {', '.join(f'{end} {n}' for end, n in summary['ended'].items())}"
        )
    return 0


# ---- a person at one seat -------------------------------------------------------------------


def _clue_line(event: Event, you: int) -> str:
    who = "You" if event["seat"] == you else f"Seat {event['seat']}"
    return f"{who}: {event['text']}" if event["text"] is not None else f"{who} passed."


def _vote_result(state: State, you: int) -> str:
    ballots, eliminated = state.vote_rounds[-1]
    lines = [f"Vote {len(state.vote_rounds)}:"]
    for voter, target in ballots:
        lines.append(f"  seat {voter} -> {'abstained' if target is None else f'seat {target}'}")
    if eliminated is None:
        lines.append("  A tie: no one is out.")
    else:
        lines.append(f"  {'You are' if eliminated == you else f'Seat {eliminated} is'} out.")
    return "\n".join(lines)


def _read_action(phase: str, line: str) -> dict[str, Any]:
    """Turn a typed line into an action; raises IllegalMove with a reason for unusable input."""
    text = line.strip()
    if phase == "speak":
        return {"type": "clue", "text": None if text.lower() == "pass" else text}
    if text.lower() == "abstain":
        return {"type": "vote", "target": None}
    if not text.isdigit():
        raise IllegalMove("type a seat number, or 'abstain'")
    return {"type": "vote", "target": int(text)}


def _ask(state: State, you: int, read: Callable[[str], str], out: TextIO) -> dict[str, Any] | None:
    """Ask the person until the engine accepts their action; None means they quit."""
    prompt = "Your clue> " if state.phase == "speak" else "Your vote (seat number)> "
    while True:
        try:
            line = read(prompt)
        except EOFError:
            return None
        if line.strip().lower() in ("quit", "exit"):
            return None
        try:
            action = _read_action(state.phase, line)
            ENGINE.apply(state, {**action, "seat": you})
        except IllegalMove as err:
            out.write(f"Not accepted: {err.reason}\n")
            continue
        return action


async def _agent_events(state: State, seats: list[int], agents: dict[int, Agent]) -> list[Event]:
    return list(await asyncio.gather(*(next_event(ENGINE, state, s, agents[s]) for s in seats)))


def play(
    config: dict[str, Any],
    you: int,
    agent_spec: str,
    read: Callable[[str], str],
    out: TextIO,
    seed: int = 0,
) -> dict[str, Any]:
    """One terminal game with the person at seat ``you``; returns the person's outcome."""
    agents = {
        seat: make_agent(agent_spec, game=GAME, role="player", seed=seed * 10 + seat)
        for seat in range(config["players"])
        if seat != you
    }
    state = ENGINE.initial(config)
    out.write(RULES.format(cap=config["max_vote_rounds"]) + "\n")
    out.write(f"There are {config['players']} players. You are seat {you}. ")
    out.write(f"Your word is: {ENGINE.word(config, you)}\n\n")
    while not ENGINE.is_over(state):
        seats = ENGINE.to_move(state)
        if state.phase == "speak" and state.turn == 0:
            out.write(f"-- Clue round {state.speaking_round} --\n")
        events = asyncio.run(_agent_events(state, [s for s in seats if s != you], agents))
        if you in seats:
            if state.phase == "vote":
                out.write(f"-- Vote: players still in: {', '.join(map(str, state.alive))} --\n")
            action = _ask(state, you, read, out)
            if action is None:
                state = ENGINE.apply(state, {"type": "abort", "reason": "the player gave up"})
                break
            events.insert(0, {**action, "seat": you})
        for event in events:
            state = ENGINE.apply(state, event)
            if event["type"] == "clue":
                out.write(_clue_line(event, you) + "\n")
        if events[-1]["type"] == "vote" and state.phase != "vote":
            out.write(_vote_result(state, you) + "\n")
    result = ENGINE.outcome(state)[you]
    if state.end == "abort":
        out.write("Game abandoned.\n")
    else:
        out.write(
            f"Game over ({state.end}). You were {result['role']} and you "
            f"{'win' if result['win'] else 'lose'}. The normal word was "
            f"{config['normal_word']!r}; the difference (seat {config['difference_seat']}) "
            f"held {config['difference_word']!r}.\n"
        )
    return result


def play_command(args: argparse.Namespace) -> int:
    seed = args.seed if args.seed is not None else time.time_ns() % 2**31
    try:
        config = ENGINE.new_config(seed, players=args.players, max_vote_rounds=args.max_vote_rounds)
    except ValueError as err:
        print(err, file=sys.stderr)
        return 2
    you = args.seat if args.seat is not None else seed % args.players
    if not 0 <= you < args.players:
        print(f"--seat must be 0 to {args.players - 1}", file=sys.stderr)
        return 2
    play(config, you, args.agent, input, sys.stdout, seed=seed)
    return 0
