"""Where the site's models live: API keys and base URLs are Django settings, aligned models are
folders on disk (``local:<path>``). Every caller (the tables' agent seats, the pipeline jobs, the
study checks) reaches a model through :func:`provider_for`, so the settings are read in one place;
each seat's call goes through :class:`RecordingProvider` (a site-wide slot, its time, its error).
The agent that plays a seat is the tables' (:mod:`studyapp.tables.seat_agents`).
"""

from __future__ import annotations

import importlib.util
import time
from collections.abc import Iterable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from django.conf import settings

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
