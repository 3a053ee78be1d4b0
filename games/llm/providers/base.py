"""What every provider shares: the :class:`Provider` interface, the :class:`Completion` a call
returns, the :class:`ProviderError` a failed call raises, and :class:`SDKProvider`, the machinery
the OpenAI and Anthropic providers add to their SDKs (cache lookup, concurrency limit, timing,
retry count, error wrapping)."""

from __future__ import annotations

import asyncio
import contextvars
import logging
import time
import weakref
from collections.abc import AsyncIterator
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Protocol

from games.llm.cache import ResponseCache, request_key
from games.llm.providers.config import (
    ANTHROPIC_URL,
    OPENAI_URL,
    ProviderConfig,
    needs_reasoning_budget,
    parse_spec,
    server_url,
)
from games.llm.providers.messages import Message, keyed_messages, prompt_chars


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
    # The provider's own word on why the reply ended (OpenAI ``finish_reason``, Anthropic
    # ``stop_reason``); ``cut`` is True when the output limit ended it (``"length"``,
    # ``"max_tokens"``), so a caller can tell a whole reply from one cut short.
    finish_reason: str | None = None
    cut: bool = False
    # Tokens the provider says the model spent thinking (OpenAI's and Gemini's usage
    # ``completion_tokens_details.reasoning_tokens``); 0 where it reports none.
    reasoning_tokens: int = 0


# The finish reasons that mean "stopped by the output limit": OpenAI's Chat Completions say
# ``length``, Anthropic's Messages API ``max_tokens``.
CUT_REASONS = ("length", "max_tokens")


@dataclass(frozen=True)
class Sent:
    """What a provider's ``_send`` got back: the text, token counts and the finish reason."""

    text: str
    input_tokens: int
    output_tokens: int
    finish_reason: str | None = None
    reasoning_tokens: int = 0


log = logging.getLogger(__name__)


class ProviderError(RuntimeError):
    """A call that failed after the SDK's own retries; carries what the failed call cost."""

    def __init__(self, message: str, *, input_chars: int, latency_s: float, retries: int) -> None:
        super().__init__(message)
        self.input_chars = input_chars
        self.latency_s = latency_s
        self.retries = retries


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


async def closed_with_loop(client: Any) -> AsyncIterator[None]:
    """Holds ``client`` (an SDK client) open until its event loop shuts down, then closes it.
    An event loop closes the async generators begun on it when it shuts down (``asyncio.run``
    does, as does :func:`studyapp.background.close_loop`), so a client made on a loop whose
    caller never closed it (a script's ``asyncio.run``, a test) is closed there, on its own loop,
    rather than left to the garbage collector, which would log "Unclosed client session" at
    exit. :meth:`SDKProvider.aclose` closes it sooner the same way."""
    try:
        yield
    finally:
        await client.close()


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
        self._watched: weakref.WeakSet[asyncio.AbstractEventLoop] = weakref.WeakSet()
        self._thinking_noted = False

    def _loop_state(self) -> tuple[Any, asyncio.Semaphore]:
        loop = asyncio.get_running_loop()
        state = self._per_loop.get(loop)
        if state is None:
            client = self._make_client()
            state = (client, asyncio.Semaphore(self.config.concurrency), closed_with_loop(client))
            self._per_loop[loop] = state
        return state[0], state[1]

    async def _opened(self) -> tuple[Any, asyncio.Semaphore]:
        """This loop's client and limit; the first time, the loop is given the client to close
        when it shuts down (:func:`closed_with_loop`)."""
        client, limit = self._loop_state()
        loop = asyncio.get_running_loop()
        if loop not in self._watched:
            self._watched.add(loop)
            await anext(self._per_loop[loop][2])
        return client, limit

    def _http_client(self, module: Any) -> Any:
        """The SDK's own default HTTP client (its pool limits) plus our attempt counter. The
        SDK's aiohttp transport costs far less CPU per call than httpx when dozens of games are in
        flight (see benchmarks/llm_runner.py); without the ``aiohttp`` extra, httpx it is."""
        hooks = {"request": [_count_attempt]}
        try:
            return module.DefaultAioHttpClient(event_hooks=hooks)
        except RuntimeError:  # the SDK says its aiohttp extra is not installed
            return module.DefaultAsyncHttpxClient(event_hooks=hooks)

    def _sdk(self) -> ModuleType:
        """The provider's SDK module, imported by the subclass when a call first needs it: a
        process that never calls a model (a daphne serving pages, a worker's sweep) never pays
        the seconds its import takes."""
        raise NotImplementedError

    def _make_client(self) -> Any:
        raise NotImplementedError

    async def _send(
        self, client: Any, messages: list[Message], system: str | None, **params: Any
    ) -> Sent:
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
            "messages": keyed_messages(messages),
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
            reason = hit.get("finish_reason")
            return Completion(
                text=hit["text"],
                input_tokens=hit["input_tokens"],
                output_tokens=hit["output_tokens"],
                input_chars=input_chars,
                output_chars=len(hit["text"]),
                cached=True,
                finish_reason=reason,
                cut=reason in CUT_REASONS,
            )
        client, limit = await self._opened()
        api_error = self._sdk().APIError
        async with limit:
            box = [0]
            token = _attempts.set(box)
            started = time.perf_counter()
            try:
                sent = await self._send(
                    client,
                    messages,
                    system,
                    temperature=temperature,
                    max_tokens=max_tokens,
                    seed=request_seed(key),
                )
            except api_error as err:
                raise ProviderError(
                    f"{self.spec}: {type(err).__name__}: {err}",
                    input_chars=input_chars,
                    latency_s=time.perf_counter() - started,
                    retries=max(box[0] - 1, 0),
                ) from err
            finally:
                _attempts.reset(token)
            latency = time.perf_counter() - started
        self._note_thinking(sent)
        if self.cache is not None:
            reply = {
                "text": sent.text,
                "input_tokens": sent.input_tokens,
                "output_tokens": sent.output_tokens,
                "finish_reason": sent.finish_reason,
            }
            self.cache.put(key, reply)
        return Completion(
            text=sent.text,
            input_tokens=sent.input_tokens,
            output_tokens=sent.output_tokens,
            input_chars=input_chars,
            output_chars=len(sent.text),
            latency_s=latency,
            retries=max(box[0] - 1, 0),
            finish_reason=sent.finish_reason,
            cut=sent.finish_reason in CUT_REASONS,
            reasoning_tokens=sent.reasoning_tokens,
        )

    def _note_thinking(self, sent: Sent) -> None:
        """The provider's own signal that a model thinks (reasoning tokens in its usage) for a
        model the name patterns did not take for one (``needs_reasoning_budget``): said once,
        since its thinking eats the ordinary output limit (a cut reply is marked ``cut``)."""
        if not sent.reasoning_tokens or self._thinking_noted or self.config.options.max_tokens:
            return
        if needs_reasoning_budget(self.spec):
            return
        self._thinking_noted = True
        log.warning(
            "%s spent %d output tokens on reasoning (the provider's usage says so) but is not "
            "recognised as a reasoning model, so it gets the ordinary output limit; give it a "
            "larger one (--max-tokens-for %s=16384, or max_tokens in its model options)",
            self.spec,
            sent.reasoning_tokens,
            self.spec,
        )

    async def aclose(self) -> None:
        """Close this event loop's SDK client (its connections)."""
        loop = asyncio.get_running_loop()
        state = self._per_loop.pop(loop, None)
        if state is None:
            return
        if loop in self._watched:
            self._watched.discard(loop)
            await state[2].aclose()  # closes the client
        else:
            await state[0].close()
