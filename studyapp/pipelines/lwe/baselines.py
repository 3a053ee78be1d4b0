"""The paper's baselines (§4.1): Vanilla, Chain-of-Thought, Majority Voting and Sample-Specific
Prompt. Each judges every case in both orders; the as-given order is the method's answer and its
cost, the swapped order is a probe for consistency.

Cases are independent here, so they run concurrently (bounded; the provider adds its own limit).
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Awaitable, Callable
from typing import Any

from studyapp.pipelines.lwe.algorithm import LweOptions, initial_meta_prompt
from studyapp.pipelines.lwe.data import PairCase
from studyapp.pipelines.lwe.judging import (
    CaseResult,
    Report,
    RunResult,
    case_block,
    flip,
    judge,
    no_report,
    render,
    tagged,
)
from studyapp.pipelines.lwe.llm import METHOD, PROBE, Ledger, Provider, ask

VOTES = 5
VOTE_TEMPERATURE = 0.7

Verdict = Callable[[PairCase, Ledger, str], Awaitable[str | None]]
# Both verdicts for a case: (as-given order, swapped order in the swapped case's own labels).
Verdicts = Callable[[PairCase, Ledger], Awaitable[tuple[str | None, str | None]]]


def both_orders(verdict: Verdict) -> Verdicts:
    """The usual pair: the as-given order is the method, the swapped order a probe."""

    async def verdicts(case: PairCase, ledger: Ledger) -> tuple[str | None, str | None]:
        first, second = await asyncio.gather(
            verdict(case, ledger, METHOD), verdict(case.swapped(), ledger, PROBE)
        )
        return first, second

    return verdicts


async def _each_case(
    name: str,
    cases: list[PairCase],
    verdicts: Verdicts,
    run: RunResult | None,
    report: Report,
    concurrency: int,
) -> RunResult:
    run = run or RunResult(name, [case.id for case in cases])
    limit = asyncio.Semaphore(concurrency)
    done = 0

    async def one(case: PairCase) -> None:
        nonlocal done
        async with limit:
            first, second = await verdicts(case, run.ledger)
        run.results[case.id] = CaseResult(case.id, case.label, first, flip(second), path=name)
        done += 1
        await report(done / len(cases), f"{name} case {done}/{len(cases)}")

    async with asyncio.TaskGroup() as group:
        for case in cases:
            group.create_task(one(case))
    return run


async def _run_fixed_prompt(
    template: str,
    cases: list[PairCase],
    provider: Provider,
    *,
    run: RunResult | None = None,
    report: Report = no_report,
    concurrency: int = 8,
    temperature: float = 0.0,
) -> RunResult:
    """One fixed judge prompt (``template``) for every case, judged in both orders."""

    async def verdict(case: PairCase, ledger: Ledger, purpose: str) -> str | None:
        prompt = render(template, case=case_block(case))
        return (await judge(provider, ledger, prompt, purpose=purpose, temperature=temperature))[0]

    return await _each_case(template, cases, both_orders(verdict), run, report, concurrency)


async def run_vanilla(cases: list[PairCase], provider: Provider, **options: Any) -> RunResult:
    """One fixed prompt for every case; the cost unit the others are measured in."""
    return await _run_fixed_prompt("vanilla", cases, provider, **options)


async def run_cot(cases: list[PairCase], provider: Provider, **options: Any) -> RunResult:
    """The vanilla prompt with an explicit instruction to reason step by step first."""
    return await _run_fixed_prompt("cot", cases, provider, **options)


def majority(choices: list[str | None]) -> str | None:
    """The most common readable verdict; None on a tie or when none was readable."""
    counts = Counter(choice for choice in choices if choice is not None).most_common()
    if not counts or (len(counts) > 1 and counts[0][1] == counts[1][1]):
        return None
    return counts[0][0]


async def run_majority(
    cases: list[PairCase],
    provider: Provider,
    *,
    run: RunResult | None = None,
    report: Report = no_report,
    concurrency: int = 8,
    votes: int = VOTES,
    temperature: float = VOTE_TEMPERATURE,
) -> RunResult:
    """Five stochastic vanilla verdicts per case (temperature 0.7); the majority wins.

    Each vote uses its own sample index, so a response cache keyed by sample keeps them distinct.
    """

    async def verdict(case: PairCase, ledger: Ledger, purpose: str) -> str | None:
        prompt = render("vanilla", case=case_block(case))
        replies = await asyncio.gather(
            *(
                judge(provider, ledger, prompt, purpose=purpose, temperature=temperature, sample=i)
                for i in range(votes)
            )
        )
        return majority([choice for choice, _ in replies])

    return await _each_case("majority", cases, both_orders(verdict), run, report, concurrency)


async def run_sample_specific(
    cases: list[PairCase],
    provider: Provider,
    *,
    run: RunResult | None = None,
    report: Report = no_report,
    concurrency: int = 8,
    options: LweOptions | None = None,
    meta_prompt: str | None = None,
) -> RunResult:
    """A tailored evaluation prompt per case from a fixed meta-prompt: LWE without the learning.

    The evaluation prompt is written once per case, from the as-given order, and reused for the
    swapped probe, exactly as LWE does.
    """
    options = options or LweOptions()
    meta = meta_prompt or initial_meta_prompt()

    async def verdicts(case: PairCase, ledger: Ledger) -> tuple[str | None, str | None]:
        reply = await ask(
            provider,
            ledger,
            "build",
            render("build_eval", meta_prompt=meta, case=case_block(case)),
            temperature=options.temperature,
        )
        evaluation_prompt = tagged(reply, "evaluation_prompt") or reply.strip()
        replies = await asyncio.gather(
            *(
                judge(
                    provider,
                    ledger,
                    render(
                        "judge_specific",
                        evaluation_prompt=evaluation_prompt,
                        case=case_block(shown),
                    ),
                    purpose=purpose,
                    temperature=options.temperature,
                )
                for shown, purpose in ((case, METHOD), (case.swapped(), PROBE))
            )
        )
        return replies[0][0], replies[1][0]

    run = await _each_case("sample-specific", cases, verdicts, run, report, concurrency)
    run.meta_prompt = meta
    return run
