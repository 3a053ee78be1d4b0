"""LWE and Selective LWE control flow, driven through the OpenAI SDK against a loopback server."""

from __future__ import annotations

import re

import pytest

from studyapp.pipelines.lwe.algorithm import LweOptions, run_lwe, run_selective_lwe
from tests.studyapp.pipelines.synthetic import CASE_ID, SyntheticJudge, make_cases, provider_for


@pytest.fixture
def judge():
    return SyntheticJudge()


@pytest.fixture
def server(judge, llm_server):
    llm_server.responder = judge
    return llm_server


def batch_cases(refine_prompt: str) -> list[str]:
    """The case numbers a refinement request carried, in order (one per batch item)."""
    items = refine_prompt.split("## Batch case ")[1:]
    return [f"case-{CASE_ID.search(item).group(1)}" for item in items]


async def test_it_refines_every_b_cases_and_at_the_end(judge, server):
    cases = make_cases("ABABABABAB")
    run = await run_lwe(cases, provider_for(server), options=LweOptions(batch_size=4))

    refines = judge.prompts("refine")
    assert [batch_cases(p) for p in refines] == [
        ["case-1", "case-2", "case-3", "case-4"],
        ["case-5", "case-6", "case-7", "case-8"],
        ["case-9", "case-10"],
    ]
    assert [event["after_case"] for event in run.history] == [4, 8, 10]
    # Each evaluation prompt is written from the meta-prompt in force at that point.
    builds = judge.prompts("build")
    versions = [re.search(r"Meta-prompt version (\d+)", p) for p in builds]
    assert [v.group(1) if v else None for v in versions] == [None] * 4 + ["1"] * 4 + ["2"] * 2
    assert run.meta_prompt.startswith("Meta-prompt version 3")
    assert judge.counts == {"build": 10, "judge": 20, "feedback": 10, "refine": 3}


async def test_it_refines_only_on_inconsistent_cases(judge, server):
    judge.biased = {2, 5, 7, 11}  # "A" in both orders: these, and only these, are inconsistent
    judge.wrong = {3}  # consistently wrong: consistent, so no update either
    cases = make_cases("ABABBAABABBA")
    run = await run_selective_lwe(cases, provider_for(server), options=LweOptions(batch_size=3))

    assert run.history[0] == {
        "step": "select",
        "inconsistent": ["case-2", "case-5", "case-7", "case-11"],
    }
    refines = judge.prompts("refine")
    assert [batch_cases(p) for p in refines] == [["case-2", "case-5", "case-7"], ["case-11"]]
    built_for = [
        CASE_ID.search(p[p.index("# Case to judge") :]).group(0) for p in judge.prompts("build")
    ]
    assert built_for == ["case-2", "case-5", "case-7", "case-11"]
    assert len(judge.prompts("feedback")) == 4
    paths = {result.id: result.path for result in run.results.values()}
    assert {case_id for case_id, path in paths.items() if path == "lwe"} == {
        "case-2",
        "case-5",
        "case-7",
        "case-11",
    }
    # 24 order-swap verdicts plus two per LWE case.
    assert judge.counts["judge"] == 24 + 8


async def test_it_summarises_a_meta_prompt_past_the_threshold(judge, server):
    lengths = {1: 10_500, 2: 9_000}
    judge.refine = lambda n: "<meta_prompt>" + "x" * (lengths[n] - 1) + "y</meta_prompt>"
    run = await run_lwe(make_cases("AABBAABB"), provider_for(server))

    summaries = judge.prompts("summarise")
    assert len(summaries) == 1
    assert "x" * 10_499 + "y" in summaries[0]
    assert "grown to 10500 characters" in summaries[0]
    steps = [(e["step"], e["after_case"], e["length_after"]) for e in run.history]
    summary_length = len(("Summary 1. " + "Be brief and exact. " * 20).strip())
    assert steps == [("refine", 4, 10_500), ("summarise", 4, summary_length), ("refine", 8, 9_000)]
    # The case after the summary is built from the summary, not the long text.
    assert "Summary 1." in judge.prompts("build")[4]


@pytest.mark.parametrize(
    "reply", ["", "<meta_prompt></meta_prompt>", "<meta_prompt>ok</meta_prompt>", "no tags at all"]
)
async def test_it_keeps_the_previous_meta_prompt_when_a_refinement_fails(judge, server, reply):
    judge.refine = lambda n: reply
    run = await run_lwe(make_cases("ABAB"), provider_for(server))

    assert run.history[0]["kept_previous"] is True
    assert run.meta_prompt.startswith("You write evaluation instructions for a judge")
