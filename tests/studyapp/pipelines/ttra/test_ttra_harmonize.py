"""One command: direct evaluation and TTRA for several models on two benchmarks, the relative-cost
table and the rank correlation before and after TTRA (two tiny models, two tiny task files)."""

import csv
import json

import pytest

from studyapp.pipelines.ttra.harmonize import (
    HarmonizeError,
    parse_benchmarks,
    parse_overrides,
    rank_correlation,
    slug,
)

TINY = [
    "--num-generations", "2", "--max-completion-length", "3", "--eval-max-completion-length",
    "3", "--one-shot-steps", "1", "--ttrl-steps", "1", "--ttrl-prompts-per-step", "1",
    "--eval-samples", "2", "--no-gradient-checkpointing", "--no-save-model", "--use-vllm", "off",
    "--quiet",
]  # fmt: skip


def write_tasks(path, rows):
    path.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    return path


@pytest.fixture
def benchmarks(tmp_path):
    math = write_tasks(
        tmp_path / "math.jsonl",
        [{"id": f"m{i}", "question": f"What is {i} + 2?", "answer": str(i + 2)} for i in range(3)],
    )
    choice = write_tasks(
        tmp_path / "choice.jsonl",
        [
            {"id": f"c{i}", "question": f"Which is {i}?", "options": [str(i), "x", "y"],
             "answer": "A"}
            for i in range(3)
        ],
    )  # fmt: skip
    return math, choice


def test_rank_correlation_is_kendalls_tau_and_spearmans_rho():
    scipy_stats = pytest.importorskip("scipy.stats")
    a, b = [0.1, 0.4, 0.3, 0.9], [0.2, 0.1, 0.5, 0.8]
    found = rank_correlation(a, b)
    assert found["kendall_tau"] == pytest.approx(scipy_stats.kendalltau(a, b).statistic)
    assert found["kendall_tau"] == pytest.approx(1 / 3)  # 4 concordant, 2 discordant pairs
    assert found["spearman_rho"] == pytest.approx(0.4)
    assert rank_correlation([0.5, 0.5], [0.1, 0.2])["kendall_tau"] is None  # constant: undefined


def test_bad_arguments_are_named(tmp_path, benchmarks):
    math, choice = benchmarks
    with pytest.raises(HarmonizeError, match="exactly two"):
        parse_benchmarks([f"a={math}"])
    with pytest.raises(HarmonizeError, match="no file"):
        parse_benchmarks([f"a={math}", f"b={tmp_path / 'missing.jsonl'}"])
    found = parse_benchmarks([f"gsm={math}", f"mathqa={choice}"])
    assert parse_overrides(["mathqa.ttrl_learning_rate=5e-8"], found) == {
        "gsm": {},
        "mathqa": {"ttrl_learning_rate": 5e-8},
    }
    with pytest.raises(HarmonizeError, match="no benchmark named 'x'"):
        parse_overrides(["x.seed=1"], found)
    with pytest.raises(HarmonizeError, match="no option named 'speed'"):
        parse_overrides(["gsm.speed=1"], found)
    with pytest.raises(HarmonizeError, match="not a int"):
        parse_overrides(["gsm.seed=one"], found)


