"""``anthropic:`` models through the official ``anthropic`` SDK's Messages API, with extended
thinking when the model options give it a budget."""

from __future__ import annotations

from types import ModuleType
from typing import TYPE_CHECKING, Any

from games.llm.providers.base import SDKProvider, Sent
from games.llm.providers.config import ANTHROPIC_URL
from games.llm.providers.messages import Message

if TYPE_CHECKING:
    import anthropic


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


class AnthropicProvider(SDKProvider):
    """``anthropic:`` models through ``anthropic.AsyncAnthropic`` (the Messages API)."""

    def _sdk(self) -> ModuleType:
        import anthropic  # on the first call only (SDKProvider._sdk)

        return anthropic

    def _make_client(self) -> anthropic.AsyncAnthropic:
        anthropic = self._sdk()
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
    ) -> Sent:
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
        response = await client.post("/v1/messages", body=body, cast_to=self._sdk().types.Message)
        text = "".join(block.text for block in response.content if block.type == "text")
        # stop_reason "max_tokens" when the limit cut the reply
        return Sent(
            text, response.usage.input_tokens, response.usage.output_tokens, response.stop_reason
        )
