"""LWE's output limits: a refinement gets room for the whole meta-prompt, so one that grows long is
kept and reaches Appendix A's summary; a reply the limit cuts is recorded as cut and counted.
Driven through the OpenAI SDK against the loopback server, which stops a reply at its limit."""

from __future__ import annotations

import pytest

from studyapp.pipelines.lwe.algorithm import LweOptions, run_lwe
from studyapp.pipelines.lwe.evaluate import evaluate
from studyapp.pipelines.lwe.table1 import main as table1
from tests.fakes.llm_server import CHARS_PER_TOKEN
from tests.studyapp.pipelines.synthetic import SyntheticJudge, make_cases, provider_for
from tests.studyapp.pipelines.test_lwe_table1 import benchmark_file

LESSON = "Check each claim in a response against the question before weighing its style. "


def long_refinement(version: int) -> str:
    """Refinement ``version`` is about 3,500 characters longer than the one before it."""
    return (
        f"<meta_prompt>Meta-prompt version {version}. " + LESSON * 44 * version + "</meta_prompt>"
    )


@pytest.fixture
def judge():
    return SyntheticJudge(refine=long_refinement)


@pytest.fixture
def server(judge, llm_server):
    llm_server.responder = judge
    return llm_server


def refine_limits(server) -> list[int]:
    return [
        r.body["max_tokens"]
        for r in server.requests
        if "# Revising the meta-prompt" in str(r.body["messages"])
    ]


async def test_a_long_refinement_is_kept_and_the_meta_prompt_is_summarised_past_10000(
    judge, server
):
    run = await run_lwe(make_cases("ABBAABBAABBA"), provider_for(server), options=LweOptions())

    refines = [e for e in run.history if e["step"] == "refine"]
    assert [e["kept_previous"] for e in refines] == [False, False, False]
    # The third refinement is longer than the 2,048-token limit every call had before.
    assert refines[2]["proposed_length"] > 2048 * CHARS_PER_TOKEN
    assert refines[2]["length_after"] > 10_000
    # Each refinement's limit covers the meta-prompt it rewrites plus room to grow.
    limits = refine_limits(server)
    assert limits[2] == refines[2]["length_before"] + 4096 and limits[2] > limits[0]
    summaries = [e for e in run.history if e["step"] == "summarise"]
    assert len(summaries) == 1 and summaries[0]["after_case"] == 12
    assert summaries[0]["kept_previous"] is False
    assert run.meta_prompt.startswith("Summary 1.")
    assert not run.ledger.cut


def far_longer(version: int) -> str:
    """A refinement some 14,000 characters long: more than the initial meta-prompt's length
    plus 100 tokens of room (about 4,000 characters at the fake's 4 a token)."""
    return long_refinement(4 * version)


async def test_a_refinement_cut_by_its_limit_is_counted_and_asked_again_with_more_room(
    judge, server
):
    judge.refine = far_longer
    run = await run_lwe(
        make_cases("ABBA"), provider_for(server), options=LweOptions(refine_tokens=100)
    )

    event, summary = run.history  # the retry's long meta-prompt is then summarised
    assert event["cut_first"] == {"max_tokens": len(run.initial_meta_prompt) + 100,
                                  "finish_reason": "length"}  # fmt: skip
    assert event["kept_previous"] is False and event["max_tokens"] == 32_768
    assert event["proposed_length"] > 20_000  # the retry, whole, kept
    assert summary["step"] == "summarise" and summary["kept_previous"] is False
    assert refine_limits(server) == [len(run.initial_meta_prompt) + 100, 32_768]
    assert run.ledger.cut == {"refine": 1} and run.ledger.cut_reasons == {"length": 1}


async def test_a_refinement_cut_even_at_the_ceiling_keeps_the_previous_one_and_says_why(
    judge, server
):
    judge.refine = lambda n: "<meta_prompt>" + LESSON * 1700 + "</meta_prompt>"  # 138,000 chars
    run = await run_lwe(make_cases("ABBA"), provider_for(server), options=LweOptions())

    (event,) = run.history
    assert event["kept_previous"] and event["cut"]
    assert event["reason"] == "cut by the output limit (finish reason length)"
    assert run.ledger.cut == {"refine": 2} and run.meta_prompt == run.initial_meta_prompt


async def test_the_runs_record_counts_the_replies_the_limit_cut(judge, server):
    judge.refine = far_longer
    result = await evaluate(
        "lwe",
        make_cases("ABBA"),
        provider_for(server),
        orders=2,
        options=LweOptions(refine_tokens=100),
        vanilla_chars=1,
    )
    assert result["cut_replies"] == {"refine": 2}
    assert all(run["cost"]["cut"] == {"refine": 1} for run in result["runs"])


def test_it_refuses_an_output_limit_below_one_token():
    with pytest.raises(ValueError, match="refine_tokens"):
        LweOptions(refine_tokens=0)


def test_table1s_notes_name_the_replies_the_limit_cut(tmp_path, judge, server, monkeypatch):
    judge.refine = far_longer
    monkeypatch.setenv("OPENAI_BASE_URL", server.openai_base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    vl = benchmark_file(tmp_path, "vl", "ABBA")
    out = tmp_path / "out"
    argv = ["--model", "openai-compatible:judge", "--benchmark", f"VL={vl}", "--out", str(out),
            "--methods", "vanilla", "lwe", "--orders", "1", "--refine-tokens", "1",
            "--quiet"]  # fmt: skip
    assert table1(argv) == 0
    notes = (out / "table1.md").read_text()
    assert "VL lwe: 1 replies were cut by the output limit (refine 1)" in notes
