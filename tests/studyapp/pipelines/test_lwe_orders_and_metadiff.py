"""Appendix H's per-order tables (Tables 5-12), Figure 6's bars and Figure 5's meta-prompt diff,
from Table 1 runs made here against the loopback server (tiny benchmarks, a synthetic judge)."""

from __future__ import annotations

import csv
import json
from statistics import fmean, stdev

import pytest

from studyapp.pipelines.lwe.metadiff import main as metadiff
from studyapp.pipelines.lwe.metadiff import word_diff
from studyapp.pipelines.lwe.orders import main as orders
from studyapp.pipelines.lwe.orders import paper_table
from studyapp.pipelines.lwe.table1 import main as table1
from tests.studyapp.pipelines.test_lwe_table1 import benchmark_file, env  # noqa: F401 (fixture)

FIGURES = ("accuracy", "consistency", "pair_accuracy", "relative_cost")


def rows(path):
    with path.open() as handle:
        return list(csv.DictReader(handle))


@pytest.fixture
def table1_runs(tmp_path, env):  # noqa: F811
    vl = benchmark_file(tmp_path, "vl", "ABBAAB")  # the judge is biased on cases 2 and 5
    mm = benchmark_file(tmp_path, "mm", "BAABBA")
    out = tmp_path / "t1"
    argv = ["--model", "openai-compatible:judge", "--benchmark", f"VL={vl}", "--benchmark",
            f"MM={mm}", "--out", str(out), "--orders", "3", "--batch-size", "2", "--quiet",
            "--methods", "vanilla", "lwe", "selective-lwe"]  # fmt: skip
    assert table1(argv) == 0
    return out


def test_the_per_order_tables_and_figure6_from_table1s_runs(tmp_path, table1_runs, env):  # noqa: F811
    calls = len(env.requests)
    out = tmp_path / "orders"
    assert orders(["--runs", f"openai:gpt-4.1={table1_runs}", "--out", str(out)]) == 0
    assert len(env.requests) == calls  # laid out from the saved runs: no call
    table = rows(out / "orders.csv")
    blocks = {(r["table"], r["benchmark"], r["method"]) for r in table}
    assert blocks == {("5", "VL", "lwe"), ("6", "MM", "lwe"), ("7", "VL", "selective-lwe"),
                      ("8", "MM", "selective-lwe")}  # fmt: skip
    for bench, method in (("VL", "lwe"), ("MM", "selective-lwe")):
        saved = json.loads((table1_runs / "runs" / bench / f"{method}.json").read_text())
        mine = [r for r in table if r["benchmark"] == bench and r["method"] == method]
        assert [r["run"] for r in mine] == ["0", "1", "2", "mean", "std"]
        assert [int(r["order_seed"]) for r in mine[:3]] == [0, 1, 2]
        for figure in FIGURES:
            values = [run["figures"][figure] for run in saved["runs"]]
            assert [float(r[figure]) for r in mine[:3]] == pytest.approx(values)
            assert float(mine[3][figure]) == pytest.approx(fmean(values))
            assert float(mine[4][figure]) == pytest.approx(stdev(values))
        assert {r["response_order"] for r in mine} == {"random"}
    text = (out / "orders.md").read_text()
    assert "### Table 5: LWE under different orderings of VL with openai:gpt-4.1" in text
    assert "### Table 8: Selective LWE under different orderings of MM" in text
    assert "| mean ± std |" in text and "seed 0" in text
    bars = rows(out / "figure6.csv")
    assert {(r["benchmark"], r["method"], r["metric"]) for r in bars} == {
        (b, m, f) for b in ("VL", "MM") for m in ("lwe", "selective-lwe") for f in FIGURES[:3]
    }
    assert (out / "figure6.png").stat().st_size > 0 and (out / "figure6.svg").exists()

    # Unnamed, the judge is the model the runs recorded; a folder without runs is refused.
    out2 = tmp_path / "orders2"
    assert orders(["--runs", str(table1_runs), "--out", str(out2), "--methods", "lwe"]) == 0
    assert {r["model"] for r in rows(out2 / "orders.csv")} == {"openai-compatible:judge"}
    assert {r["table"] for r in rows(out2 / "orders.csv")} == {""}  # not one of the paper's judges
    assert orders(["--runs", str(tmp_path), "--out", str(out2)]) == 2


