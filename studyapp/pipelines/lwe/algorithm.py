"""LWE and Selective LWE (algorithms 1 and 2 of the LWE paper).

LWE keeps a meta-prompt that writes a fresh evaluation prompt for every case; after each verdict
the judge reflects on it, and the buffered feedback rewrites the meta-prompt every ``batch_size``
cases and once more at the end. Selective LWE spends that effort only where the plain judge
contradicts itself when the two responses swap places.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from studyapp.pipelines.lwe.data import PairCase
from studyapp.pipelines.lwe.judging import (
    CaseResult,
    Report,
    RunResult,
    case_block,
    flip,
    judge,
    no_report,
    raw_text,
    render,
    tagged,
)
from studyapp.pipelines.lwe.llm import (
    METHOD,
    PROBE,
    Completion,
    Ledger,
    Provider,
    ask,
    ask_completion,
)


@dataclass(frozen=True)
class LweOptions:
    batch_size: int = 4  # b: cases of feedback per meta-prompt refinement
    summary_threshold: int = 10_000  # characters; a longer meta-prompt is condensed
    # Algorithm 1 takes whatever RefineMetaPrompt returns. A reply that holds no meta-prompt (no
    # <meta_prompt> tags, or under MIN_META_PROMPT_CHARS inside them) cannot be used as
    # instructions and keeps the previous one. Optionally (not in the paper; 0 = off, the
    # default), a refinement shorter than this share of the current meta-prompt is also taken for
    # a failed reply (a refusal, a truncated answer) and discarded: the guard of earlier versions
    # was 0.25 (--min-keep-ratio 0.25).
    min_keep_ratio: float = 0.0
    temperature: float = 0.0
    # Selective LWE, swapped verdict of an inconsistent case: "vanilla" (the default, Selective
    # LWE as published: the authors' selective_lwe.py keeps the vanilla pass's swapped verdict and
    # writes no swap response from LWE); "lwe" is the project's variant, which re-judges the
    # swapped pair with LWE's own sample-specific prompt (a reading of algorithm 2's line 13).
    inconsistent_swap: str = "vanilla"
    # Output limits sized to what the call must return (tokens). RefineMetaPrompt returns the
    # whole meta-prompt, so its limit is the current meta-prompt's length (a token for every
    # character: no tokenizer needs more for prose, so the current text always fits) plus
    # ``refine_tokens`` of room to grow, up to REFINE_TOKENS_CEILING; the summary returns at most
    # ``summary_threshold`` characters and gets ``summary_tokens``. Every other call keeps
    # llm.CALL_TOKENS (2,048). The paper gives no limit.
    refine_tokens: int = 4096
    summary_tokens: int = 4096

    def __post_init__(self) -> None:
        if self.inconsistent_swap not in SWAP_SOURCES:
            raise ValueError(f"inconsistent_swap must be one of {SWAP_SOURCES}")
        if not 0.0 <= self.min_keep_ratio < 1.0:
            raise ValueError("min_keep_ratio must be at least 0 and below 1")
        for name in ("refine_tokens", "summary_tokens"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be a positive number of tokens")

    def refine_limit(self, meta_prompt: str) -> int:
        """The output limit of a refinement of ``meta_prompt``: its length plus room to grow."""
        return min(len(meta_prompt) + self.refine_tokens, REFINE_TOKENS_CEILING)


SWAP_SOURCES = ("vanilla", "lwe")
# The shortest reply taken for a meta-prompt: fewer characters hold no instruction set (an "ok",
# a bare refusal); such a reply keeps the previous meta-prompt whatever min_keep_ratio says.
MIN_META_PROMPT_CHARS = 50
# The most output tokens a refinement is given: the paper's judges (gpt-4.1, gemini-2.5-pro,
# claude-sonnet-4.5) write at least this many. A meta-prompt is summarised past 10,000
# characters, so the ceiling binds only when summaries keep failing.
REFINE_TOKENS_CEILING = 32_768


def cut_note(completion: Completion) -> str:
    return f"cut by the output limit (finish reason {completion.finish_reason})"


def initial_meta_prompt() -> str:
    return raw_text("meta_prompt").strip()


async def build_evaluation_prompt(
    provider: Provider,
    ledger: Ledger,
    meta_prompt: str,
    case: PairCase,
    temperature: float,
    purpose: str = METHOD,
) -> str:
    """BuildEvalPrompt(M, x): instructions for this pair, in the order it is shown."""
    reply = await ask(
        provider,
        ledger,
        "build",
        render("build_eval", meta_prompt=meta_prompt, case=case_block(case)),
        temperature=temperature,
        purpose=purpose,
        images=[case.image],
    )
    return tagged(reply, "evaluation_prompt") or reply.strip()


async def judge_with_specific_prompt(
    provider: Provider,
    ledger: Ledger,
    meta_prompt: str,
    case: PairCase,
    temperature: float,
    purpose: str = METHOD,
) -> tuple[str, str | None, str]:
    """Write the pair's own evaluation prompt, then judge with it: (prompt, verdict, reply)."""
    evaluation_prompt = await build_evaluation_prompt(
        provider, ledger, meta_prompt, case, temperature, purpose
    )
    prompt = render("judge_specific", evaluation_prompt=evaluation_prompt, case=case_block(case))
    verdict, text = await judge(
        provider, ledger, prompt, temperature=temperature, purpose=purpose, images=[case.image]
    )
    return evaluation_prompt, verdict, text


