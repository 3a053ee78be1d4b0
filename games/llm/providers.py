"""Model providers behind one async interface, chosen by a model spec string.

``openai:<model>``, ``anthropic:<model>`` and ``openai-compatible:<model>`` (vLLM, Ollama, llama.cpp
server, LM Studio at a configured base URL) go through the official async SDKs, which own retries,
backoff (honouring ``Retry-After``) and timeouts. This module adds what an experiment needs on top:
a concurrency limit per provider, the response cache, and a usage record for every call.

Several compatible servers can serve one run: ``openai-compatible@vllm:<model>`` and
``openai-compatible@ollama:<model>`` name servers listed in ``COMPATIBLE_SERVERS``
(``vllm=http://127.0.0.1:8000/v1,ollama=http://127.0.0.1:11434/v1``), each with a key of its own
(``OPENAI_COMPATIBLE_API_KEY_VLLM``); the plain ``openai-compatible:<model>`` is the server at
``OPENAI_COMPATIBLE_BASE_URL`` (or ``OPENAI_BASE_URL``) with ``OPENAI_COMPATIBLE_API_KEY``. A
compatible server never receives ``OPENAI_API_KEY``. The server is part of the cache key, so two
servers serving the same model name never share cached answers, and every request to an
OpenAI-style server carries a ``seed`` drawn from the request itself.

Configuration is passed in as a :class:`ProviderConfig`; nothing here reads the environment.
The CLI builds a config with :func:`config_from_env` and Django's settings module builds its own.
"""

from __future__ import annotations

import asyncio
import base64
import contextvars
import hashlib
import re
import time
import weakref
from collections.abc import Awaitable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol, TypeVar

import anthropic
import openai
from anthropic.types import Message as AnthropicMessage
from openai.types.chat import ChatCompletion

from games.llm.cache import ResponseCache, request_key
from games.llm.servers import SERVER_NAME, parse_servers, server_key_name

T = TypeVar("T")

PROVIDER_KINDS = ("openai", "anthropic", "openai-compatible", "offline")
OPENAI_URL = "https://api.openai.com/v1"
ANTHROPIC_URL = "https://api.anthropic.com"


REASONING_EFFORTS = ("minimal", "low", "medium", "high")
# OpenAI's reasoning models: o1, o3, o4-mini, gpt-5 and their dated or sized variants.
_OPENAI_REASONING = re.compile(r"^(?:o\d|gpt-5)(?:$|[-.:])")
# Open reasoning models served through ``openai-compatible:`` (vLLM, SGLang, DeepSeek's API):
# DeepSeek-R1 and its distillations, deepseek-reasoner, QwQ, *-Thinking checkpoints.
_OPEN_REASONING = re.compile(r"(?:^|[-_/.:])(?:r1|qwq|reasoner|thinking)(?:$|[-_/.:])", re.I)
REASONING_MAX_TOKENS = 16_384  # room for hidden reasoning plus the visible move
REASONING_TIMEOUT = 300.0


@dataclass(frozen=True)
class ModelOptions:
    """How much a model may write and think per call (the paper's Table 3 compares thinking models).

    ``max_tokens`` replaces every caller's own output budget when set; ``reasoning_effort`` is
    OpenAI's for reasoning models; ``thinking_budget`` turns on Anthropic's extended thinking with
    that many tokens (the visible answer gets the call's budget on top of it).
    """

    max_tokens: int | None = None
    reasoning_effort: str | None = None
    thinking_budget: int | None = None

    def __post_init__(self) -> None:
        if self.reasoning_effort is not None and self.reasoning_effort not in REASONING_EFFORTS:
            raise ValueError(f"reasoning_effort must be one of {REASONING_EFFORTS}")
        if self.max_tokens is not None and self.max_tokens < 1:
            raise ValueError("max_tokens must be positive")
        if self.thinking_budget is not None and self.thinking_budget < 1024:
            raise ValueError("thinking_budget must be at least 1024 tokens (Anthropic's minimum)")

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def is_reasoning_model(spec: str) -> bool:
    """OpenAI reasoning models, which spend output tokens on hidden reasoning."""
    kind, model = parse_spec(spec)
    return kind == "openai" and _OPENAI_REASONING.match(model) is not None