def test_paper_numbering_and_hand_made_orders(tmp_path):
    assert paper_table("openai:gpt-4.1-2025-04-14", "VL", "lwe") == 5
    assert paper_table("openai-compatible:gemini-2.5-pro", "mm", "selective-lwe") == 10
    assert paper_table("anthropic:claude-sonnet-4.5", "VL", "selective-lwe") == 11
    assert paper_table("anthropic:claude-sonnet-4.5", "VL", "lwe") is None
    folder = tmp_path / "claude" / "runs" / "MM"
    folder.mkdir(parents=True)
    values = (0.81, 0.84, 0.79)
    runs = [{"figures": {"accuracy": v, "consistency": 0.9, "pair_accuracy": v - 0.1,
                         "relative_cost": 15.0 + i}} for i, v in enumerate(values)]  # fmt: skip
    result = {"model": "anthropic:claude-sonnet-4.5", "seed": 4, "cases": 10, "runs": runs,
              "response_order": {"order": "random", "seed": 2}}  # fmt: skip
    (folder / "selective-lwe.json").write_text(json.dumps(result))
    out = tmp_path / "out"
    assert orders(["--runs", str(tmp_path / "claude"), "--out", str(out)]) == 0
    table = rows(out / "orders.csv")
    assert [r["order_seed"] for r in table] == ["4", "5", "6", "", ""]
    assert float(table[3]["accuracy"]) == pytest.approx(fmean(values))
    assert float(table[4]["accuracy"]) == pytest.approx(stdev(values))
    text = (out / "orders.md").read_text()
    assert "Table 12: Selective LWE" in text and "0.813 ± 0.025" in text and "16.0×" in text


def test_figure5_diffs_one_refinement_of_the_meta_prompt(tmp_path, table1_runs, env):  # noqa: F811
    out = tmp_path / "figure5"
    argv = [str(table1_runs), "--benchmark", "VL", "--method", "lwe", "--out", str(out)]
    assert metadiff(argv) == 0
    before = (out / "figure5_before.txt").read_text()
    after = (out / "figure5_after.txt").read_text()
    saved = json.loads((table1_runs / "runs" / "VL" / "lwe.json").read_text())
    assert before.strip() == saved["runs"][0]["initial_meta_prompt"]
    first = next(e for e in saved["runs"][0]["history"] if e.get("meta_prompt"))
    assert after.strip() == first["meta_prompt"] and after.startswith("Meta-prompt version")
    page = (out / "figure5.html").read_text()
    assert "<del" in page and "<ins" in page and "Check every claim" in page
    words = (out / "figure5.txt").read_text()
    assert "{+Meta-prompt" in words and "[-" in words
    about = json.loads((out / "figure5.json").read_text())
    assert about["step"] == 1 and about["event"]["after_case"] == first["after_case"]
    assert about["words_added"] > 0 and about["words_removed"] > 0
    # The second change diffs the first change's text against the next one.
    assert metadiff([*argv[:-1], str(tmp_path / "step2"), "--step", "2"]) == 0
    assert (tmp_path / "step2" / "figure5_before.txt").read_text() == after
    assert metadiff([*argv, "--step", "99"]) == 2
    assert metadiff([str(table1_runs), "--out", str(out)]) == 2  # a folder needs --benchmark


def test_the_word_diff_marks_what_was_removed_and_added():
    pieces = word_diff("Check the facts.\nBe fair.", "Check the facts first.\nBe fair.")
    assert ("removed", "facts.") in pieces and ("added", "facts first.") in pieces
    assert "".join(t for k, t in pieces if k != "added") == "Check the facts.\nBe fair."
    assert "".join(t for k, t in pieces if k != "removed") == "Check the facts first.\nBe fair."