class MetaPrompt:
    """The evolving meta-prompt, its feedback buffer and the record of every change to it."""

    def __init__(
        self,
        provider: Provider,
        ledger: Ledger,
        options: LweOptions,
        text: str | None = None,
        history: list[dict[str, Any]] | None = None,
    ) -> None:
        self.provider = provider
        self.ledger = ledger
        self.options = options
        self.text = text or initial_meta_prompt()
        self.buffer: list[dict[str, Any]] = []
        # Shared with the run's record, so a run stopped midway still shows every change so far.
        self.history: list[dict[str, Any]] = history if history is not None else []

    async def _ask(
        self,
        step: str,
        prompt: str,
        purpose: str = METHOD,
        images: list[str | None] = (),
        max_tokens: int | None = None,
    ) -> Completion:
        limit = {"max_tokens": max_tokens} if max_tokens else {}
        return await ask_completion(
            self.provider,
            self.ledger,
            step,
            prompt,
            temperature=self.options.temperature,
            purpose=purpose,
            images=images,
            **limit,
        )

    async def evaluation_prompt(self, case: PairCase, purpose: str = METHOD) -> str:
        """BuildEvalPrompt: sample-specific instructions written from the current meta-prompt.

        The instructions are written for the pair as shown, so the swapped-order probe asks for
        its own (purpose "probe"), as the authors' code does for the swapped pair.
        """
        return await build_evaluation_prompt(
            self.provider, self.ledger, self.text, case, self.options.temperature, purpose
        )

    async def reflect(self, case: PairCase, evaluation_prompt: str, judgment: str) -> str:
        """Feedback: the judge's own critique of how the meta-prompt served this case."""
        completion = await self._ask(
            "feedback",
            render(
                "feedback",
                meta_prompt=self.text,
                evaluation_prompt=evaluation_prompt,
                case=case_block(case),
                judgment=judgment,
            ),
            images=[case.image],
        )
        return completion.text

    def remember(
        self, case: PairCase, evaluation_prompt: str, judgment: str, feedback: str
    ) -> None:
        self.buffer.append(
            {
                "id": case.id,
                "evaluation_prompt": evaluation_prompt,
                "case": case_block(case),
                "judgment": judgment,
                "feedback": feedback,
                "image": case.image,
            }
        )

    async def refine(self, after: int) -> None:
        """RefineMetaPrompt from the buffered batch, guarded; then condense it if it grew too long."""
        batch = "\n\n".join(
            render(
                "batch_item",
                number=number,
                evaluation_prompt=item["evaluation_prompt"],
                case=item["case"],
                judgment=item["judgment"],
                feedback=item["feedback"],
            )
            for number, item in enumerate(self.buffer, start=1)
        )
        # The batch's images go along, in the batch's order, as the authors' code sends them.
        images = [item["image"] for item in self.buffer]
        prompt = render("refine", meta_prompt=self.text, batch=batch)
        limit = self.options.refine_limit(self.text)
        reply = await self._ask("refine", prompt, images=images, max_tokens=limit)
        event: dict[str, Any] = {
            "step": "refine",
            "after_case": after,
            "cases": [item["id"] for item in self.buffer],
            "length_before": len(self.text),
        }
        if reply.cut and limit < REFINE_TOKENS_CEILING:
            # Cut by its limit: asked once more with the most a refinement may have; the cut
            # reply stays counted in the ledger and named here.
            event["cut_first"] = {"max_tokens": limit, "finish_reason": reply.finish_reason}
            limit = REFINE_TOKENS_CEILING
            reply = await self._ask("refine", prompt, images=images, max_tokens=limit)
        proposed = tagged(reply.text, "meta_prompt") or ""
        event["proposed_length"], event["max_tokens"] = len(proposed), limit
        self.buffer = []
        if reply.cut:
            # A reply the limit ended holds at best part of a meta-prompt: recorded as cut (the
            # run's notes count them), never taken for a refusal.
            event["kept_previous"], event["cut"] = True, True
            event["reason"] = cut_note(reply)
        elif len(proposed) < MIN_META_PROMPT_CHARS:
            event["kept_previous"], event["reason"] = True, "no meta-prompt in the reply"
        elif len(proposed) < self.options.min_keep_ratio * len(self.text):
            event["kept_previous"] = True
            event["reason"] = f"shorter than {self.options.min_keep_ratio:g} of the current one"
        else:
            event["kept_previous"] = False
            self.text = proposed
            event["meta_prompt"] = proposed  # the text in force from here (figure 5's diff)
        event["length_after"] = len(self.text)
        self.history.append(event)
        if len(self.text) > self.options.summary_threshold:
            await self.summarise(after)

    async def summarise(self, after: int) -> None:
        """Condense an over-long meta-prompt; an empty or no-shorter reply keeps the long one."""
        reply = await self._ask(
            "summarise",
            render(
                "summarise",
                meta_prompt=self.text,
                length=len(self.text),
                limit=self.options.summary_threshold,
            ),
            max_tokens=self.options.summary_tokens,
        )
        summary = "" if reply.cut else tagged(reply.text, "meta_prompt") or ""
        kept = not summary or len(summary) >= len(self.text)
        event: dict[str, Any] = {
            "step": "summarise",
            "after_case": after,
            "length_before": len(self.text),
            "proposed_length": len(summary),
            "max_tokens": self.options.summary_tokens,
            "kept_previous": kept,
            "length_after": len(self.text) if kept else len(summary),
        }
        if reply.cut:
            event["cut"], event["reason"] = True, cut_note(reply)
        if not kept:
            self.text = summary
            event["meta_prompt"] = summary
        self.history.append(event)