def needs_reasoning_budget(spec: str) -> bool:
    """Models that think before they answer and so need far more than a move's 1,024 tokens:
    OpenAI's reasoning models and open ones served through ``openai-compatible:`` (DeepSeek-R1,
    deepseek-reasoner, QwQ, *-Thinking), whose thinking is part of the visible output.

    >>> needs_reasoning_budget("openai-compatible:deepseek-ai/DeepSeek-R1-Distill-Qwen-7B")
    True
    >>> needs_reasoning_budget("openai-compatible:deepseek-chat")
    False
    """
    kind, model = parse_spec(spec)
    if kind == "openai-compatible":
        return _OPEN_REASONING.search(model) is not None
    return is_reasoning_model(spec)


def model_options(
    spec: str,
    *,
    max_tokens: int | None = None,
    reasoning_effort: str | None = None,
    thinking_budget: int | None = None,
) -> ModelOptions:
    """The options for ``spec``: the given values, else sensible defaults for the model.

    OpenAI reasoning models (o1, o3, o4-mini, gpt-5…) get a 16,384-token budget and "medium"
    effort, the API's default, written down so it is recorded: a 1,024-token move budget is spent
    on hidden reasoning before any visible answer. Open reasoning models served through
    ``openai-compatible:`` (:func:`needs_reasoning_budget`) get the same budget. Other models keep
    each call's own budget, and Anthropic thinking stays off unless a budget is given.

    >>> model_options("openai:o3-mini")
    ModelOptions(max_tokens=16384, reasoning_effort='medium', thinking_budget=None)
    >>> model_options("openai-compatible:deepseek-r1").max_tokens
    16384
    >>> model_options("openai:gpt-4o")
    ModelOptions(max_tokens=None, reasoning_effort=None, thinking_budget=None)
    """
    if is_reasoning_model(spec):
        max_tokens = max_tokens or REASONING_MAX_TOKENS
        reasoning_effort = reasoning_effort or "medium"
    elif needs_reasoning_budget(spec):
        max_tokens = max_tokens or REASONING_MAX_TOKENS
    return ModelOptions(max_tokens, reasoning_effort, thinking_budget)


@dataclass(frozen=True)
class ProviderConfig:
    """How to reach one provider. ``max_retries`` and ``timeout`` are handed to the SDK;
    ``concurrency`` caps the calls in flight per provider and event loop; ``options`` say how
    much the model may write and think (:class:`ModelOptions`)."""

    api_key: str | None = None
    base_url: str | None = None
    timeout: float = 60.0
    max_retries: int = 4
    concurrency: int = 32
    options: ModelOptions = field(default_factory=ModelOptions)


@dataclass(frozen=True)
class Completion:
    """One model reply and what it cost. ``retries`` counts the extra HTTP attempts the SDK made."""

    text: str
    input_tokens: int = 0
    output_tokens: int = 0
    input_chars: int = 0
    output_chars: int = 0
    latency_s: float = 0.0
    retries: int = 0
    cached: bool = False


class ProviderError(RuntimeError):
    """A call that failed after the SDK's own retries; carries what the failed call cost."""

    def __init__(self, message: str, *, input_chars: int, latency_s: float, retries: int) -> None:
        super().__init__(message)
        self.input_chars = input_chars
        self.latency_s = latency_s
        self.retries = retries


# A message's content is a string, or a list of parts for a message that carries images:
# ``{"type": "text", "text": ...}`` and ``{"type": "image", "media_type": "image/png", "data":
# <base64>}``. The parts are the project's own; each provider writes them in its wire format
# (OpenAI: ``image_url`` parts with a data URL; Anthropic: ``image`` blocks with a base64 source).
Message = dict[str, Any]

_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)


def image_media_type(data: bytes) -> str:
    """The media type of image bytes, from their first bytes (PNG, JPEG, GIF, WebP).

    >>> image_media_type(b"\\x89PNG\\r\\n\\x1a\\n...")
    'image/png'
    """
    for magic, media_type in _MAGIC:
        if data.startswith(magic):
            return media_type
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    raise ValueError("not a PNG, JPEG, GIF or WebP image (the formats vision APIs take)")


