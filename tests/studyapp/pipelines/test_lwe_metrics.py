"""Figures and cost accounting, against a synthetic judge behind the loopback server."""

from __future__ import annotations

import threading

import pytest

from studyapp.pipelines.lwe.evaluate import evaluate
from studyapp.pipelines.lwe.judging import CaseResult
from studyapp.pipelines.lwe.metrics import cumulative_accuracy, mean_std
from tests.fakes.llm_server import FakeLLMServer
from tests.studyapp.pipelines.synthetic import SyntheticJudge, make_cases, provider_for, sent_chars


class CountingJudge(SyntheticJudge):
    """Also records how many characters went out in each reply, as the wire carried them."""

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.reply_chars = 0
        self.reply_lock = threading.Lock()

    def __call__(self, body):
        reply = super().__call__(body)
        with self.reply_lock:
            self.reply_chars += len(reply)
        return reply


async def test_a_position_biased_judge_scores_as_computed_by_hand():
    # 12 cases. The judge says "A" regardless of content on 4 of them (a third), two of which
    # have the good response in A; it prefers the poor response on 2; it is right on 6.
    labels = "AABBABABABAB"
    judge = SyntheticJudge(biased={1, 3, 5, 6}, wrong={7, 8})  # labels: A, B, A, B -> 2 "A"
    with FakeLLMServer(judge) as server:
        report = await evaluate("vanilla", make_cases(labels), provider_for(server))

    figures = report["runs"][0]["figures"]
    # Biased cases flip with the order: inconsistent, never pair-correct, right once if label A.
    assert figures["consistency"] == pytest.approx(8 / 12)
    assert figures["pair_accuracy"] == pytest.approx(6 / 12)
    assert figures["accuracy"] == pytest.approx((6 + 2) / 12)
    assert figures["relative_cost"] == 1.0
    assert report["summary"]["pair_accuracy"] == {"mean": pytest.approx(0.5), "std": 0.0}


async def test_selective_lwe_repairs_only_what_the_order_swap_flags():
    # This judge stays biased on cases 1 and 3 whatever prompt it gets, so LWE cannot repair
    # them: the figures stay where the order swap put them, and only those two took the LWE path.
    judge = SyntheticJudge(biased={1, 3}, wrong=set())
    with FakeLLMServer(judge) as server:
        report = await evaluate(
            "selective-lwe", make_cases("ABAB"), provider_for(server), orders=2, seed=7
        )
    assert report["orders"] == 2
    for run in report["runs"]:
        assert run["figures"]["consistency"] == pytest.approx(0.5)
        assert {r["id"] for r in run["results"] if r["path"] == "lwe"} == {"case-1", "case-3"}
    assert report["runs"][0]["order"] != report["runs"][1]["order"]


async def test_cost_accounting_matches_the_characters_sent_and_received():
    judge = CountingJudge(biased={2})
    with FakeLLMServer(judge) as server:
        report = await evaluate("selective-lwe", make_cases("ABBA"), provider_for(server), orders=1)
        sent = sum(sent_chars(request.body) for request in server.requests)

    vanilla_chars = report["vanilla_chars"]
    run_cost = report["runs"][0]["cost"]
    reference = report["reference_cost"]["total_chars"]
    assert reference + run_cost["total_chars"] == sent + judge.reply_chars
    assert report["reference_cost"]["method_chars"] == vanilla_chars
    assert run_cost["method_chars"] + run_cost["probe_chars"] == run_cost["total_chars"]
    # Two full vanilla passes plus LWE on one case: more than twice vanilla's single pass.
    assert report["runs"][0]["figures"]["relative_cost"] == pytest.approx(
        run_cost["method_chars"] / vanilla_chars
    )
    assert report["runs"][0]["figures"]["relative_cost"] > 2.0


def test_the_cumulative_accuracy_curve_follows_the_evaluation_order():
    results = [CaseResult(str(i), "A", choice, choice) for i, choice in enumerate("ABAA")]
    assert cumulative_accuracy(results) == [1.0, 0.5, 2 / 3, 0.75]
    assert mean_std([0.5, 0.7, 0.9]) == {"mean": pytest.approx(0.7), "std": pytest.approx(0.2)}
