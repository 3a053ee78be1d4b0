"""Model providers for jobs, configured from Django settings (the one place that reads the
environment), so a job names only a model spec."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings

from games.llm.cache import ResponseCache
from games.llm.providers import Provider, ProviderConfig, get_provider, parse_spec

_caches: dict[str, ResponseCache] = {}


def provider_config(spec: str) -> ProviderConfig:
    kind, _ = parse_spec(spec)
    if kind == "anthropic":
        return ProviderConfig(
            api_key=settings.ANTHROPIC_API_KEY or None,
            base_url=settings.ANTHROPIC_BASE_URL or None,
        )
    if kind == "openai-compatible":
        return ProviderConfig(
            api_key=settings.OPENAI_API_KEY or "none", base_url=settings.OPENAI_BASE_URL or None
        )
    if kind == "openai":
        return ProviderConfig(api_key=settings.OPENAI_API_KEY or None)
    return ProviderConfig()


def response_cache() -> ResponseCache:
    path = str(Path(settings.LLM_CACHE_DIR) / "responses.sqlite3")
    if path not in _caches:
        _caches[path] = ResponseCache(path)
    return _caches[path]


def provider_for(spec: str, *, cache: bool = True) -> Provider:
    """The shared provider for ``spec``; ``cache`` replays identical requests from disk."""
    return get_provider(spec, provider_config(spec), cache=response_cache() if cache else None)