def image_part(data: bytes, media_type: str | None = None) -> dict[str, str]:
    """A message part carrying an image (base64), for a vision model."""
    return {
        "type": "image",
        "media_type": media_type or image_media_type(data),
        "data": base64.b64encode(data).decode("ascii"),
    }


def text_part(text: str) -> dict[str, str]:
    return {"type": "text", "text": text}


def content_text(content: str | list[dict[str, str]]) -> str:
    """The text of a message's content (image parts contribute nothing)."""
    if isinstance(content, str):
        return content
    return "".join(part["text"] for part in content if part.get("type") == "text")


def has_images(messages: list[Message]) -> bool:
    return any(
        not isinstance(m["content"], str) and any(p.get("type") == "image" for p in m["content"])
        for m in messages
    )


def _keyed(messages: list[Message]) -> list[Message]:
    """Messages for the cache key: each image stands as its media type and the sha256 of its
    bytes, so two images never share an answer and the key stays small."""
    out = []
    for message in messages:
        content = message["content"]
        if not isinstance(content, str):
            content = [
                {
                    "type": "image",
                    "media_type": p["media_type"],
                    "sha256": hashlib.sha256(base64.b64decode(p["data"])).hexdigest(),
                }
                if p.get("type") == "image"
                else p
                for p in content
            ]
        out.append({**message, "content": content})
    return out


def _openai_content(content: str | list[dict[str, str]]) -> Any:
    """OpenAI chat content: text parts and ``image_url`` parts with a base64 data URL."""
    if isinstance(content, str):
        return content
    return [
        {
            "type": "image_url",
            "image_url": {"url": f"data:{p['media_type']};base64,{p['data']}"},
        }
        if p.get("type") == "image"
        else {"type": "text", "text": p["text"]}
        for p in content
    ]


def _anthropic_content(content: str | list[dict[str, str]]) -> Any:
    """Anthropic Messages content: ``image`` blocks with a base64 source, and text blocks."""
    if isinstance(content, str):
        return content
    return [
        {
            "type": "image",
            "source": {"type": "base64", "media_type": p["media_type"], "data": p["data"]},
        }
        if p.get("type") == "image"
        else {"type": "text", "text": p["text"]}
        for p in content
    ]


class Provider(Protocol):
    """Anything with this method can drive an LLM agent (a local transformers model included).

    ``messages`` hold strings, or lists of text and image parts (`image_part`) for vision models.
    """

    async def complete(
        self,
        messages: list[Message],
        *,
        system: str | None = None,
        temperature: float = 1.0,
        max_tokens: int = 1024,
        sample: int = 0,
    ) -> Completion: ...


def split_spec(spec: str) -> tuple[str, str | None, str]:
    """``kind[@server]:model`` as ``(kind, server, model)``; only ``openai-compatible`` takes a
    server name. The model name may itself contain colons.

    >>> split_spec("openai-compatible@vllm:Qwen/Qwen3-8B")
    ('openai-compatible', 'vllm', 'Qwen/Qwen3-8B')
    """
    head, sep, model = spec.partition(":")
    if not sep or not model:
        raise ValueError(
            f"model spec {spec!r} must look like 'provider:model', e.g. 'openai:gpt-4o'"
        )
    kind, at, server = head.partition("@")
    if kind not in PROVIDER_KINDS:
        raise ValueError(f"unknown provider {kind!r} in {spec!r}; use one of {PROVIDER_KINDS}")
    if not at:
        return kind, None, model
    if kind != "openai-compatible":
        raise ValueError(f"only openai-compatible takes a server name (@name), not {spec!r}")
    if not SERVER_NAME.match(server):
        raise ValueError(
            f"server name {server!r} in {spec!r} must be lowercase letters, digits, - or _"
        )
    return kind, server, model


def parse_spec(spec: str) -> tuple[str, str]:
    """Split ``kind:model`` (or ``openai-compatible@server:model``) and check the kind."""
    kind, _, model = split_spec(spec)
    return kind, model


