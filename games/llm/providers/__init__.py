"""Model providers behind one async interface, chosen by a model spec string.

``openai:<model>``, ``anthropic:<model>`` and ``openai-compatible:<model>`` (vLLM, Ollama, llama.cpp
server, LM Studio at a configured base URL) go through the official async SDKs, which own retries,
backoff (honouring ``Retry-After``) and timeouts. This package adds what an experiment needs on top:
a concurrency limit per provider, the response cache, and a usage record for every call.

Several compatible servers can serve one run: ``openai-compatible@vllm:<model>`` and
``openai-compatible@ollama:<model>`` name servers listed in ``COMPATIBLE_SERVERS``
(``vllm=http://127.0.0.1:8000/v1,ollama=http://127.0.0.1:11434/v1``), each with a key of its own
(``OPENAI_COMPATIBLE_API_KEY_VLLM``); the plain ``openai-compatible:<model>`` is the server at
``OPENAI_COMPATIBLE_BASE_URL`` (or ``OPENAI_BASE_URL``) with ``OPENAI_COMPATIBLE_API_KEY``. A
compatible server never receives ``OPENAI_API_KEY``. The server is part of the cache key, so two
servers serving the same model name never share cached answers, and every request to an
OpenAI-style server carries a ``seed`` drawn from the request itself.

Gemini through Google's OpenAI-compatible endpoint is such a named server:
``COMPATIBLE_SERVERS=gemini=https://generativelanguage.googleapis.com/v1beta/openai`` (the
``GEMINI_OPENAI_URL``), the key in ``OPENAI_COMPATIBLE_API_KEY_GEMINI``, and the spec
``openai-compatible@gemini:gemini-2.5-flash``; images go as ``image_url`` parts with base64 data
URLs, and an image type Gemini does not read is refused before the call (``GEMINI_IMAGE_TYPES``).

Configuration is passed in as a :class:`ProviderConfig`; nothing here reads the environment.
The CLI builds a config with :func:`config_from_env` and Django's settings module builds its own.

The package's parts: :mod:`.config` (specs, model options, provider configs), :mod:`.messages`
(text and image parts, the cost measure), :mod:`.base` (the interface, and the machinery the SDK
providers share), :mod:`.openai_provider`, :mod:`.anthropic_provider` and :mod:`.offline`. Import
every name from ``games.llm.providers``; :func:`get_provider` below picks the provider of a spec.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TypeVar

from games.llm.cache import ResponseCache
from games.llm.providers.anthropic_provider import AnthropicProvider
from games.llm.providers.base import (
    Completion,
    Provider,
    ProviderError,
    SDKProvider,
    request_seed,
)
from games.llm.providers.config import (
    ANTHROPIC_URL,
    GEMINI_OPENAI_URL,
    LOCAL_PREFIX,
    OPENAI_URL,
    PROVIDER_KINDS,
    REASONING_EFFORTS,
    REASONING_MAX_TOKENS,
    REASONING_TIMEOUT,
    ModelOptions,
    ProviderConfig,
    compatible_config,
    config_from_env,
    is_gemini_model,
    is_reasoning_model,
    local_path,
    model_options,
    needs_reasoning_budget,
    parse_spec,
    server_url,
    split_spec,
)
from games.llm.providers.messages import (
    GEMINI_IMAGE_TYPES,
    Message,
    content_text,
    has_images,
    image_media_type,
    image_part,
    prompt_chars,
    text_part,
)
from games.llm.providers.offline import OfflineProvider
from games.llm.providers.openai_provider import OpenAIProvider
from games.llm.servers import parse_servers  # importable from here, as before the split

__all__ = [
    "ANTHROPIC_URL",
    "GEMINI_IMAGE_TYPES",
    "GEMINI_OPENAI_URL",
    "LOCAL_PREFIX",
    "OPENAI_URL",
    "PROVIDER_KINDS",
    "REASONING_EFFORTS",
    "REASONING_MAX_TOKENS",
    "REASONING_TIMEOUT",
    "AnthropicProvider",
    "Completion",
    "Message",
    "ModelOptions",
    "OfflineProvider",
    "OpenAIProvider",
    "Provider",
    "ProviderConfig",
    "ProviderError",
    "SDKProvider",
    "close_clients",
    "closing",
    "compatible_config",
    "config_from_env",
    "content_text",
    "get_provider",
    "has_images",
    "image_media_type",
    "image_part",
    "is_gemini_model",
    "is_reasoning_model",
    "local_path",
    "model_options",
    "needs_reasoning_budget",
    "parse_servers",
    "parse_spec",
    "prompt_chars",
    "request_seed",
    "server_url",
    "split_spec",
    "text_part",
]

T = TypeVar("T")


_PROVIDERS: dict[tuple[str, ProviderConfig, ResponseCache | None], Provider] = {}


async def close_clients() -> None:
    """Close every provider's SDK client of the running event loop; call before the loop ends
    (``asyncio.run`` callers), so no connection is left for the garbage collector."""
    for provider in list(_PROVIDERS.values()):
        if isinstance(provider, SDKProvider):
            await provider.aclose()


async def closing(awaitable: Awaitable[T]) -> T:
    """Await a model workload, then close the SDK clients its event loop opened: for callers that
    give the workload a loop of its own (``asyncio.run``, ``async_to_sync`` in a worker), whose
    clients would otherwise be left open when that loop ends."""
    try:
        return await awaitable
    finally:
        await close_clients()


def get_provider(
    spec: str, config: ProviderConfig | None = None, *, cache: ResponseCache | None = None
) -> Provider:
    """The provider for ``spec``: one per spec, config and cache in a process, so every agent of
    a run shares its client, connection pool and concurrency limit."""
    kind, _ = parse_spec(spec)
    config = config or ProviderConfig()
    memo = (spec, config, cache)
    if memo not in _PROVIDERS:
        if kind == "anthropic":
            _PROVIDERS[memo] = AnthropicProvider(spec, config, cache)
        elif kind == "offline":
            _PROVIDERS[memo] = OfflineProvider(spec)
        else:
            if kind == "openai-compatible" and not config.base_url:
                raise ValueError(f"{spec!r} needs a base_url (the compatible server's address)")
            _PROVIDERS[memo] = OpenAIProvider(spec, config, cache)
    return _PROVIDERS[memo]
