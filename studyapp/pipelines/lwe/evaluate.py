"""Runs one judging method over several random orders of a dataset and reports the figures.

LWE learns in sequence, so its numbers depend on the order of the cases; the paper reports the
mean and standard deviation over three random orders, and so do we. Order-free baselines run once.
"""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable
from typing import Any

from studyapp.pipelines.lwe.algorithm import LweOptions, run_lwe, run_selective_lwe
from studyapp.pipelines.lwe.baselines import (
    BASELINES,
    LABELLED_BASELINES,
    SEQUENTIAL_BASELINES,
    run_vanilla,
    split_labelled,
)
from studyapp.pipelines.lwe.data import PairCase, orient
from studyapp.pipelines.lwe.judging import Report, RunResult, no_report, prompt_hashes
from studyapp.pipelines.lwe.llm import Provider
from studyapp.pipelines.lwe.metrics import cumulative_accuracy, mean_std, relative_cost, score

Method = Callable[..., Awaitable[RunResult]]

METHODS: dict[str, Method] = {
    **BASELINES,
    "lwe": run_lwe,
    "selective-lwe": run_selective_lwe,
}
SEQUENTIAL = {"lwe", "selective-lwe", *SEQUENTIAL_BASELINES}
FIGURES = ("accuracy", "consistency", "pair_accuracy", "relative_cost")


def shuffled_orders(cases: list[PairCase], count: int, seed: int) -> list[list[PairCase]]:
    """``count`` reproducible random permutations of ``cases`` (order ``i`` uses ``seed + i``)."""
    orders = []
    for i in range(count):
        order = list(cases)
        random.Random(seed + i).shuffle(order)
        orders.append(order)
    return orders


def run_summary(run: RunResult, vanilla_chars: int | None) -> dict[str, Any]:
    results = run.in_order()
    figures: dict[str, Any] = dict(score(results))
    figures["relative_cost"] = (
        relative_cost(run.ledger.method_chars, vanilla_chars) if vanilla_chars else None
    )
    return {
        "method": run.method,
        "order": run.order,
        "figures": figures,
        "cost": run.ledger.as_dict(),
        "curve": cumulative_accuracy(results),
        "history": run.history,
        "meta_prompt": run.meta_prompt,
        "initial_meta_prompt": run.initial_meta_prompt,
        "results": [result.to_json() for result in results],
    }


def cut_replies(summaries: list[dict[str, Any]]) -> dict[str, int]:
    """Replies the output limit cut, per step, over a method's passes (the ledgers' ``cut``)."""
    total: dict[str, int] = {}
    for summary in summaries:
        for step, count in summary["cost"].get("cut", {}).items():
            total[step] = total.get(step, 0) + count
    return total


def cut_replies_note(cut: dict[str, int]) -> str:
    """A run's note on replies its output limits cut ("" when none were)."""
    if not cut:
        return ""
    steps = ", ".join(f"{step} {count}" for step, count in sorted(cut.items()))
    return (
        f"{sum(cut.values())} replies were cut by the output limit ({steps}); a cut refinement is "
        "asked again at 32,768 tokens, and one cut again, or a cut summary, keeps the previous "
        "meta-prompt (see each run's history)"
    )


async def evaluate(
    method: str,
    cases: list[PairCase],
    provider: Provider,
    *,
    orders: int = 3,
    seed: int = 0,
    options: LweOptions | None = None,
    report: Report = no_report,
    runs: list[RunResult] | None = None,
    vanilla_chars: int | None = None,
    word_cap: int | None = None,
    textgrad_train: int = 10,
    textgrad_validation: int = 10,
    labelled_pool: list[PairCase] | None = None,
    dc_orders: int = 1,
    response_order: str = "file",
    response_seed: int = 0,
) -> dict[str, Any]:
    """Run ``method`` over ``orders`` random orders (one pass for order-free baselines).

    ``response_order`` "random" first shows each case's responses in the seeded random ordering
    of :func:`data.orient` (``response_seed``), as the paper's Accuracy reads them; "file" (this
    function's default; the commands default to "random") keeps the given order. The result's
    ``response_order`` records which, with the seed and the swapped ids.

    ``runs`` collects each pass as it starts, so a caller whose run is stopped midway still has
    the verdicts reached. Without ``vanilla_chars`` a vanilla pass is run first to price the
    method against (skipped when the method is vanilla itself).
    """
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; choose one of {', '.join(METHODS)}")
    runs = runs if runs is not None else []
    cases, shown = orient(cases, response_order, response_seed)
    if labelled_pool:
        labelled_pool, _ = orient(labelled_pool, response_order, response_seed)
    labelled: dict[str, Any] = {}
    tested = cases
    if method in LABELLED_BASELINES:
        # TextGrad* trains on labelled cases (appendix B): VL-RewardBench's 10 + 10 come from its
        # test set and are scored on the other 1,227; Multimodal RewardBench's 20 + 20 come from
        # the 3,711 cases outside the 1,000 tested (``labelled_pool``), which are all scored.
        if labelled_pool:
            train, validation, _ = split_labelled(
                labelled_pool, textgrad_train, textgrad_validation, seed
            )
        else:
            train, validation, tested = split_labelled(
                cases, textgrad_train, textgrad_validation, seed
            )
        labelled = {"train": train, "validation": validation}
    passes = shuffled_orders(tested, orders, seed) if method in SEQUENTIAL else [list(tested)]
    if method == "dynamic-cheatsheet":
        # Appendix A: Dynamic Cheatsheet runs once, on LWE's first order (run0); dc_orders > 1
        # repeats it over LWE's further orders.
        passes = passes[: max(1, dc_orders)]
    reference_cost: dict[str, Any] | None = None
    steps = len(passes) + (0 if method == "vanilla" or vanilla_chars else 1)
    step = 0

    def scaled(offset: int) -> Report:
        async def inner(fraction: float, message: str) -> None:
            await report((offset + fraction) / steps, message)

        return inner

    if method != "vanilla" and not vanilla_chars:
        reference = RunResult("vanilla", [case.id for case in cases])
        runs.append(reference)
        await run_vanilla(cases, provider, run=reference, report=scaled(step))
        vanilla_chars = reference.ledger.method_chars
        reference_cost = reference.ledger.as_dict()
        step += 1

    summaries = []
    for order in passes:
        run = RunResult(method, [case.id for case in order])
        runs.append(run)
        extra = {"options": options} if method in SEQUENTIAL | {"sample-specific"} else {}
        if method == "dynamic-cheatsheet" and word_cap is not None:
            extra["word_cap"] = word_cap
        extra.update(labelled)
        await METHODS[method](order, provider, run=run, report=scaled(step), **extra)
        if method == "vanilla":
            vanilla_chars = run.ledger.method_chars
        summaries.append(run_summary(run, vanilla_chars))
        step += 1

    return {
        "method": method,
        "prompts": prompt_hashes(),  # sha256 of each prompt file in force
        "cases": len(tested),
        "labelled_cases": {k: [c.id for c in v] for k, v in labelled.items()},
        "orders": len(passes),
        "seed": seed,
        "response_order": shown,
        "vanilla_chars": vanilla_chars,
        "reference_cost": reference_cost,  # the vanilla pass run only to price the method
        "summary": {
            name: mean_std(
                [s["figures"][name] for s in summaries if s["figures"][name] is not None]
            )
            for name in FIGURES
        },
        "cut_replies": cut_replies(summaries),  # replies the output limit cut, per step
        "runs": summaries,
    }
