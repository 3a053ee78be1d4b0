"""LWE's subset analyses after Table 1 (figure 3 with its binomial band, appendix I's Tables 3 and
4, figures 4 and 7) against the loopback server: a dry run that spends nothing, then the runs."""

from __future__ import annotations

import csv

from studyapp.pipelines.lwe.subsets import main as subsets
from studyapp.pipelines.lwe.table1 import main as table1
from tests.studyapp.pipelines.test_lwe_table1 import benchmark_file, env  # noqa: F401 (fixture)


def rows(path):
    with path.open() as handle:
        return list(csv.DictReader(handle))


def test_subsets_from_table1_runs(tmp_path, env, capsys):  # noqa: F811
    vl = benchmark_file(tmp_path, "vl", "ABBAABBA")  # the judge is biased on cases 2 and 5
    first = tmp_path / "t1"
    argv = ["--model", "openai-compatible:judge", "--benchmark", f"VL={vl}", "--out", str(first),
            "--orders", "1", "--quiet", "--methods", "vanilla", "sample-specific",
            "selective-lwe"]  # fmt: skip
    assert table1(argv) == 0
    out = tmp_path / "subsets"
    common = ["--model", "openai-compatible:judge", "--table1", str(first), "--benchmark",
              f"VL={vl}", "--out", str(out), "--subset-size", "VL=4", "--ratios", "0", "0.5",
              "--batch-sizes", "2", "4"]  # fmt: skip
    before = len(env.requests)
    assert subsets([*common, "--dry-run", "--price", "2,8"]) == 0
    plan = capsys.readouterr().out
    assert "lwe-inconsistent-b2" in plan and "lwe-ratio0.5-n4" in plan and "cost $" in plan
    assert len(env.requests) == before and not out.exists()

    assert subsets(common) == 0
    curve = rows(out / "figure3.csv")
    vanilla = [r for r in curve if r["method"] == "vanilla"]
    assert len(vanilla) == 2 and all(r["ci_low"] and r["ci_high"] for r in vanilla)
    assert {r["method"] for r in curve} == {"vanilla", "sample-specific", "selective-lwe"}
    assert (out / "figure3.png").exists() and (out / "figure4.png").exists()
    table3 = {r["method"]: r for r in rows(out / "table3.csv")}
    assert all(r["cases"] == "2" for r in table3.values())  # the two inconsistent cases
    assert float(table3["vanilla"]["pair_accuracy"]) == 0.0  # inconsistent: never pair-correct
    assert "lwe (on this subset)" in table3
    table4 = {r["method"]: r for r in rows(out / "table4.csv")}
    assert table4["vanilla"]["cases"] == "6" and float(table4["vanilla"]["pair_accuracy"]) == 1.0
    figure4 = rows(out / "figure4.csv")
    assert {r["ratio"] for r in figure4} == {"0.0", "0.5"} and all(
        r["cases"] == "4" for r in figure4
    )
    figure7 = {r["batch_size"]: r for r in rows(out / "figure7.csv")}
    assert float(figure7["4"]["relative_cost"]) == 1.0 and set(figure7) == {"2", "4"}
    # A rerun reuses every run: no new call.
    calls = len(env.requests)
    assert subsets(common) == 0 and len(env.requests) == calls