@pytest.mark.ttra
def test_two_models_on_two_benchmarks_give_the_cost_table_and_the_rankings(
    tmp_path, benchmarks, capsys
):
    pytest.importorskip("trl")
    pytest.importorskip("scipy")
    from studyapp.pipelines.ttra.harmonize import main
    from studyapp.pipelines.ttra.tiny import build_tiny_model

    models = [str(build_tiny_model(tmp_path / f"model{seed}", seed=seed)) for seed in (1, 2)]
    math, choice = benchmarks
    out = tmp_path / "out"
    argv = ["--model", models[0], "--model", models[1], "--benchmark", f"gsm={math}"]
    argv += ["--benchmark", f"mathqa={choice}", "--out", str(out)]
    argv += ["--set", "mathqa.ttrl_learning_rate=5e-8", *TINY]
    assert main(argv) == 0
    printed = json.loads(capsys.readouterr().out)

    with (out / "cost.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert [(r["model"], r["benchmark"]) for r in rows] == [
        (m, b) for m in models for b in ("gsm", "mathqa")
    ]
    for row in rows:
        folder = out / "runs" / slug(row["model"]) / row["benchmark"]
        run = json.loads((folder / "results.json").read_text())
        stage = {t["stage"]: t["wall_s"] for t in run["times"]}
        assert float(row["direct_wall_s"]) == pytest.approx(stage["direct-eval"], abs=1e-3)
        ttra = stage["one-shot"] + stage["ttrl"] + stage["aligned-eval"]
        assert float(row["ttra_wall_s"]) == pytest.approx(ttra, abs=1e-3)
        assert float(row["relative_cost"]) == pytest.approx(ttra / stage["direct-eval"], abs=0.01)
        lr = 5e-8 if row["benchmark"] == "mathqa" else 5e-6
        assert run["options"]["ttrl_learning_rate"] == lr  # the per-benchmark option
    assert "| model | benchmark |" in (out / "cost.md").read_text()

    ranking = json.loads((out / "ranking.json").read_text())
    from scipy.stats import kendalltau

    for when in ("direct", "ttra"):
        gsm = [ranking["scores"][m]["gsm"][when] for m in models]
        mathqa = [ranking["scores"][m]["mathqa"][when] for m in models]
        expected = kendalltau(gsm, mathqa).statistic
        got = ranking[when]["kendall_tau"]
        assert (got is None and expected != expected) or got == pytest.approx(expected)
        assert printed["ranking"][when] == ranking[when]
    assert "Rank correlation" in (out / "ranking.md").read_text()

    # Per-label and macro accuracy of the choice benchmark (the math one has no labels to split).
    with (out / "per_label.csv").open() as handle:
        labels = list(csv.DictReader(handle))
    assert {r["benchmark"] for r in labels} == {"mathqa"}
    for model in models:
        folder = out / "runs" / slug(model) / "mathqa"
        run = json.loads((folder / "results.json").read_text())
        for when, key in (("direct", "direct"), ("ttra", "aligned")):
            mine = {
                r["label"]: r for r in labels if r["model"] == model and r["evaluation"] == when
            }
            assert set(mine) == {"A", "(macro)"}
            assert float(mine["(macro)"]["avg_at_k"]) == pytest.approx(
                run[key]["per_label"]["macro_avg_at_k"]
            )
            assert int(mine["A"]["questions"]) == run["questions"]
    assert "(macro)" in (out / "per_label.md").read_text()

    # A second run reuses every finished model-benchmark run instead of training again.
    before = {p: p.stat().st_mtime_ns for p in out.glob("runs/*/*/results.json")}
    assert len(before) == 4
    assert main(argv) == 0
    assert {p: p.stat().st_mtime_ns for p in out.glob("runs/*/*/results.json")} == before

    # The rank figures (the paper's figures 3, 10 and 11) lie next to the tables, drawn from the
    # ranking.json beside them.
    for stem in ("rank_bump", "rank_scatter"):
        for ext in ("png", "svg", "pdf"):
            assert (out / f"{stem}.{ext}").stat().st_size > 0, (stem, ext)
    with (out / "rank_figures.csv").open() as handle:
        drawn = list(csv.DictReader(handle))
    assert {(r["model"], r["evaluation"]) for r in drawn} == {
        (m, when) for m in models for when in ("direct", "ttra")
    }
    for row in drawn:
        score = ranking["scores"][row["model"]]["gsm"][row["evaluation"]]
        assert float(row["gsm_score"]) == pytest.approx(score)
    assert all(r["sft_wall_s"] == "" for r in rows)  # no SFT data: table 1's middle row is empty


