"""LWE's Accuracy on one seeded random ordering of each case's two responses (§4.3), the file's
order as a named option, the refinement length guard as an option, and figure 4's subset size
from the data; against the loopback server."""

from __future__ import annotations

import csv
import json

import pytest

from studyapp.pipelines.lwe.algorithm import LweOptions, run_lwe
from studyapp.pipelines.lwe.data import is_swapped, orient
from studyapp.pipelines.lwe.evaluate import evaluate
from studyapp.pipelines.lwe.subsets import main as subsets
from studyapp.pipelines.lwe.table1 import main as table1
from tests.fakes.llm_server import FakeLLMServer
from tests.studyapp.pipelines.synthetic import SyntheticJudge, make_cases, provider_for
from tests.studyapp.pipelines.test_lwe_table1 import benchmark_file, env  # noqa: F401 (fixture)


def test_the_random_ordering_is_seeded_per_case_and_kept_across_subsets():
    cases = make_cases("A" * 200)
    shown, record = orient(cases, "random", seed=3)
    assert record["order"] == "random" and record["seed"] == 3
    assert 70 < len(record["swapped"]) < 130  # a fair coin per case
    assert record["labels"] == {"A": 200 - len(record["swapped"]), "B": len(record["swapped"])}
    for case, seen in zip(cases, shown, strict=True):
        flipped = case.id in record["swapped"]
        assert flipped == is_swapped(case.id, 3)
        assert seen.id == case.id and seen.label == ("B" if flipped else "A")
        assert (seen.response_a == case.response_b) == flipped
    # The same case gets the same ordering in a subset, in another case order, and another seed
    # draws another ordering.
    subset, _ = orient(list(reversed(cases[50:80])), "random", seed=3)
    assert {c.id: c.label for c in subset} == {c.id: c.label for c in shown[50:80]}
    assert orient(cases, "random", seed=4)[1]["swapped"] != record["swapped"]
    kept, plain = orient(cases, "file", seed=3)
    assert kept == cases and plain == {"order": "file", "seed": None, "swapped": [],
                                       "labels": {"A": 200, "B": 0}}  # fmt: skip
    with pytest.raises(ValueError, match="response order must be one of"):
        orient(cases, "sorted")


async def test_accuracy_reads_the_random_ordering_not_the_files():
    # A judge that always answers "A", on a file whose better response always comes first:
    # read in file order it scores 1.0; on a random ordering, the share of cases shown unswapped.
    cases = make_cases("A" * 40)
    judge = SyntheticJudge(biased=set(range(1, 41)))
    with FakeLLMServer(judge) as server:
        plain = await evaluate("vanilla", cases, provider_for(server))
        shuffled = await evaluate(
            "vanilla", cases, provider_for(server), response_order="random", response_seed=9
        )
    assert plain["runs"][0]["figures"]["accuracy"] == 1.0
    assert plain["response_order"]["order"] == "file"
    order = shuffled["response_order"]
    assert order["order"] == "random" and order["seed"] == 9
    assert order["swapped"] == [c.id for c in cases if is_swapped(c.id, 9)]
    expected = 1 - len(order["swapped"]) / 40
    assert shuffled["runs"][0]["figures"]["accuracy"] == pytest.approx(expected)
    assert 0.2 < expected < 0.8
    # Consistency and pair accuracy do not depend on the ordering.
    for figure in ("consistency", "pair_accuracy"):
        assert shuffled["runs"][0]["figures"][figure] == plain["runs"][0]["figures"][figure] == 0.0
    labels = {r["id"]: r["label"] for r in shuffled["runs"][0]["results"]}
    assert {i for i, label in labels.items() if label == "B"} == set(order["swapped"])


@pytest.mark.parametrize(("ratio", "kept"), [(0.0, False), (0.25, True)])
async def test_a_short_refinement_is_taken_unless_the_guard_is_asked_for(llm_server, ratio, kept):
    judge = SyntheticJudge()
    short = "Compare both answers against the image; prefer the one without errors."
    judge.refine = lambda n: f"<meta_prompt>{short}</meta_prompt>"
    llm_server.responder = judge
    options = LweOptions(batch_size=2, min_keep_ratio=ratio)
    run = await run_lwe(make_cases("AB"), provider_for(llm_server), options=options)
    event = run.history[0]
    assert event["proposed_length"] < 0.25 * event["length_before"]
    assert event["kept_previous"] is kept
    assert (run.meta_prompt == short) is not kept
    if kept:
        assert event["reason"] == "shorter than 0.25 of the current one"
    with pytest.raises(ValueError, match="min_keep_ratio"):
        LweOptions(min_keep_ratio=1.5)


