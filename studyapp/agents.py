"""Where the site's models live, and the agent that plays a seat at a table.

``games`` knows how to build agents but not where models are: API keys and base URLs are Django
settings, aligned models are folders on disk (``local:<path>``), and policies are database rows.
This module joins the three, so the table driver and the pipeline jobs reach models the same way
and the settings are read in one place.
"""

from __future__ import annotations

import importlib.util
import time
from collections.abc import Iterable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from django.conf import settings

from games import languages
from games.agents import make_agent
from games.base import Agent
from games.experience.context import human_policy
from games.llm.agents import LLMAgent, make_llm_agent
from games.llm.cache import ResponseCache
from games.llm.local import LocalProvider
from games.llm.providers import (
    Completion,
    Provider,
    ProviderConfig,
    ProviderError,
    compatible_config,
    get_provider,
    local_path,
    parse_spec,
    server_url,
)
from games.provenance import prompt_hashes, provenance
from studyapp.slots import model_slot
from studyapp.steps import record_model_call

if TYPE_CHECKING:
    from studyapp.tables.models import Seat

# The experience setting a policy was made for, used when a seat names a policy but no setting.
POLICY_SETTINGS = {
    "rule": "rule-policy",
    "experience": "experience-policy",
    "cumulative": "cumulative",
    "human": "human-policy",
}

_caches: dict[str, ResponseCache] = {}
_local: dict[str, Provider] = {}


def provider_config(spec: str, *, live: bool = False) -> ProviderConfig:
    """How to reach the provider of an API spec, from settings. ``OPENAI_BASE_URL`` is for
    ``openai-compatible:`` servers only, so a local server never answers for ``openai:`` models.
    ``live``: for a seat at a table with people, whose calls get the tighter live budget
    (``LIVE_MODEL_TIMEOUT_SECONDS`` per call, ``LIVE_MODEL_RETRIES``) instead of the batch one."""
    config = _provider_config(spec)
    if live:
        config = replace(
            config,
            timeout=settings.LIVE_MODEL_TIMEOUT_SECONDS,
            max_retries=settings.LIVE_MODEL_RETRIES,
        )
    return config


def _provider_config(spec: str) -> ProviderConfig:
    """How to reach the provider of an API spec, from settings. Compatible servers' addresses and
    keys are for ``openai-compatible`` specs only, so a local server never answers for ``openai:``
    models, and OpenAI's key never goes to a compatible server."""
    kind, _ = parse_spec(spec)
    if kind == "anthropic":
        return ProviderConfig(
            api_key=settings.ANTHROPIC_API_KEY or None,
            base_url=settings.ANTHROPIC_BASE_URL or None,
        )
    if kind == "openai-compatible":
        return compatible_config(
            spec,
            base_url=settings.OPENAI_COMPATIBLE_BASE_URL or settings.OPENAI_BASE_URL or None,
            servers=settings.COMPATIBLE_SERVERS,
            keys=settings.COMPATIBLE_SERVER_KEYS,
            default_key=settings.OPENAI_COMPATIBLE_API_KEY,
        )
    if kind == "openai":
        return ProviderConfig(api_key=settings.OPENAI_API_KEY or None)
    return ProviderConfig()


def model_server(spec: str) -> str | None:
    """Where ``spec``'s calls go from this site: the server's address (credentials removed by
    :mod:`games.provenance`), ``local:<path>`` for a local model, None for rule-based agents or a
    spec this site cannot reach."""
    try:
        if local_path(spec) is not None:
            return spec
        return server_url(spec, provider_config(spec))
    except ValueError:
        return None


def site_provenance(specs: Iterable[str], prompts: Mapping[str, Any] | None = None) -> dict:
    """:func:`games.provenance.provenance` for these model specs as this site reaches them; the
    shipped prompt set's hashes unless ``prompts`` is given."""
    models = {spec: model_server(spec) for spec in set(specs) if spec}
    return provenance(models, prompts=prompt_hashes() if prompts is None else prompts)


def response_cache() -> ResponseCache:
    path = str(Path(settings.LLM_CACHE_DIR) / "responses.sqlite3")
    if path not in _caches:
        _caches[path] = ResponseCache(path)
    return _caches[path]


def local_provider(spec: str) -> Provider:
    """The provider of a ``local:<path>`` model, one per folder and process (loading is the slow
    part). Torch is imported on the first generation, not here, so the site runs without it."""
    path = str(local_path(spec, required=True))
    if path not in _local:
        missing = [m for m in ("torch", "transformers") if importlib.util.find_spec(m) is None]
        if missing:
            raise ImportError(
                f"{spec!r} needs the ttra extra ({', '.join(missing)} missing): "
                "pip install -e '.[ttra]'"
            )
        if not (Path(path) / "config.json").is_file():
            raise ValueError(f"{spec!r}: {path} holds no saved model (no config.json)")
        _local[path] = LocalProvider(path)
    return _local[path]


def provider_for(spec: str, *, cache: bool = True, live: bool = False) -> Provider:
    """The shared provider for ``spec``; ``cache`` replays identical API requests from disk;
    ``live`` gives the live tables' time budget (:func:`provider_config`)."""
    if local_path(spec) is not None:
        return local_provider(spec)
    # one process's calls in flight per provider: an executor's loop may hold hundreds of turns
    config = replace(provider_config(spec, live=live), concurrency=settings.MODEL_CALLS_PER_PROCESS)
    return get_provider(spec, config, cache=response_cache() if cache else None)


class RecordingProvider:
    """Passes a seat's calls through, each in one of its spec's slots across the site
    (:mod:`studyapp.slots`), times each for the executor's latency figures
    (:func:`studyapp.steps.record_model_call`), and keeps the message of each one that failed. An
    LLM agent answers a failed call with its do-nothing move, and the turn it made must still say
    why."""

    def __init__(self, provider: Provider, spec: str = "") -> None:
        self.provider = provider
        self.spec = spec
        self.errors: list[str] = []

    async def complete(self, messages: list[dict[str, str]], **params: Any) -> Completion:
        async with model_slot(self.spec):
            started = time.perf_counter()
            try:
                return await self.provider.complete(messages, **params)
            except ProviderError as err:
                self.errors.append(str(err))
                raise
            finally:
                record_model_call(self.spec, time.perf_counter() - started)


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
