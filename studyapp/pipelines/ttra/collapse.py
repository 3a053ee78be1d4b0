"""Detect the degenerate solution the paper warns of (§6.1): one answer for almost every question.

Majority-vote rewards are satisfied just as well by answering everything with the same word as by
answering correctly; on MIMIC-CDM the TTRL-only run predicted one pathology in 99.93% of responses.
The measure here is the share of questions whose plurality answer is the single most common one.
"""

from __future__ import annotations

import warnings
from collections import Counter
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass, field


class CollapseWarning(UserWarning):
    """The model gives one answer to almost every question."""


@dataclass(frozen=True)
class Collapse:
    """The most common answer, its share of the answered questions, and how many were answered."""

    answer: str | None
    share: float
    questions: int

    def describe(self) -> str:
        return (
            f"answer {self.answer!r} is the majority answer for {self.share:.1%} of "
            f"{self.questions} questions"
        )


def dominant_share(answers: Iterable[str | None]) -> Collapse:
    """How concentrated a set of per-question answers is; None and "" (no answer) are left out.

    >>> dominant_share(["a", "a", "b", None])
    Collapse(answer='a', share=0.6666666666666666, questions=3)
    >>> dominant_share([None])
    Collapse(answer=None, share=0.0, questions=0)
    """
    counts = Counter(a for a in answers if a)
    total = sum(counts.values())
    if not total:
        return Collapse(None, 0.0, 0)
    answer, top = counts.most_common(1)[0]
    return Collapse(answer, top / total, total)


@dataclass
class CollapseMonitor:
    """Keeps the latest majority answer per question and judges whether training has collapsed.

    ``min_questions`` stops a handful of early questions from tripping it; ``threshold`` is the
    share above which it fires. ``check`` warns (`CollapseWarning`) and returns the measurement
    when it fires, so the caller can also stop.
    """

    threshold: float = 0.9
    min_questions: int = 8
    latest: dict[Hashable, str | None] = field(default_factory=dict)

    def update(self, winners: Mapping[Hashable, str | None]) -> None:
        self.latest.update(winners)

    def measure(self) -> Collapse:
        return dominant_share(self.latest.values())

    def check(self) -> Collapse | None:
        found = self.measure()
        if found.questions >= self.min_questions and found.share > self.threshold:
            warnings.warn(f"collapse: {found.describe()}", CollapseWarning, stacklevel=2)
            return found
        return None