async def lwe_pass(
    cases: list[PairCase],
    meta: MetaPrompt,
    run: RunResult,
    report: Report,
    *,
    progress_from: float = 0.0,
    progress_to: float = 1.0,
    swapped_from: dict[str, CaseResult] | None = None,
) -> None:
    """Algorithm 1 over ``cases`` in order, writing verdicts into ``run`` as they are reached.

    Only the as-given order feeds the feedback (appendix A); the swapped-order verdict is a probe
    for the consistency figures and is not part of the method's cost. The probe writes its own
    evaluation prompt for the swapped pair from the same meta-prompt. With ``swapped_from`` a
    case's swapped verdict is taken from there instead and no probe is made.
    """
    provider, ledger = meta.provider, meta.ledger
    temperature = meta.options.temperature
    for t, case in enumerate(cases, start=1):
        forward = judge_with_specific_prompt(provider, ledger, meta.text, case, temperature)
        if swapped_from is not None and case.id in swapped_from:
            evaluation_prompt, first, text = await forward
            second = swapped_from[case.id].second
        else:
            probe = judge_with_specific_prompt(
                provider, ledger, meta.text, case.swapped(), temperature, PROBE
            )
            (evaluation_prompt, first, text), (_, swapped, _) = await asyncio.gather(forward, probe)
            second = flip(swapped)
        run.results[case.id] = CaseResult(case.id, case.label, first, second, path="lwe")
        feedback = await meta.reflect(case, evaluation_prompt, text)
        meta.remember(case, evaluation_prompt, text, feedback)
        if len(meta.buffer) >= meta.options.batch_size or t == len(cases):
            await meta.refine(after=t)
        run.meta_prompt = meta.text
        done = progress_from + (progress_to - progress_from) * t / len(cases)
        await report(done, f"LWE case {t}/{len(cases)} ({case.id})")


