"""A policy written from game statistics, without a language model (the offline set-up).

The paper's policy extraction asks a model to turn games into advice (§3.2). Offline there is no
model, yet the pipeline (job, progress, stored policy, agents reading it) should still run end to
end, so this writer derives the advice from counts over the same games instead: in Twenty
Questions, which questions split the secret words most evenly (a question answered Yes in about
half of the games halves the candidates, the information-gain principle) and how long winning games
took; in Undercover, how each role fared and what the winners' clues looked like. It is
deterministic: the same games give the same text.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Iterable
from typing import Any

from games import get_engine

Game = dict[str, Any]  # {"config", "events", "seat", "reward"}: a table or experiment record
SPACES = re.compile(r"\s+")
TOP_QUESTIONS = 5


def _question_key(text: str) -> str:
    return SPACES.sub(" ", text.strip().lower()).rstrip("?").strip()


def split_quality(yes: int, no: int) -> float:
    """Binary entropy (bits) of a question's answers: 1.0 when it splits the words in half.

    >>> split_quality(5, 5), split_quality(4, 0)
    (1.0, 0.0)
    """
    total = yes + no
    if not yes or not no:
        return 0.0
    p = yes / total
    return -(p * math.log2(p) + (1 - p) * math.log2(1 - p))


def twenty_questions_stats(games: Iterable[Game]) -> dict[str, Any]:
    """Per question: how often it was asked and answered Yes/No; per game: found and length."""
    engine = get_engine("twenty-questions")
    asked: dict[str, Counter[str]] = defaultdict(Counter)
    spelling: dict[str, str] = {}
    found_lengths: list[int] = []
    rewards: list[float] = []
    games = list(games)
    for game in games:
        state = engine.replay(game["config"], game["events"])
        outcome = engine.outcome(state)[0]
        rewards.append(float(game.get("reward", outcome["reward"])))
        if outcome["found"]:
            found_lengths.append(outcome["questions"])
        for turn in state.turns:
            if turn.guess is not None or turn.answer not in ("Yes", "No"):
                continue
            key = _question_key(turn.question)
            spelling.setdefault(key, turn.question.strip())
            asked[key][turn.answer] += 1
    return {
        "games": len(games),
        "found": len(found_lengths),
        "mean_reward": sum(rewards) / len(rewards) if rewards else 0.0,
        "found_lengths": found_lengths,
        "questions": {
            spelling[key]: (counts["Yes"], counts["No"]) for key, counts in asked.items()
        },
    }


def twenty_questions_policy(games: list[Game], rules_only: bool = False) -> str:
    """Advice for the questioner from the games' statistics (or from the rules alone)."""
    from games.twenty_questions import CANDIDATES

    need = math.ceil(math.log2(len(CANDIDATES)))
    lines = [
        f"There are {len(CANDIDATES)} possible words. A yes/no answer can at best halve them, so "
        f"about {need} well-chosen questions single out the word; a question almost everyone "
        "answers the same way wastes a turn.",
        "Ask about broad properties first (category, size, where it is found, what it is made "
        "of), then narrow down, and name a word only when few candidates remain.",
    ]
    if rules_only or not games:
        return "\n".join(f"- {line}" for line in lines)
    stats = twenty_questions_stats(games)
    ranked = sorted(
        stats["questions"].items(),
        key=lambda item: (-split_quality(*item[1]), -sum(item[1]), item[0]),
    )
    best = [(q, yes, no) for q, (yes, no) in ranked if split_quality(yes, no) > 0][:TOP_QUESTIONS]
    one_sided = [
        (q, yes, no) for q, (yes, no) in ranked if split_quality(yes, no) == 0 and yes + no >= 2
    ][:3]
    head = (
        f"From {stats['games']} games: the word was found in {stats['found']}, mean reward "
        f"{stats['mean_reward']:.2f}."
    )
    if stats["found_lengths"]:
        lengths = sorted(stats["found_lengths"])
        head += f" Found games took a median of {lengths[len(lengths) // 2]} questions."
    lines.insert(0, head)
    if best:
        shown = "; ".join(f'"{q}" (Yes {yes}, No {no})' for q, yes, no in best)
        lines.append(f"Questions that split the words most evenly in these games: {shown}.")
    if one_sided:
        shown = "; ".join(f'"{q}" (Yes {yes}, No {no})' for q, yes, no in one_sided)
        lines.append(f"Questions that told little, always getting the same answer: {shown}.")
    return "\n".join(f"- {line}" for line in lines)


def undercover_policy(games: list[Game], rules_only: bool = False) -> str:
    """Advice for a player from how each role fared and what the winners' clues looked like."""
    lines = [
        "You do not know your role at first: compare the others' clues with your word before "
        "deciding whether you are the one with the different word.",
        "Give clues true of your word but not so specific that a player with a close word could "
        "copy them; vote for the player whose clues fit your word least.",
    ]
    if rules_only or not games:
        return "\n".join(f"- {line}" for line in lines)
    engine = get_engine("undercover")
    wins: Counter[str] = Counter()
    played: Counter[str] = Counter()
    clue_words: dict[bool, list[int]] = {True: [], False: []}
    passes = 0
    for game in games:
        state = engine.replay(game["config"], game["events"])
        result = engine.outcome(state)[game["seat"]]
        played[result["role"]] += 1
        wins[result["role"]] += bool(result["win"])
        for _, seat, text in state.clues:
            if seat != game["seat"]:
                continue
            if text is None:
                passes += 1
            else:
                clue_words[bool(result["win"])].append(len(text.split()))
    parts = [
        f"as the {role} player you won {wins[role]} of {played[role]}"
        for role in ("normal", "difference")
        if played[role]
    ]
    lines.insert(0, f"From {len(games)} games: " + ", ".join(parts) + ".")
    if clue_words[True] and clue_words[False]:
        won = sum(clue_words[True]) / len(clue_words[True])
        lost = sum(clue_words[False]) / len(clue_words[False])
        lines.append(
            f"Clues in won games averaged {won:.1f} words, in lost games {lost:.1f}; "
            + ("shorter, vaguer clues did better." if won < lost else "fuller clues did better.")
        )
    if passes:
        lines.append(f"You passed {passes} times; a pass tells the others nothing about you.")
    return "\n".join(f"- {line}" for line in lines)


def offline_policy(game: str, games: list[Game], rules_only: bool = False) -> str:
    """The policy text for ``game`` from ``games`` (a rule policy when ``rules_only``)."""
    if game == "twenty-questions":
        return twenty_questions_policy(games, rules_only)
    return undercover_policy(games, rules_only)