def read_rows(path):
    with path.open() as handle:
        return list(csv.DictReader(handle))


def test_table1_records_the_ordering_and_refuses_to_mix_orderings(tmp_path, env, capsys):  # noqa: F811
    vl = benchmark_file(tmp_path, "vl", "AAAAAAAA")
    out = tmp_path / "t1"
    argv = ["--model", "openai-compatible:judge", "--benchmark", f"VL={vl}", "--out", str(out),
            "--orders", "1", "--quiet", "--methods", "vanilla", "--response-seed", "5"]  # fmt: skip
    assert table1([*argv, "--dry-run"]) == 0
    plan = capsys.readouterr().out
    assert "response order random (seed 5)" in plan
    assert "min keep ratio 0 (off, as Algorithm 1)" in plan
    swapped = [f"case-{n}" for n in range(1, 9) if is_swapped(f"case-{n}", 5)]
    assert f"VL: 8 cases, {len(swapped)} shown swapped; labels A {8 - len(swapped)}" in plan
    assert env.requests == [] and not out.exists()

    assert table1(argv) == 0
    saved = json.loads((out / "runs" / "VL" / "vanilla.json").read_text())
    assert saved["response_order"]["seed"] == 5 and saved["response_order"]["swapped"] == swapped
    assert "random ordering of each case's two responses (seed 5" in (out / "table1.md").read_text()
    capsys.readouterr()
    calls = len(env.requests)
    assert table1([*argv[:-2], "--response-order", "file"]) == 2
    assert "judged with response order random (seed 5), not file" in capsys.readouterr().err
    assert len(env.requests) == calls


def test_figure4_takes_its_size_from_the_inconsistent_cases(tmp_path, env, capsys):  # noqa: F811
    vl = benchmark_file(tmp_path, "vl", "ABBAABBA")  # the judge is biased on cases 2 and 5
    first = tmp_path / "t1"
    argv = ["--model", "openai-compatible:judge", "--benchmark", f"VL={vl}", "--out", str(first),
            "--orders", "1", "--quiet", "--methods", "vanilla", "sample-specific",
            "selective-lwe"]  # fmt: skip
    assert table1(argv) == 0
    out = tmp_path / "subsets"
    common = ["--model", "openai-compatible:judge", "--table1", str(first), "--benchmark",
              f"VL={vl}", "--out", str(out), "--targets", "figure4", "--ratios", "0", "1"]  # fmt: skip
    assert subsets([*common, "--dry-run"]) == 0
    plan = capsys.readouterr().out
    assert "VL: response order random (seed 0), from Table 1; figure 4 subsets of 2 cases" in plan
    assert "lwe-ratio1-n2" in plan and "lwe-ratio0-n2" in plan
    assert subsets(common) == 0
    figure4 = read_rows(out / "figure4.csv")
    assert {(r["ratio"], r["cases"]) for r in figure4} == {("0.0", "2"), ("1.0", "2")}
    ran = json.loads((out / "runs" / "VL" / "lwe-ratio1-n2.json").read_text())
    assert ran["response_order"]["order"] == "random"  # Table 1's ordering

    # A size the pools cannot fill at ratio 1 is reported, not silently skipped.
    out2 = tmp_path / "bigger"
    argv = [*common[:7], str(out2), *common[8:], "--subset-size", "VL=3"]
    assert subsets([*argv, "--dry-run"]) == 0
    assert (
        "ratio 1: not run: 3 inconsistent and 0 consistent cases wanted" in capsys.readouterr().out
    )
    assert subsets(argv) == 0
    assert "figure4 ratio 1: not run" in capsys.readouterr().err
    rows = read_rows(out2 / "figure4.csv")
    assert any(r["ratio"] == "1.0" and r["cases"] == "0" and "not run" in r["note"] for r in rows)
