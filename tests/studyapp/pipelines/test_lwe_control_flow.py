"""LWE and Selective LWE control flow, driven through the OpenAI SDK against a loopback server."""

from __future__ import annotations

import re

import pytest

from studyapp.pipelines.lwe.algorithm import LweOptions, run_lwe, run_selective_lwe
from tests.studyapp.pipelines.synthetic import (
    CASE_ID,
    SyntheticJudge,
    judged_case,
    make_cases,
    provider_for,
)


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
    # Each evaluation prompt is written from the meta-prompt in force at that point, one for the
    # pair as given and one for the swapped pair.
    builds = judge.prompts("build")
    versions = [re.search(r"Meta-prompt version (\d+)", p) for p in builds]
    assert [v.group(1) if v else None for v in versions] == [None] * 8 + ["1"] * 8 + ["2"] * 4
    assert run.meta_prompt.startswith("Meta-prompt version 3")
    assert judge.counts == {"build": 20, "judge": 20, "feedback": 10, "refine": 3}


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
    # As published, an inconsistent case keeps its vanilla swapped verdict: one LWE prompt each.
    assert sorted(built_for) == sorted(["case-2", "case-5", "case-7", "case-11"])
    assert len(judge.prompts("feedback")) == 4
    paths = {result.id: result.path for result in run.results.values()}
    assert {case_id for case_id, path in paths.items() if path == "lwe"} == {
        "case-2",
        "case-5",
        "case-7",
        "case-11",
    }
    # 24 order-swap verdicts plus one per LWE case (the swapped verdict stays vanilla's).
    assert judge.counts["judge"] == 24 + 4


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
    assert all("Summary 1." in p for p in judge.prompts("build")[8:10])


@pytest.mark.parametrize(
    "reply", ["", "<meta_prompt></meta_prompt>", "<meta_prompt>ok</meta_prompt>", "no tags at all"]
)
async def test_it_keeps_the_previous_meta_prompt_when_a_refinement_fails(judge, server, reply):
    judge.refine = lambda n: reply
    run = await run_lwe(make_cases("ABAB"), provider_for(server))

    assert run.history[0]["kept_previous"] is True
    assert run.meta_prompt.startswith("You write evaluation instructions for a judge")


async def test_the_swap_probe_writes_its_own_prompt_for_the_swapped_pair(judge, server):
    cases = make_cases("AB")
    run = await run_lwe(cases, provider_for(server), options=LweOptions(batch_size=4))

    shown = []
    for prompt in judge.prompts("build"):
        block = prompt[prompt.index("# Case to judge") :]
        first = block[block.index("[Response A]") : block.index("[Response B]")]
        shown.append((CASE_ID.search(block).group(0), "GOOD" in first))
    # Case 1 (good answer first) and case 2 (good answer second), each in both orders.
    assert sorted(shown) == [
        ("case-1", False),
        ("case-1", True),
        ("case-2", False),
        ("case-2", True),
    ]
    # Each judge call carries the instructions written for the order it shows.
    for prompt in judge.prompts("judge"):
        number, good = judged_case(prompt)
        assert f"Instructions for case-{number}." in prompt
    assert all(result.consistent for result in run.results.values())
    # The swapped builds are probes: they are not the method's cost.
    assert run.ledger.calls["build"] == 4
    assert run.ledger.probe_chars > 0


@pytest.mark.parametrize(
    ("swap", "consistent", "judge_calls"),
    [("lwe", True, 8 + 2), ("vanilla", False, 8 + 1), (None, False, 8 + 1)],
)
async def test_selective_lwe_takes_the_swapped_verdict_from_the_chosen_pass(
    judge, server, swap, consistent, judge_calls
):
    """Selective LWE as published (the default, None here) keeps the vanilla swapped verdict of
    an inconsistent case, as the authors' code does; the project's variant "lwe" re-judges the
    swapped pair with LWE. The synthetic judge is biased on case 1 only under the vanilla prompt,
    so the two give different consistency and judge calls."""
    judge.biased = {1}
    judge.biased_only_vanilla = True
    cases = make_cases("ABAB")
    options = LweOptions() if swap is None else LweOptions(inconsistent_swap=swap)
    run = await run_selective_lwe(cases, provider_for(server), options=options)
    result = run.results["case-1"]
    assert result.path == "lwe"
    assert result.first == "A"
    assert result.consistent is consistent
    assert judge.counts["judge"] == judge_calls


def test_an_unknown_swap_source_is_refused():
    with pytest.raises(ValueError, match="inconsistent_swap"):
        LweOptions(inconsistent_swap="both")