def compatible_config(
    spec: str,
    *,
    base_url: str | None,
    servers: Mapping[str, str],
    keys: Mapping[str, str],
    default_key: str | None,
) -> ProviderConfig:
    """The config of an ``openai-compatible`` spec: a named server's address and its own key
    (``keys[name]``), or the default server's address and ``default_key``. Local servers usually
    ignore the key, but the SDK insists on one, so "none" stands in; never OpenAI's key."""
    _, server, _ = split_spec(spec)
    if server is None:
        if not base_url:
            raise ValueError(
                f"{spec!r} needs OPENAI_COMPATIBLE_BASE_URL or OPENAI_BASE_URL "
                "(e.g. http://127.0.0.1:8000/v1)"
            )
        return ProviderConfig(api_key=default_key or "none", base_url=base_url)
    if server not in servers:
        known = ", ".join(sorted(servers)) or "none"
        raise ValueError(
            f"{spec!r} names server {server!r}, which COMPATIBLE_SERVERS does not list "
            f"(listed: {known})"
        )
    return ProviderConfig(api_key=keys.get(server) or "none", base_url=servers[server])


def config_from_env(spec: str, environ: Mapping[str, str]) -> ProviderConfig:
    """The provider config for ``spec`` from environment-style settings (called by entry points
    with ``os.environ``; library code receives the config instead)."""
    kind, _, _ = split_spec(spec)
    if kind == "anthropic":
        return ProviderConfig(
            api_key=environ.get("ANTHROPIC_API_KEY"), base_url=environ.get("ANTHROPIC_BASE_URL")
        )
    if kind == "openai-compatible":
        servers = parse_servers(environ.get("COMPATIBLE_SERVERS", ""))
        return compatible_config(
            spec,
            base_url=environ.get("OPENAI_COMPATIBLE_BASE_URL") or environ.get("OPENAI_BASE_URL"),
            servers=servers,
            keys={name: environ.get(server_key_name(name), "") for name in servers},
            default_key=environ.get("OPENAI_COMPATIBLE_API_KEY"),
        )
    if kind == "openai":
        return ProviderConfig(api_key=environ.get("OPENAI_API_KEY"))
    return ProviderConfig()


def server_url(spec: str, config: ProviderConfig) -> str | None:
    """The address a spec's calls go to under ``config`` (None for offline agents)."""
    kind, _ = parse_spec(spec)
    if kind == "offline":
        return None
    if kind == "anthropic":
        return config.base_url or ANTHROPIC_URL
    return config.base_url or OPENAI_URL


def request_seed(key: str) -> int:
    """The ``seed`` sent with a request: drawn from its cache key (request, server and sample),
    so the same request asks for the same draw and the K samples of one prompt differ."""
    return int(key[:8], 16) & 0x7FFFFFFF


# Each call sets a fresh counter; the HTTP client's request hook, which runs in the same task,
# bumps it once per attempt, so retries = attempts - 1 whatever the SDK decided to retry.
_attempts: contextvars.ContextVar[list[int] | None] = contextvars.ContextVar(
    "llm_attempts", default=None
)


async def _count_attempt(request: Any) -> None:
    box = _attempts.get()
    if box is not None:
        box[0] += 1


def prompt_chars(messages: list[Message], system: str | None) -> int:
    """Characters sent in one call (system text plus every message's text; images count no
    characters): the cost measure of LWE and of the usage columns, the same for every provider."""
    return len(system or "") + sum(len(content_text(m["content"])) for m in messages)


