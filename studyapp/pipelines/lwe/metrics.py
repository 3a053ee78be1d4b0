"""The paper's four figures (§4.3) plus the cumulative-accuracy curve, from per-case results.

Accuracy reads the order the cases were shown in only (the commands show each case in one seeded
random ordering of its responses, as §4.3 does: ``data.orient``); consistency asks whether the verdict survives swapping the
responses; pair accuracy needs both orders right. Cost is characters in plus out, relative to the
vanilla judge on the same cases.
"""

from __future__ import annotations

from collections.abc import Sequence
from statistics import fmean, stdev

from studyapp.pipelines.lwe.judging import CaseResult


def score(results: Sequence[CaseResult]) -> dict[str, float | int]:
    """Accuracy, consistency and pair accuracy over ``results``.

    >>> score([CaseResult("x", "A", "A", "A"), CaseResult("y", "B", "A", "B")])
    {'cases': 2, 'accuracy': 0.5, 'consistency': 0.5, 'pair_accuracy': 0.5}
    """
    n = len(results)
    if n == 0:
        return {"cases": 0, "accuracy": 0.0, "consistency": 0.0, "pair_accuracy": 0.0}
    return {
        "cases": n,
        "accuracy": sum(r.correct for r in results) / n,
        "consistency": sum(r.consistent for r in results) / n,
        "pair_accuracy": sum(r.pair_correct for r in results) / n,
    }


def cumulative_accuracy(results: Sequence[CaseResult]) -> list[float]:
    """Running accuracy after each case, in the order the cases were evaluated (Figure 3)."""
    curve: list[float] = []
    correct = 0
    for count, result in enumerate(results, start=1):
        correct += result.correct
        curve.append(correct / count)
    return curve


def relative_cost(method_chars: int, vanilla_chars: int) -> float | None:
    """Characters a method needed per character the vanilla judge needed (vanilla = 1.0)."""
    return method_chars / vanilla_chars if vanilla_chars else None


def mean_std(values: Sequence[float]) -> dict[str, float]:
    """Mean and sample standard deviation across runs (0.0 for a single run)."""
    if not values:
        return {"mean": 0.0, "std": 0.0}
    return {"mean": fmean(values), "std": stdev(values) if len(values) > 1 else 0.0}
