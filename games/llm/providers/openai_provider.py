"""``openai:`` and ``openai-compatible:`` models (vLLM, Ollama, llama.cpp server, LM Studio)
through the official ``openai`` SDK's Chat Completions API."""

from __future__ import annotations

from typing import Any

import openai
from openai.types.chat import ChatCompletion

from games.llm.providers.base import SDKProvider
from games.llm.providers.config import OPENAI_URL, is_reasoning_model
from games.llm.providers.messages import Message


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
