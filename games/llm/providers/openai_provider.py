"""``openai:`` and ``openai-compatible:`` models (vLLM, Ollama, llama.cpp server, LM Studio)
through the official ``openai`` SDK's Chat Completions API."""

from __future__ import annotations

from types import ModuleType
from typing import TYPE_CHECKING, Any

from games.llm.providers.base import SDKProvider, Sent
from games.llm.providers.config import OPENAI_URL, is_gemini_model, is_reasoning_model
from games.llm.providers.messages import GEMINI_IMAGE_TYPES, Message

if TYPE_CHECKING:
    import openai


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


def check_gemini_images(spec: str, messages: list[Message]) -> None:
    """Refuse, before sending, an image a Gemini model cannot read (Gemini reads PNG, JPEG,
    WebP, HEIC and HEIF; a GIF would come back as a 400 after the call was paid for)."""
    for message in messages:
        content = message["content"]
        if isinstance(content, str):
            continue
        for part in content:
            if part.get("type") == "image" and part["media_type"] not in GEMINI_IMAGE_TYPES:
                raise ValueError(
                    f"{spec}: Gemini reads {', '.join(GEMINI_IMAGE_TYPES)} images, not "
                    f"{part['media_type']}; convert the image first"
                )


class OpenAIProvider(SDKProvider):
    """``openai:`` and ``openai-compatible:`` models through ``openai.AsyncOpenAI``.

    A Gemini model behind an OpenAI-compatible endpoint (Google's own, named in
    ``COMPATIBLE_SERVERS`` as ``gemini=https://generativelanguage.googleapis.com/v1beta/openai``
    and reached as ``openai-compatible@gemini:gemini-2.5-flash``, or a proxy serving a
    ``gemini-*`` model) gets the same request: text and ``image_url`` parts with base64 data
    URLs, ``max_tokens``, a bearer key; its images are checked against the types Gemini reads
    first (`check_gemini_images`).
    """

    def _sdk(self) -> ModuleType:
        import openai  # on the first call only (SDKProvider._sdk)

        return openai

    def _make_client(self) -> openai.AsyncOpenAI:
        openai = self._sdk()
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
    ) -> Sent:
        if is_gemini_model(self.spec):
            check_gemini_images(self.spec, messages)
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
        response = await client.post(
            "/chat/completions", body=body, cast_to=self._sdk().types.chat.ChatCompletion
        )
        choice = response.choices[0] if response.choices else None
        text = (choice.message.content or "") if choice else ""
        usage = response.usage
        details = usage.completion_tokens_details if usage else None
        return Sent(
            text,
            usage.prompt_tokens if usage else 0,
            usage.completion_tokens if usage else 0,
            choice.finish_reason if choice else None,  # "length" when max_tokens cut it
            (details.reasoning_tokens or 0) if details else 0,
        )
