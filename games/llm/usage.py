"""Adds up what model calls cost, in the shape the experiment record stores under ``usage``."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from games.llm.providers import Completion, ProviderError


@dataclass
class Usage:
    """Totals over a set of calls. A failed call counts as a call, with its retries and time."""

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    input_chars: int = 0
    output_chars: int = 0
    retries: int = 0
    latency_s: float = 0.0

    def add(self, completion: Completion) -> None:
        self.calls += 1
        self.input_tokens += completion.input_tokens
        self.output_tokens += completion.output_tokens
        self.input_chars += completion.input_chars
        self.output_chars += completion.output_chars
        self.retries += completion.retries
        self.latency_s += completion.latency_s

    def add_failure(self, error: ProviderError) -> None:
        self.calls += 1
        self.input_chars += error.input_chars
        self.retries += error.retries
        self.latency_s += error.latency_s

    def merge(self, other: Usage) -> None:
        for name, value in asdict(other).items():
            setattr(self, name, getattr(self, name) + value)

    def as_dict(self) -> dict[str, float]:
        data = asdict(self)
        data["latency_s"] = round(self.latency_s, 4)
        return data
