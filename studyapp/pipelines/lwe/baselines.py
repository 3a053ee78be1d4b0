"""Every baseline of the paper's table 1 (§4.1), in one place: Vanilla, Chain-of-Thought, Majority
Voting, Sample-Specific Prompt, Dynamic Cheatsheet (DC-RS) and TextGrad* (prompt optimisation on
labelled cases). Each judges every case in both
orders; the as-given order is the method's answer and its cost, the swapped order is a probe for
consistency.

Cases are independent for all but Dynamic Cheatsheet, so they run concurrently (bounded; the
provider adds its own limit); Dynamic Cheatsheet learns in sequence, like LWE.
"""

from __future__ import annotations

import asyncio
import math
import random
import re
from collections import Counter
from collections.abc import Awaitable, Callable
from typing import Any

from studyapp.pipelines.lwe.algorithm import (
    LweOptions,
    initial_meta_prompt,
    judge_with_specific_prompt,
)
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
        found = await judge(
            provider, ledger, prompt, purpose=purpose, temperature=temperature, images=[case.image]
        )
        return found[0]

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
                judge(
                    provider,
                    ledger,
                    prompt,
                    purpose=purpose,
                    temperature=temperature,
                    sample=i,
                    images=[case.image],
                )
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

    Each order gets its own evaluation prompt, written for the pair as shown (the swapped one as a
    probe), exactly as LWE does (algorithm 4 of the paper).
    """
    options = options or LweOptions()
    meta = meta_prompt or initial_meta_prompt()

    async def verdicts(case: PairCase, ledger: Ledger) -> tuple[str | None, str | None]:
        replies = await asyncio.gather(
            *(
                judge_with_specific_prompt(
                    provider, ledger, meta, shown, options.temperature, purpose
                )
                for shown, purpose in ((case, METHOD), (case.swapped(), PROBE))
            )
        )
        return replies[0][1], replies[1][1]

    run = await _each_case("sample-specific", cases, verdicts, run, report, concurrency)
    run.meta_prompt = meta
    return run


DC_RETRIEVED = 3  # k: earlier judged cases shown to the curator (Dynamic Cheatsheet's default)
DC_WORD_CAP = 2000  # the cheatsheet's length limit asked of the curator, about DC's own
_WORDS = re.compile(r"\w+")


def _bag(case: PairCase) -> Counter[str]:
    return Counter(
        w.lower() for w in _WORDS.findall(f"{case.prompt} {case.response_a} {case.response_b}")
    )


def similarity(a: Counter[str], b: Counter[str]) -> float:
    """Cosine similarity of two word-count vectors (0 when either is empty).

    >>> round(similarity(Counter("a b".split()), Counter("a c".split())), 2)
    0.5
    """
    dot = sum(count * b[word] for word, count in a.items())
    norm = math.sqrt(sum(v * v for v in a.values())) * math.sqrt(sum(v * v for v in b.values()))
    return dot / norm if norm else 0.0


def most_similar(
    case: PairCase, judged: list[tuple[PairCase, str]], k: int
) -> list[tuple[PairCase, str]]:
    """The ``k`` earlier judged cases closest to ``case`` (ties: the earlier one first)."""
    bag = _bag(case)
    ranked = sorted(
        enumerate(judged), key=lambda item: (-similarity(bag, _bag(item[1][0])), item[0])
    )
    return [pair for _, pair in ranked[:k]]


async def run_dynamic_cheatsheet(
    cases: list[PairCase],
    provider: Provider,
    *,
    run: RunResult | None = None,
    report: Report = no_report,
    options: LweOptions | None = None,
    retrieved: int = DC_RETRIEVED,
    word_cap: int = DC_WORD_CAP,
) -> RunResult:
    """Dynamic Cheatsheet with retrieval and synthesis (DC-RS, Suzgun et al. 2025), as a judge.

    For each case in order: retrieve the ``retrieved`` most similar cases judged so far (with the
    verdict text given then), let the curator rewrite the cheatsheet from them and the new case,
    then judge the case with the new cheatsheet; the swapped order is judged with the same
    cheatsheet as a probe. The cheatsheet is updated on every case, unconditionally, which is what
    makes DC the costly baseline of table 1. Retrieval here is lexical (word-count cosine) so it
    needs no embedding model; DC itself retrieves by embedding similarity.
    """
    options = options or LweOptions()
    run = run or RunResult("dynamic-cheatsheet", [case.id for case in cases])
    cheatsheet = render("dc_initial")
    judged: list[tuple[PairCase, str]] = []
    temperature = options.temperature
    for t, case in enumerate(cases, start=1):
        examples = most_similar(case, judged, retrieved)
        shown = "\n\n".join(
            render(
                "dc_example",
                number=number,
                prompt=earlier.prompt,
                response_a=earlier.response_a,
                response_b=earlier.response_b,
                judgment=judgment,
            )
            for number, (earlier, judgment) in enumerate(examples, start=1)
        )
        reply = await ask(
            provider,
            run.ledger,
            "curate",
            render(
                "dc_curate",
                cheatsheet=cheatsheet,
                examples=shown or "(none yet)",
                prompt=case.prompt,
                response_a=case.response_a,
                response_b=case.response_b,
                word_cap=word_cap,
            ),
            temperature=temperature,
            images=[case.image],
        )
        proposed = tagged(reply, "cheatsheet")
        kept = not proposed
        if proposed:
            cheatsheet = proposed
        run.history.append(
            {
                "step": "curate",
                "after_case": t - 1,
                "case": case.id,
                "retrieved": [earlier.id for earlier, _ in examples],
                "kept_previous": kept,
                "length_after": len(cheatsheet),
            }
        )
        (first, text), (second, _) = await asyncio.gather(
            *(
                judge(
                    provider,
                    run.ledger,
                    render("dc_judge", cheatsheet=cheatsheet, case=case_block(shown_case)),
                    purpose=purpose,
                    temperature=temperature,
                    images=[case.image],
                )
                for shown_case, purpose in ((case, METHOD), (case.swapped(), PROBE))
            )
        )
        run.results[case.id] = CaseResult(
            case.id, case.label, first, flip(second), path="dynamic-cheatsheet"
        )
        judged.append((case, text))
        run.meta_prompt = cheatsheet
        await report(t / len(cases), f"Dynamic Cheatsheet case {t}/{len(cases)} ({case.id})")
    return run


TEXTGRAD_EPOCHS = 3  # appendix B: the official TextGrad examples' defaults
TEXTGRAD_BATCH = 3


def split_labelled(
    cases: list[PairCase], train: int, validation: int, seed: int
) -> tuple[list[PairCase], list[PairCase], list[PairCase]]:
    """Draw ``train`` and ``validation`` labelled cases with the seed; the rest are the test set.

    >>> cases = [PairCase(str(i), "q", "a", "b", "A") for i in range(6)]
    >>> [len(part) for part in split_labelled(cases, 2, 1, seed=0)]
    [2, 1, 3]
    """
    if train < 1 or validation < 1 or train + validation >= len(cases):
        raise ValueError(
            f"TextGrad needs 1+ training and 1+ validation cases and a test case left, "
            f"not {train} + {validation} of {len(cases)}"
        )
    drawn = random.Random(seed).sample(range(len(cases)), train + validation)
    chosen = set(drawn)
    rest = [case for i, case in enumerate(cases) if i not in chosen]
    return (
        [cases[i] for i in drawn[:train]],
        [cases[i] for i in drawn[train:]],
        rest,
    )


async def run_textgrad(
    cases: list[PairCase],
    provider: Provider,
    *,
    run: RunResult | None = None,
    report: Report = no_report,
    concurrency: int = 8,
    train: list[PairCase],
    validation: list[PairCase],
    epochs: int = TEXTGRAD_EPOCHS,
    batch_size: int = TEXTGRAD_BATCH,
    temperature: float = 0.0,
) -> RunResult:
    """TextGrad* (§4.1, appendix B): optimise the judge's instructions on labelled cases, then
    judge every test case with the best of them, fixed.

    Each training step judges a batch of ``batch_size`` training cases, asks for a critique of the
    instructions against each gold label (the textual gradient), and asks for instructions
    rewritten from the critiques (the update); the new instructions are scored on the validation
    cases and kept as best when they score higher (ties keep the earlier). ``epochs`` passes over
    the training cases. The training and validation calls count in the method's cost, as the
    paper counts them; the test cases are judged in both orders like every baseline. This is the
    loop of TextGrad's prompt-optimisation examples written for a pairwise judge, not the textgrad
    package itself.
    """
    run = run or RunResult("textgrad", [case.id for case in cases])
    ledger = run.ledger

    async def verdict(instructions: str, case: PairCase, purpose: str) -> tuple[str | None, str]:
        prompt = render("textgrad_judge", instructions=instructions, case=case_block(case))
        return await judge(
            provider, ledger, prompt, purpose=purpose, temperature=temperature, images=[case.image]
        )

    async def accuracy(instructions: str) -> float:
        found = await asyncio.gather(*(verdict(instructions, c, METHOD) for c in validation))
        return sum(v == c.label for (v, _), c in zip(found, validation, strict=True)) / len(
            validation
        )

    async def critique(instructions: str, case: PairCase) -> str:
        _, judgment = await verdict(instructions, case, METHOD)
        return await ask(
            provider,
            ledger,
            "critique",
            render(
                "textgrad_critique",
                instructions=instructions,
                case=case_block(case),
                judgment=judgment,
                label=f"Response {case.label} is better",
            ),
            temperature=temperature,
            images=[case.image],
        )

    current = render("textgrad_initial")
    best, best_score = current, await accuracy(current)
    run.history.append({"step": "validate", "epoch": 0, "accuracy": best_score, "best": True})
    steps = epochs * math.ceil(len(train) / batch_size)
    done = 0
    for epoch in range(1, epochs + 1):
        order = train[:]
        random.Random(epoch).shuffle(order)
        for start in range(0, len(order), batch_size):
            batch = order[start : start + batch_size]
            critiques = await asyncio.gather(*(critique(current, c) for c in batch))
            reply = await ask(
                provider,
                ledger,
                "update",
                render(
                    "textgrad_update",
                    instructions=current,
                    critiques="\n\n".join(f"<critique>\n{text}\n</critique>" for text in critiques),
                ),
                temperature=temperature,
            )
            current = tagged(reply, "improved_instructions") or current
            score = await accuracy(current)
            improved = score > best_score
            if improved:
                best, best_score = current, score
            run.history.append(
                {"step": "validate", "epoch": epoch, "accuracy": score, "best": improved}
            )
            done += 1
            await report(0.5 * done / steps, f"TextGrad step {done}/{steps}")
    run.meta_prompt = best

    async def both(case: PairCase, ledger_: Ledger) -> tuple[str | None, str | None]:
        (first, _), (second, _) = await asyncio.gather(
            verdict(best, case, METHOD), verdict(best, case.swapped(), PROBE)
        )
        return first, second

    async def tested(fraction: float, message: str) -> None:
        await report(0.5 + 0.5 * fraction, message)

    return await _each_case("textgrad", cases, both, run, tested, concurrency)


BASELINES: dict[str, Callable[..., Awaitable[RunResult]]] = {
    "vanilla": run_vanilla,
    "cot": run_cot,
    "majority": run_majority,
    "sample-specific": run_sample_specific,
    "dynamic-cheatsheet": run_dynamic_cheatsheet,
    "textgrad": run_textgrad,
}
SEQUENTIAL_BASELINES = {"dynamic-cheatsheet"}
# TextGrad* also needs labelled training and validation cases (`split_labelled`).
LABELLED_BASELINES = {"textgrad"}
