"""The ledger that prices every model call LWE makes, and the one helper that makes them.

LWE only ever talks to a model through ``await provider.complete(...)`` (the project's Provider
interface), so the algorithm does not care which provider (OpenAI, Anthropic, a local server) sits
behind it. The ledger exists because the paper's cost figure is characters in plus out, and the
figure is only honest if every call is counted in one place.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# The one Provider interface of the project; LWE talks to a model only through ``complete``.
from games.llm.providers import Completion, Provider, image_part, text_part

__all__ = ["Completion", "Ledger", "Provider", "ask", "ask_completion"]

# The output limit of a call whose reply is short by nature (a verdict, an evaluation prompt, a
# feedback note); the meta-prompt's refinement and summary are sized by LweOptions instead.
CALL_TOKENS = 2048


# Calls that a method needs to produce its answer are "method" calls and make up its cost; calls
# that only exist to measure it (the swapped-order judgment used for consistency) are "probe"
# calls, so the vanilla baseline stays at 1.0x as in the paper.
METHOD = "method"
PROBE = "probe"


@dataclass
class Ledger:
    """Characters and calls per step name (``judge``, ``build``, ``feedback``, ...) and purpose."""

    calls: dict[str, int] = field(default_factory=dict)
    chars: dict[str, int] = field(default_factory=dict)
    method_chars: int = 0
    probe_chars: int = 0
    # Replies the output limit cut, per step, and the provider's finish reasons for them: a run's
    # notes say how many of its replies were not whole.
    cut: dict[str, int] = field(default_factory=dict)
    cut_reasons: dict[str, int] = field(default_factory=dict)

    def record(self, step: str, completion: Completion, purpose: str = METHOD) -> None:
        used = completion.input_chars + completion.output_chars
        self.calls[step] = self.calls.get(step, 0) + 1
        self.chars[step] = self.chars.get(step, 0) + used
        if completion.cut:
            reason = completion.finish_reason or "?"
            self.cut[step] = self.cut.get(step, 0) + 1
            self.cut_reasons[reason] = self.cut_reasons.get(reason, 0) + 1
        if purpose == PROBE:
            self.probe_chars += used
        else:
            self.method_chars += used

    @property
    def total_chars(self) -> int:
        return self.method_chars + self.probe_chars

    def as_dict(self) -> dict[str, Any]:
        return {
            "calls": dict(self.calls),
            "chars": dict(self.chars),
            "method_chars": self.method_chars,
            "probe_chars": self.probe_chars,
            "total_chars": self.total_chars,
            "cut": dict(self.cut),
            "cut_reasons": dict(self.cut_reasons),
        }


@functools.lru_cache(maxsize=64)
def _image_bytes(path: str) -> bytes:
    return Path(path).read_bytes()


def image_parts(paths: Sequence[str | None]) -> list[dict[str, str]]:
    """Message parts for the images at these paths (None entries skipped), read once each."""
    return [image_part(_image_bytes(p)) for p in paths if p]


async def ask(
    provider: Provider,
    ledger: Ledger,
    step: str,
    prompt: str,
    *,
    system: str | None = None,
    temperature: float = 0.0,
    max_tokens: int = CALL_TOKENS,
    sample: int = 0,
    purpose: str = METHOD,
    images: Sequence[str | None] = (),
) -> str:
    """One user-turn call, recorded in the ledger; returns the reply text (see
    :func:`ask_completion`, which returns the whole completion)."""
    completion = await ask_completion(
        provider,
        ledger,
        step,
        prompt,
        system=system,
        temperature=temperature,
        max_tokens=max_tokens,
        sample=sample,
        purpose=purpose,
        images=images,
    )
    return completion.text


async def ask_completion(
    provider: Provider,
    ledger: Ledger,
    step: str,
    prompt: str,
    *,
    system: str | None = None,
    temperature: float = 0.0,
    max_tokens: int = CALL_TOKENS,
    sample: int = 0,
    purpose: str = METHOD,
    images: Sequence[str | None] = (),
) -> Completion:
    """One user-turn call, recorded in the ledger (a reply cut by ``max_tokens`` counted as cut,
    with the provider's finish reason); returns the completion.

    ``images`` are file paths sent with the text (the benchmarks are image-text: the judge must
    see the image); the cost counts the text only, as the paper's character cost does.
    """
    parts = image_parts(images)
    content: str | list[dict[str, str]] = [*parts, text_part(prompt)] if parts else prompt
    completion = await provider.complete(
        [{"role": "user", "content": content}],
        system=system,
        temperature=temperature,
        max_tokens=max_tokens,
        sample=sample,
    )
    ledger.record(step, completion, purpose)
    return completion