def test_an_sft_preset_without_sft_data_is_refused_and_sft_data_runs_sft_beside_ttra(tmp_path):
    from studyapp.pipelines.ttra.config import TTRAOptions
    from studyapp.pipelines.ttra.harmonize import benchmark_options

    files = {"gsm": tmp_path / "g.jsonl", "mathqa": tmp_path / "m.jsonl"}
    base = TTRAOptions(model="m")
    sft = parse_overrides(["gsm.preset=sft-s6.2"], files)["gsm"]
    with pytest.raises(HarmonizeError, match=r"sft-s6.2 runs the SFT baseline.*sft_data"):
        benchmark_options(base, "m", sft)
    with_data = parse_overrides(["gsm.preset=sft-s6.2", "gsm.sft_data=s.jsonl"], files)["gsm"]
    options = benchmark_options(base, "m", with_data)
    assert (options.experiment, options.sft_with_ttra, options.sft_learning_rate) == (
        "sft",
        True,  # TTRA beside SFT: the ranking needs its scores
        2e-6,
    )
    assert benchmark_options(base, "m", {}).experiment == "ttra"


@pytest.mark.ttra
def test_a_benchmark_with_sft_data_puts_table_1s_sft_row_into_the_cost_table(
    tmp_path, benchmarks, capsys
):
    pytest.importorskip("trl")
    pytest.importorskip("scipy")
    from studyapp.pipelines.ttra.harmonize import main
    from studyapp.pipelines.ttra.tiny import build_tiny_model

    models = [str(build_tiny_model(tmp_path / f"model{seed}", seed=seed)) for seed in (1, 2)]
    math, choice = benchmarks
    sft = write_tasks(
        tmp_path / "sft.jsonl",
        [{"question": f"What is {i} + 1?", "response": f"\\boxed{{{i + 1}}}"} for i in range(3)],
    )
    out = tmp_path / "out"
    argv = ["--model", models[0], "--model", models[1], "--benchmark", f"gsm={math}"]
    argv += ["--benchmark", f"mathqa={choice}", "--out", str(out), "--set", f"gsm.sft_data={sft}"]
    argv += ["--sft-batch-size", "2", "--sft-max-length", "256", *TINY]
    assert main(argv) == 0
    with (out / "cost.csv").open() as handle:
        rows = {(r["model"], r["benchmark"]): r for r in csv.DictReader(handle)}
    for model in models:
        run = json.loads((out / "runs" / slug(model) / "gsm" / "results.json").read_text())
        assert run["experiment"] == "sft" and run["aligned"]["avg_at_k"] is not None
        table = {r["method"]: r for r in run["cost_table"]}
        assert list(table) == [
            "Direct evaluation",
            "Train-before-test (SFT)",
            "Train-before-test (TTRA)",
        ]
        middle, row = table["Train-before-test (SFT)"], rows[model, "gsm"]
        stage = {t["stage"]: t["wall_s"] for t in run["times"]}
        assert middle["wall_s"] == pytest.approx(stage["sft"] + stage["sft-eval"])
        assert float(row["sft_wall_s"]) == pytest.approx(middle["wall_s"], abs=1e-3)
        assert float(row["sft_training_wall_s"]) == pytest.approx(stage["sft"], abs=1e-3)
        assert float(row["sft_gpu_s"]) == 0.0  # a CPU
        assert float(row["sft_relative_cost"]) == pytest.approx(middle["relative"], abs=0.01)
        ttra = stage["one-shot"] + stage["ttrl"] + stage["aligned-eval"]
        assert float(row["ttra_wall_s"]) == pytest.approx(ttra, abs=1e-3)  # TTRA's row unchanged
        assert rows[model, "mathqa"]["sft_wall_s"] == ""  # no SFT data for that benchmark
    assert "sft_relative_cost" in (out / "cost.md").read_text()
