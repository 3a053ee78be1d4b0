"""The stand-in provider of ``offline:`` specs (rule-based agents): a fixed, free reply."""

from __future__ import annotations

from games.llm.providers.base import Completion
from games.llm.providers.messages import Message, prompt_chars


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
