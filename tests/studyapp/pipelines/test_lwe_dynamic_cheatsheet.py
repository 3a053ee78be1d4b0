"""The Dynamic Cheatsheet baseline (DC-RS): retrieval, synthesis before each case, and its job."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from django.core.management import call_command

from studyapp.pipelines.lwe.baselines import most_similar, run_dynamic_cheatsheet, similarity
from studyapp.pipelines.lwe.data import PairCase
from studyapp.pipelines.models import Job
from tests.fakes.llm_server import FakeLLMServer
from tests.studyapp.pipelines.synthetic import CASE_ID, SyntheticJudge, make_cases, provider_for


@pytest.fixture
def judge():
    return SyntheticJudge()


@pytest.fixture
def server(judge, llm_server):
    llm_server.responder = judge
    return llm_server


def test_retrieval_picks_the_most_similar_judged_cases():
    pool = [
        (PairCase("c1", "What is the capital of France?", "Paris", "Lyon", "A"), "[[A]]"),
        (PairCase("c2", "How many legs has a spider?", "8", "6", "A"), "[[A]]"),
        (PairCase("c3", "What is the capital of Spain?", "Madrid", "Seville", "A"), "[[A]]"),
    ]
    new = PairCase("c4", "What is the capital of Italy?", "Rome", "Milan", "A")
    assert [case.id for case, _ in most_similar(new, pool, 2)] == ["c1", "c3"]
    assert most_similar(new, [], 3) == []
    assert similarity(Counter(), Counter({"a": 1})) == 0.0


async def test_the_cheatsheet_is_rewritten_before_every_case_from_earlier_judgments(judge, server):
    cases = make_cases("ABBA")
    run = await run_dynamic_cheatsheet(cases, provider_for(server), retrieved=2, word_cap=1500)

    curates = judge.prompts("curate")
    assert len(curates) == 4
    assert "(none yet)" in curates[0] and "(empty: no cases judged yet)" in curates[0]
    # The second update sees the first case and its verdict, and the first cheatsheet.
    assert "Earlier case 1" in curates[1] and "case-1" in curates[1]
    assert "Cheatsheet version 1" in curates[1]
    # At most two earlier cases are shown, never the one about to be judged.
    for index, prompt in enumerate(curates):
        earlier = prompt[prompt.index("Earlier cases") : prompt.index("The next case")]
        assert earlier.count("## Earlier case") == min(index, 2)
        assert f"case-{index + 1}" not in earlier
    assert "under 1500 words" in curates[0]
    # Each case is judged, in both orders, with the cheatsheet written just before it.
    for prompt in judge.prompts("judge"):
        number = int(CASE_ID.search(prompt[prompt.rindex("# Case to judge") :]).group(1))
        assert f"Cheatsheet version {number}:" in prompt
    assert [e["retrieved"] for e in run.history][:2] == [[], ["case-1"]]
    assert run.meta_prompt.startswith("Cheatsheet version 4")
    assert all(result.pair_correct for result in run.results.values())
    assert run.ledger.calls == {"curate": 4, "judge": 8}


async def test_an_empty_curator_reply_keeps_the_cheatsheet(judge, server):
    server.responder = lambda body: (
        "no tags" if "# Updating the cheatsheet" in body["messages"][0]["content"] else "[[A]]"
    )
    run = await run_dynamic_cheatsheet(make_cases("AA"), provider_for(server))
    assert [e["kept_previous"] for e in run.history] == [True, True]
    assert run.meta_prompt == "(empty: no cases judged yet)"


@pytest.mark.django_db
def test_the_dynamic_cheatsheet_job_runs_over_random_orders(configured, tmp_path):
    configured.responder = SyntheticJudge(biased={2})
    path = tmp_path / "pairs.jsonl"
    path.write_text("\n".join(json.dumps(c.to_json()) for c in make_cases("ABBA")) + "\n")
    call_command(
        "run_job", "dynamic-cheatsheet",
        "--param", "model=openai-compatible:synthetic-judge",
        "--param", f"dataset={path}",
        "--param", "orders=2",
        "--param", "dc_orders=2",  # the paper runs DC on LWE's run0 only (the default, 1)
        "--param", "word_cap=800",
        "--param", "cache=false",
        "--wait",
    )  # fmt: skip
    job = Job.objects.get()
    assert job.status == Job.Status.SUCCEEDED and job.progress == 1.0
    assert job.result["method"] == "dynamic-cheatsheet" and job.result["orders"] == 2
    assert job.result["summary"]["consistency"] == {"mean": 0.75, "std": 0.0}
    # A vanilla pass prices the method; DC costs more than vanilla.
    assert job.result["summary"]["relative_cost"]["mean"] > 1.0
    assert "meta_prompt_order1.txt" in job.artifacts
    curates = [r for r in configured.requests if "# Updating the cheatsheet" in json.dumps(r.body)]
    assert len(curates) == 8 and all("under 800 words" in json.dumps(r.body) for r in curates)


async def test_dynamic_cheatsheet_runs_on_lwes_first_order_by_default(tmp_path):
    """Appendix A of the LWE paper: DC was run on the same order as LWE's run0, once."""
    from studyapp.pipelines.lwe.evaluate import evaluate, shuffled_orders

    cases = make_cases("ABBAAB")
    with FakeLLMServer(SyntheticJudge(biased=set())) as server:
        report = await evaluate(
            "dynamic-cheatsheet", cases, provider_for(server), orders=3, seed=5, word_cap=800
        )
    assert report["orders"] == 1
    run0 = [case.id for case in shuffled_orders(cases, 3, 5)[0]]
    assert report["runs"][0]["order"] == run0


async def test_textgrad_draws_its_labelled_cases_from_the_pool_outside_the_test_set():
    """Appendix B: on Multimodal RewardBench TextGrad*'s 20 + 20 come from the 3,711 cases
    outside the 1,000 tested, and all 1,000 are scored."""
    from studyapp.pipelines.lwe.evaluate import evaluate

    cases = make_cases("ABBAABBAAB")  # cases 1-4 tested, 5-10 the pool outside them
    tested, pool = cases[:4], cases[4:]
    with FakeLLMServer(SyntheticJudge(biased=set())) as server:
        report = await evaluate(
            "textgrad", tested, provider_for(server), textgrad_train=2, textgrad_validation=2,
            labelled_pool=pool,
        )  # fmt: skip
    held = set(report["labelled_cases"]["train"]) | set(report["labelled_cases"]["validation"])
    assert held <= {case.id for case in pool} and len(held) == 4
    assert {r["id"] for r in report["runs"][0]["results"]} == {case.id for case in tested}
