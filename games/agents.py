"""Turns a model spec string (``offline:kb``, ``openai:gpt-4o``, ...) into an agent for a seat."""

from __future__ import annotations

from typing import Any

from games.base import Agent


def make_agent(spec: str, *, game: str, role: str, seed: int = 0, **options: Any) -> Agent:
    """Build the agent for one seat. ``role`` is the seat's label from ``Engine.seats``."""
    provider, sep, name = spec.partition(":")
    if not sep or not name:
        raise ValueError(f"model spec {spec!r} must look like 'provider:name', e.g. 'offline:kb'")
    if provider == "offline":
        if game == "twenty-questions":
            from games.twenty_questions.agents import make_offline_agent
        elif game == "undercover":
            from games.undercover.agents import make_offline_agent

            sentences = bool(options.get("sentences"))
            language = str(options.get("language") or "en")
            return make_offline_agent(
                name, role=role, seed=seed, sentences=sentences, language=language
            )
        else:
            raise ValueError(f"unknown game {game!r}")
        return make_offline_agent(name, role=role, seed=seed)
    from games.llm.agents import make_llm_agent

    return make_llm_agent(spec, game=game, role=role, seed=seed, **options)
