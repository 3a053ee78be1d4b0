"""Model specs, options and provider configs: which provider a spec names
(``kind[@server]:model``), how much a model may write and think (:class:`ModelOptions`), and how
to reach its server (:class:`ProviderConfig`, built from the environment by the entry points
with :func:`config_from_env`). Plain data; no SDK is imported here."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from games.llm.servers import SERVER_NAME, parse_servers, server_key_name

PROVIDER_KINDS = ("openai", "anthropic", "openai-compatible", "offline")
OPENAI_URL = "https://api.openai.com/v1"
ANTHROPIC_URL = "https://api.anthropic.com"
# Google's OpenAI-compatible endpoint for Gemini models: name it in COMPATIBLE_SERVERS
# (gemini=<this>) and reach a model as openai-compatible@gemini:gemini-2.5-flash.
GEMINI_OPENAI_URL = "https://generativelanguage.googleapis.com/v1beta/openai"

REASONING_EFFORTS = ("minimal", "low", "medium", "high")
# OpenAI's reasoning models: o1, o3, o4-mini, gpt-5 and their dated or sized variants.
_OPENAI_REASONING = re.compile(r"^(?:o\d|gpt-5)(?:$|[-.:])")
# Open reasoning models served through ``openai-compatible:`` (vLLM, SGLang, DeepSeek's API):
# DeepSeek-R1 and its distillations, deepseek-reasoner, QwQ, *-Thinking checkpoints.
_OPEN_REASONING = re.compile(r"(?:^|[-_/.:])(?:r1|qwq|reasoner|thinking)(?:$|[-_/.:])", re.I)
# Google's thinking models: Gemini 2.5 and later think by default (Google's model cards; the
# OpenAI-compatible endpoint counts the thinking in usage's reasoning_tokens, inside max_tokens).
_GEMINI_THINKING = re.compile(r"^gemini-(?:2\.5|[3-9])", re.I)
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


def is_gemini_model(spec: str) -> bool:
    """A Gemini model served through an OpenAI-compatible endpoint (Google's, or a proxy's
    ``google/gemini-*``), whose image rules the provider applies.

    >>> is_gemini_model("openai-compatible@gemini:gemini-2.5-flash")
    True
    >>> is_gemini_model("openai-compatible:google/gemini-2.0-flash"), is_gemini_model("openai:gpt-4o")
    (True, False)
    """
    kind, model = parse_spec(spec)
    return kind == "openai-compatible" and model.rsplit("/", 1)[-1].lower().startswith("gemini")


def needs_reasoning_budget(spec: str) -> bool:
    """Models that think before they answer and so need far more than a move's 1,024 tokens:
    OpenAI's reasoning models, open ones served through ``openai-compatible:`` (DeepSeek-R1,
    deepseek-reasoner, QwQ, *-Thinking), whose thinking is part of the visible output, and
    Gemini 2.5 and later, which think by default and count the thinking in the output limit.

    >>> needs_reasoning_budget("openai-compatible:deepseek-ai/DeepSeek-R1-Distill-Qwen-7B")
    True
    >>> needs_reasoning_budget("openai-compatible:deepseek-chat")
    False
    >>> needs_reasoning_budget("openai-compatible@gemini:gemini-2.5-pro")
    True
    >>> needs_reasoning_budget("openai-compatible@gemini:gemini-2.0-flash")
    False
    """
    kind, model = parse_spec(spec)
    if kind == "openai-compatible":
        name = model.rsplit("/", 1)[-1]
        gemini_thinks = is_gemini_model(spec) and _GEMINI_THINKING.match(name) is not None
        return gemini_thinks or _OPEN_REASONING.search(model) is not None
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


# A model loaded from a folder in this process (games.llm.local), not reached through a server.
LOCAL_PREFIX = "local:"


def local_path(spec: str, *, required: bool = False) -> str | None:
    """The folder of a ``local:<path>`` spec; None for any other spec (a ValueError instead when
    ``required``). A ``local:`` spec with no path is a ValueError.

    >>> local_path("local:/models/aligned"), local_path("openai:gpt-4o")
    ('/models/aligned', None)
    """
    if not spec.startswith(LOCAL_PREFIX):
        if required:
            raise ValueError(f"a local model spec looks like 'local:<path>', not {spec!r}")
        return None
    path = spec[len(LOCAL_PREFIX) :]
    if not path:
        raise ValueError(f"a local model spec needs a path: 'local:<path>', not {spec!r}")
    return path


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
