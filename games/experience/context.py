"""What a model is shown under each experience setting, as pure functions of text.

The settings come from the paper's §3.2 and §4.1. Everything here returns strings so tests can
check what the model reads and in which order; the model calls live in ``steps.py``.

Order of a player's system prompt: the rules, then the learned material (a policy, or the raw
earlier games for ``full-experience``), then the role's instructions with the answer format.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from games.llm import prompts

SETTINGS = (
    "none",
    "rule-policy",
    "experience-policy",
    "human-policy",
    "full-experience",
    "cumulative",
)
# Settings whose text in force is a policy (strategy text) rather than raw games.
POLICY_SETTINGS = ("rule-policy", "experience-policy", "human-policy", "cumulative")
EMPTY_MEMORY = "(empty: no game has been played yet)"
# Where the text of each policy setting came from, as the player is told (policy_section's $origin).
POLICY_ORIGINS = {
    "rule-policy": "derived from the rules alone, before any play",
    "experience-policy": "written from earlier play of this game",
    "human-policy": "written by people who played this game",
    "cumulative": "a memory rewritten after each game played so far",
}


@dataclass(frozen=True)
class Experience:
    """One earlier game as the model remembers it: what happened, how it scored, its reflection."""

    transcript: str
    reward: float
    reflection: str


def check_setting(setting: str) -> str:
    if setting not in SETTINGS:
        raise ValueError(f"unknown setting {setting!r}; use one of {', '.join(SETTINGS)}")
    return setting


def human_policy(game: str) -> str:
    """The default human-written policy shipped for ``game``."""
    return prompts.text(f"human_policy_{game.replace('-', '_')}")


def experience_games(experiences: Sequence[Experience]) -> str:
    """Earlier games, numbered in the order they were played."""
    return "\n\n".join(
        prompts.render(
            "experience_game",
            number=number,
            transcript=item.transcript,
            reward=f"{item.reward:.4f}",
            reflection=item.reflection,
        )
        for number, item in enumerate(experiences, 1)
    )


def experience_block(experiences: Sequence[Experience]) -> str:
    """The ``full-experience`` context: the raw earlier games (stored as the record's policy)."""
    return prompts.render("experience_section", games=experience_games(experiences))


def player_system(rules: str, instructions: str, *, setting: str, policy: str | None) -> str:
    """The system prompt of an evaluated seat. ``policy`` is the text in force: a strategy for the
    policy settings, the :func:`experience_block` for ``full-experience``, ignored for ``none``."""
    check_setting(setting)
    parts = [rules]
    if setting == "full-experience" and policy:
        parts.append(policy)
    elif setting in POLICY_SETTINGS and policy:
        origin = POLICY_ORIGINS[setting]
        parts.append(prompts.render("policy_section", origin=origin, policy=policy))
    parts.append(instructions)
    return "\n\n".join(parts)


def reflection_prompt(rules: str, transcript: str, reward: float) -> str:
    return prompts.render("reflection", rules=rules, transcript=transcript, reward=f"{reward:.4f}")


def rule_policy_prompt(rules: str) -> str:
    return prompts.render("policy_from_rules", rules=rules)


def experience_policy_prompt(rules: str, experiences: Sequence[Experience]) -> str:
    return prompts.render(
        "policy_from_experience",
        rules=rules,
        count=len(experiences),
        games=experience_games(experiences),
    )


def curator_prompt(
    rules: str, memory: str | None, transcript: str, reward: float, word_cap: int = 2000
) -> str:
    return prompts.render(
        "curator",
        rules=rules,
        memory=memory or EMPTY_MEMORY,
        transcript=transcript,
        reward=f"{reward:.4f}",
        word_cap=word_cap,
    )
