"""Which cases LWE's commands judge: Multimodal RewardBench without ids is a seeded 1,000-case
subset whose other cases are TextGrad*'s labelled pool, and TextGrad*'s split is per benchmark."""

import pytest

from studyapp.pipelines.lwe.benchmark_args import TableError, load_benchmarks, textgrad_splits
from studyapp.pipelines.lwe.table1 import build_parser
from studyapp.pipelines.lwe.table1 import main as table1
from tests.studyapp.pipelines.test_lwe_table1 import benchmark_file


def args_for(tmp_path, *extra):
    vl, mm = tmp_path / "vl" / "data.jsonl", tmp_path / "mm" / "data.jsonl"
    if not vl.exists():
        benchmark_file(tmp_path, "vl", "AB" * 6)
        benchmark_file(tmp_path, "mm", "AB" * 15)
    argv = ["--model", "openai:m", "--benchmark", f"VL={vl}", "--benchmark", f"MM={mm}"]
    return build_parser().parse_args([*argv, "--out", str(tmp_path / "out"), *extra])


def test_mm_without_ids_is_a_seeded_subset_and_the_rest_its_labelled_pool(tmp_path):
    benchmarks, pools = load_benchmarks(args_for(tmp_path, "--subset", "MM=10"))
    assert len(benchmarks["MM"]) == 10 and len(pools["MM"]) == 20
    assert not {c.id for c in benchmarks["MM"]} & {c.id for c in pools["MM"]}
    again, _ = load_benchmarks(args_for(tmp_path, "--subset", "MM=10"))
    assert [c.id for c in again["MM"]] == [c.id for c in benchmarks["MM"]]
    other, _ = load_benchmarks(args_for(tmp_path, "--subset", "MM=10", "--subset-seed", "1"))
    assert [c.id for c in other["MM"]] != [c.id for c in benchmarks["MM"]]
    assert len(benchmarks["VL"]) == 12 and "VL" not in pools  # VL is judged whole


def test_a_file_smaller_than_the_papers_subset_is_judged_whole(tmp_path):
    benchmarks, pools = load_benchmarks(args_for(tmp_path))  # MM=1000 by default; 30 cases here
    assert len(benchmarks["MM"]) == 30 and pools == {}


def test_textgrad_takes_the_papers_split_per_benchmark(tmp_path):
    assert textgrad_splits(args_for(tmp_path)) == {"VL": (10, 10), "MM": (20, 20)}
    chosen = textgrad_splits(args_for(tmp_path, "--textgrad-split", "MM=3,1"))
    assert chosen == {"VL": (10, 10), "MM": (3, 1)}
    with pytest.raises(TableError, match="--subset: no benchmark named XX"):
        load_benchmarks(args_for(tmp_path, "--subset", "XX=5"))


def test_the_dry_run_says_which_cases_and_splits(tmp_path, capsys):
    vl = benchmark_file(tmp_path, "vl", "ABAB")
    argv = ["--model", "openai:m", "--benchmark", f"VL={vl}", "--benchmark", f"MM={vl}",
            "--out", str(tmp_path / "out"), "--dry-run"]  # fmt: skip
    assert table1(argv) == 0
    out = capsys.readouterr().out
    assert "cases: VL the whole file; MM seeded subset of 1000 (seed 0)" in out
    assert "TextGrad* train,validation VL 10,10, MM 20,20" in out