class SDKProvider:
    """Shared machinery: cache lookup, concurrency limit, timing, retry count, error wrapping.
    Subclasses implement :meth:`_send` with their SDK. One SDK client (and connection pool) is
    kept per event loop, because pooled connections cannot cross loops."""

    def __init__(self, spec: str, config: ProviderConfig, cache: ResponseCache | None) -> None:
        self.spec = spec
        self.kind, self.model = parse_spec(spec)
        self.config = config
        self.cache = cache
        self.server = server_url(spec, config)
        self._per_loop: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, tuple[Any, Any]] = (
            weakref.WeakKeyDictionary()
        )

    def _loop_state(self) -> tuple[Any, asyncio.Semaphore]:
        loop = asyncio.get_running_loop()
        state = self._per_loop.get(loop)
        if state is None:
            state = (self._make_client(), asyncio.Semaphore(self.config.concurrency))
            self._per_loop[loop] = state
        return state

    def _http_client(self, module: Any) -> Any:
        """The SDK's own default HTTP client (its pool limits) plus our attempt counter. The
        SDK's aiohttp transport costs far less CPU per call than httpx when dozens of games are in
        flight (see benchmarks/llm_runner.py); without the ``aiohttp`` extra, httpx it is."""
        hooks = {"request": [_count_attempt]}
        try:
            return module.DefaultAioHttpClient(event_hooks=hooks)
        except RuntimeError:  # the SDK says its aiohttp extra is not installed
            return module.DefaultAsyncHttpxClient(event_hooks=hooks)

    def _make_client(self) -> Any:
        raise NotImplementedError

    async def _send(
        self, client: Any, messages: list[Message], system: str | None, **params: Any
    ) -> tuple[str, int, int]:
        raise NotImplementedError

    async def complete(
        self,
        messages: list[Message],
        *,
        system: str | None = None,
        temperature: float = 1.0,
        max_tokens: int = 1024,
        sample: int = 0,
    ) -> Completion:
        input_chars = prompt_chars(messages, system)
        options = self.config.options
        max_tokens = options.max_tokens or max_tokens
        request = {
            "model": self.spec,
            "system": system,
            "messages": _keyed(messages),
            "temperature": temperature,
            "max_tokens": max_tokens,
        }
        if options.reasoning_effort or options.thinking_budget:
            request["reasoning_effort"] = options.reasoning_effort
            request["thinking_budget"] = options.thinking_budget
        if self.server not in (OPENAI_URL, ANTHROPIC_URL):
            # A compatible server (or a custom address): two servers serving the same model name
            # must not share answers. The official APIs' keys stay as they were.
            request["server"] = self.server
        key = request_key(request, sample)
        if self.cache is not None and (hit := self.cache.get(key)) is not None:
            return Completion(
                text=hit["text"],
                input_tokens=hit["input_tokens"],
                output_tokens=hit["output_tokens"],
                input_chars=input_chars,
                output_chars=len(hit["text"]),
                cached=True,
            )
        client, limit = self._loop_state()
        async with limit:
            box = [0]
            token = _attempts.set(box)
            started = time.perf_counter()
            try:
                text, input_tokens, output_tokens = await self._send(
                    client,
                    messages,
                    system,
                    temperature=temperature,
                    max_tokens=max_tokens,
                    seed=request_seed(key),
                )
            except (openai.APIError, anthropic.APIError) as err:
                raise ProviderError(
                    f"{self.spec}: {type(err).__name__}: {err}",
                    input_chars=input_chars,
                    latency_s=time.perf_counter() - started,
                    retries=max(box[0] - 1, 0),
                ) from err
            finally:
                _attempts.reset(token)
            latency = time.perf_counter() - started
        if self.cache is not None:
            reply = {"text": text, "input_tokens": input_tokens, "output_tokens": output_tokens}
            self.cache.put(key, reply)
        return Completion(
            text=text,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            input_chars=input_chars,
            output_chars=len(text),
            latency_s=latency,
            retries=max(box[0] - 1, 0),
        )

    async def aclose(self) -> None:
        """Close this event loop's SDK client (its connections)."""
        state = self._per_loop.pop(asyncio.get_running_loop(), None)
        if state is not None:
            await state[0].close()