async def run_lwe(
    cases: list[PairCase],
    provider: Provider,
    *,
    options: LweOptions | None = None,
    run: RunResult | None = None,
    report: Report = no_report,
    meta_prompt: str | None = None,
) -> RunResult:
    """Learning While Evaluating over ``cases`` in the given order."""
    run = run or RunResult("lwe", [case.id for case in cases])
    meta = MetaPrompt(provider, run.ledger, options or LweOptions(), meta_prompt, run.history)
    run.meta_prompt = run.initial_meta_prompt = meta.text
    await lwe_pass(cases, meta, run, report)
    return run


async def vanilla_both_orders(
    case: PairCase, provider: Provider, ledger: Ledger, *, purpose_second: str, temperature: float
) -> CaseResult:
    forward = render("vanilla", case=case_block(case))
    swapped = render("vanilla", case=case_block(case.swapped()))
    (first, _), (second, _) = await asyncio.gather(
        judge(provider, ledger, forward, temperature=temperature, images=[case.image]),
        judge(
            provider,
            ledger,
            swapped,
            temperature=temperature,
            purpose=purpose_second,
            images=[case.image],
        ),
    )
    return CaseResult(case.id, case.label, first, flip(second))


async def run_selective_lwe(
    cases: list[PairCase],
    provider: Provider,
    *,
    options: LweOptions | None = None,
    run: RunResult | None = None,
    report: Report = no_report,
    meta_prompt: str | None = None,
    concurrency: int = 8,
) -> RunResult:
    """Algorithm 2: vanilla verdicts in both orders for every case; LWE on the inconsistent ones.

    A consistent case keeps its vanilla verdicts. An inconsistent case's result is LWE's (line 13:
    S' from LWE), its swapped verdict included; ``options.inconsistent_swap = "vanilla"`` keeps the
    vanilla swapped verdict instead, as the authors' code does (docs/pipelines.md). Both vanilla
    passes are part of the method here (they are how it selects), so they count in
    its cost. A case with an unreadable verdict counts as inconsistent: it has no decision to keep.
    """
    options = options or LweOptions()
    run = run or RunResult("selective-lwe", [case.id for case in cases])
    limit = asyncio.Semaphore(concurrency)
    done = 0

    async def screen(case: PairCase) -> None:
        nonlocal done
        async with limit:
            result = await vanilla_both_orders(
                case, provider, run.ledger, purpose_second="method", temperature=options.temperature
            )
        run.results[case.id] = result
        done += 1
        await report(0.5 * done / len(cases), f"order-swap check {done}/{len(cases)}")

    async with asyncio.TaskGroup() as group:
        for case in cases:
            group.create_task(screen(case))

    inconsistent = [case for case in cases if not run.results[case.id].consistent]
    run.history.append({"step": "select", "inconsistent": [case.id for case in inconsistent]})
    meta = MetaPrompt(provider, run.ledger, options, meta_prompt, run.history)
    run.meta_prompt = run.initial_meta_prompt = meta.text
    vanilla = dict(run.results) if options.inconsistent_swap == "vanilla" else None
    if inconsistent:
        await lwe_pass(
            inconsistent,
            meta,
            run,
            report,
            progress_from=0.5,
            progress_to=1.0,
            swapped_from=vanilla,
        )
    await report(1.0, f"{len(inconsistent)} of {len(cases)} cases went through LWE")
    return run
