"""The agent that plays a seat at a table: the seat's spec, its experience setting and policy
(a database row), and the provider that reaches its model (:mod:`studyapp.providers`)."""

from __future__ import annotations

from typing import Any

from games import languages
from games.agents import make_agent
from games.base import Agent
from games.experience.context import human_policy
from games.llm.agents import LLMAgent, make_llm_agent
from studyapp.providers import RecordingProvider, provider_for
from studyapp.tables.models import Seat

# The experience setting a policy was made for, used when a seat names a policy but no setting.
POLICY_SETTINGS = {
    "rule": "rule-policy",
    "experience": "experience-policy",
    "cumulative": "cumulative",
    "human": "human-policy",
}


def seat_setting(seat: Seat) -> str:
    """The experience setting a seat plays under: its own, else the one its policy was made for."""
    if seat.setting:
        return seat.setting
    if seat.policy_id is not None:
        return POLICY_SETTINGS.get(seat.policy.kind, "none")
    return "none"


def seat_policy(seat: Seat, game: str) -> str | None:
    """The text in force for a seat: its policy record, or the shipped human policy when the
    setting asks for one and the seat names none."""
    if seat.policy_id is not None:
        if seat.policy.game != game:
            raise ValueError(f"policy {seat.policy} is for {seat.policy.game}, not {game}")
        return seat.policy.text
    if seat.setting == "human-policy":
        return human_policy(game)
    return None


def agent_for_seat(
    seat: Seat, *, game: str, role: str, seed: int, live: bool = False, language: str = "en"
) -> Agent:
    """The agent for one turn of an agent seat. Tables do not use the response cache: every table
    opens alike, and a cached reply would make every table play alike. ``seed`` is also the
    sampling index, so a local model redelivered the same turn proposes the same move. ``live``:
    the table has people, so its model calls get the live time budget, and an offline agent keeps
    the people's rules of form (Undercover: a clue is a sentence, never a pass). ``language``: the
    table's; a model is told it, and an offline agent, which knows English only, is refused."""
    spec = seat.agent_spec
    if spec.startswith("offline:"):
        problem = languages.offline_problem(spec, language)
        if problem:
            raise ValueError(problem)
        return make_agent(spec, game=game, role=role, seed=seed, sentences=live)
    return make_llm_agent(
        spec,
        game=game,
        role=role,
        seed=seed,
        setting=seat_setting(seat),
        policy=seat_policy(seat, game),
        provider=RecordingProvider(provider_for(spec, cache=False, live=live), spec),
        sample=seed,
        language=language,
    )


def turn_usage(agent: Agent | None) -> dict[str, Any]:
    """What an agent's turn cost (the ``Turn.usage`` shape), with ``error`` when a model call
    failed; empty for agents that call no model."""
    if not isinstance(agent, LLMAgent):
        return {}
    usage: dict[str, Any] = agent.usage.as_dict()
    if isinstance(agent.provider, RecordingProvider) and agent.provider.errors:
        usage["error"] = agent.provider.errors[-1]
    return usage
