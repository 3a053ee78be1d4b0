"""Turns an engine observation (JSON) into the text a model reads for its turn.

Pure functions of the observation, so tests can read exactly what a seat is shown, and so the
prompt (and with it the cache key) depends only on what the seat may see.
"""

from __future__ import annotations

import json
from typing import Any

from games.llm import prompts

Observation = dict[str, Any]


def twenty_questions_rules(max_questions: int, candidates: list[str]) -> str:
    return prompts.render(
        "twenty_questions_rules",
        count=len(candidates),
        max_questions=max_questions,
        candidates=", ".join(candidates),
    )


def undercover_rules(players: int) -> str:
    return prompts.render("undercover_rules", players=players, last_seat=players - 1)


def rules_for(game: str, observation: Observation) -> str:
    """The rules text of ``game`` with the numbers of this table filled in."""
    if game == "twenty-questions":
        return twenty_questions_rules(observation["max_questions"], observation["candidates"])
    return undercover_rules(observation["players"])


def rules_for_config(game: str, config: dict[str, Any]) -> str:
    """The rules of a table before any observation exists (for the experience steps)."""
    if game == "twenty-questions":
        from games.twenty_questions import CANDIDATES

        return twenty_questions_rules(config["max_questions"], list(CANDIDATES))
    return undercover_rules(config["players"])


def question_history(observation: Observation) -> str:
    """The questions asked so far with their replies, numbered."""
    history = observation.get("history", [])
    if not history:
        return "No questions asked yet."
    lines = [f"{i}. {turn['question']} -> {turn['answer']}" for i, turn in enumerate(history, 1)]
    return "Questions so far:\n" + "\n".join(lines)


def questioner_turn(observation: Observation) -> str:
    return prompts.render(
        "twenty_questions_questioner_turn",
        history=question_history(observation),
        number=observation["questions_asked"] + 1,
        max_questions=observation["max_questions"],
    )


def oracle_turn(observation: Observation) -> str:
    return prompts.render(
        "twenty_questions_oracle_turn",
        answer=observation["answer"],
        question=observation["question"],
    )


def clue_history(observation: Observation) -> str:
    """Every clue so far, grouped by speaking round."""
    clues = observation.get("clues", [])
    if not clues:
        return "No clues have been given yet."
    lines: list[str] = []
    current = None
    for clue in clues:
        if clue["round"] != current:
            current = clue["round"]
            lines.append(f"Speaking round {current}:")
        text = clue["text"] if clue["text"] is not None else "(passed)"
        lines.append(f"  player {clue['seat']}: {text}")
    return "\n".join(lines)


def vote_history(observation: Observation) -> str:
    """The resolved votes so far: who voted for whom and who went out."""
    rounds = observation.get("votes", [])
    if not rounds:
        return "No votes yet."
    lines: list[str] = []
    for vote in rounds:
        ballots = ", ".join(
            f"player {b['seat']} -> {'abstained' if b['target'] is None else b['target']}"
            for b in vote["ballots"]
        )
        out = vote["eliminated"]
        result = "a tie, nobody is out" if out is None else f"player {out} is out"
        lines.append(f"Vote {vote['round']}: {ballots}; {result}.")
    return "\n".join(lines)


def undercover_turn(observation: Observation) -> str:
    instruction = "undercover_voter" if observation["phase"] == "vote" else "undercover_speaker"
    return prompts.render(
        "undercover_turn",
        seat=observation["seat"],
        word=observation["word"],
        alive=", ".join(str(seat) for seat in observation["alive"]),
        clues=clue_history(observation),
        votes=vote_history(observation),
        instruction=prompts.text(instruction),
    )


def rejected_note(observation: Observation) -> str:
    """The engine's reason for refusing the previous move, or an empty string."""
    rejected = observation.get("rejected")
    if not rejected:
        return ""
    move = json.dumps(rejected["action"], ensure_ascii=False)
    return prompts.render("rejected", move=move, reason=rejected["reason"])