class OpenAIProvider(SDKProvider):
    """``openai:`` and ``openai-compatible:`` models through ``openai.AsyncOpenAI``."""

    def _make_client(self) -> openai.AsyncOpenAI:
        return openai.AsyncOpenAI(
            api_key=self.config.api_key,
            # Explicit, so the SDK never falls back to OPENAI_BASE_URL for the official API.
            base_url=self.config.base_url or OPENAI_URL,
            timeout=self.config.timeout,
            max_retries=self.config.max_retries,
            http_client=self._http_client(openai),
        )

    async def _send(
        self,
        client: openai.AsyncOpenAI,
        messages: list[Message],
        system: str | None,
        **params: Any,
    ) -> tuple[str, int, int]:
        full = ([{"role": "system", "content": system}] if system else []) + [
            {**m, "content": _openai_content(m["content"])} for m in messages
        ]
        # OpenAI's own API has renamed the limit (it covers reasoning tokens too); self-hosted
        # servers still expect max_tokens.
        limit_name = "max_completion_tokens" if self.kind == "openai" else "max_tokens"
        body: dict[str, Any] = {
            "model": self.model,
            "messages": full,
            limit_name: params["max_tokens"],
        }
        reasoning = is_reasoning_model(self.spec)
        if not reasoning or params["temperature"] != 1.0:
            # Reasoning models accept only the default temperature; leave it out for them.
            body["temperature"] = params["temperature"]
        if self.config.options.reasoning_effort:
            body["reasoning_effort"] = self.config.options.reasoning_effort
        if not reasoning:
            # Chat completions take a seed (best-effort determinism on OpenAI's side; vLLM,
            # Ollama and llama.cpp honour it); left out for reasoning models, which may refuse it.
            body["seed"] = params["seed"]
        # The SDK's documented raw verb: same retries, backoff and timeouts as
        # ``chat.completions.create``, without its per-call walk over the typed parameters, which
        # was a third of the runner's CPU with 64 games in flight. Our body is plain JSON already.
        response = await client.post("/chat/completions", body=body, cast_to=ChatCompletion)
        text = (response.choices[0].message.content or "") if response.choices else ""
        usage = response.usage
        return text, usage.prompt_tokens if usage else 0, usage.completion_tokens if usage else 0


class AnthropicProvider(SDKProvider):
    """``anthropic:`` models through ``anthropic.AsyncAnthropic`` (the Messages API)."""

    def _make_client(self) -> anthropic.AsyncAnthropic:
        return anthropic.AsyncAnthropic(
            api_key=self.config.api_key,
            base_url=self.config.base_url or ANTHROPIC_URL,
            timeout=self.config.timeout,
            max_retries=self.config.max_retries,
            http_client=self._http_client(anthropic),
        )

    async def _send(
        self,
        client: anthropic.AsyncAnthropic,
        messages: list[Message],
        system: str | None,
        **params: Any,
    ) -> tuple[str, int, int]:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [{**m, "content": _anthropic_content(m["content"])} for m in messages],
            "max_tokens": params["max_tokens"],
        }
        if system:
            body["system"] = system
        budget = self.config.options.thinking_budget
        if budget:
            # Extended thinking: the thinking budget comes out of max_tokens, so the visible
            # answer keeps its own budget on top; thinking requires the default temperature.
            body["thinking"] = {"type": "enabled", "budget_tokens": budget}
            body["max_tokens"] = budget + params["max_tokens"]
        elif params["temperature"] != 1.0:
            # This SDK version dropped the temperature argument; 1.0 is the API's default.
            body["temperature"] = params["temperature"]
        # The raw verb for the same reason as in OpenAIProvider: the SDK's retries and timeouts,
        # without the typed-parameter walk.
        response = await client.post("/v1/messages", body=body, cast_to=AnthropicMessage)
        text = "".join(block.text for block in response.content if block.type == "text")
        return text, response.usage.input_tokens, response.usage.output_tokens


class OfflineProvider:
    """Stands in for a model in offline runs, where the players are rule-based agents but the
    experience steps (reflection, policy, curator) still need a reply. Deterministic and free."""

    def __init__(self, spec: str) -> None:
        self.spec = spec

    async def complete(
        self,
        messages: list[Message],
        *,
        system: str | None = None,
        temperature: float = 1.0,
        max_tokens: int = 1024,
        sample: int = 0,
    ) -> Completion:
        text = f"<answer>{self.spec} is a rule-based agent and writes no text.</answer>"
        return Completion(
            text=text, input_chars=prompt_chars(messages, system), output_chars=len(text)
        )


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
