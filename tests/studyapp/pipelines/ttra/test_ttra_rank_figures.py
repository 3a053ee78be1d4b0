"""The TTRA paper's rank figures (3, 10, 11) from a harmonisation's ranking.json."""

import csv
import json

from studyapp.pipelines.ttra.rank_figures import main, ranks


def test_the_bump_chart_and_scatter_are_drawn_with_the_ranks_behind_them(tmp_path, capsys):
    scores = {
        "m1": {"gsm8k": {"direct": 0.9, "ttra": 0.92}, "mathqa": {"direct": 0.2, "ttra": 0.8}},
        "m2": {"gsm8k": {"direct": 0.5, "ttra": 0.6}, "mathqa": {"direct": 0.7, "ttra": 0.5}},
        "m3": {"gsm8k": {"direct": 0.3, "ttra": 0.4}, "mathqa": {"direct": 0.4, "ttra": 0.3}},
    }
    ranking = {
        "benchmarks": ["gsm8k", "mathqa"],
        "models": ["m1", "m2", "m3"],
        "scores": scores,
        "direct": {"kendall_tau": -0.33, "spearman_rho": -0.5},
        "ttra": {"kendall_tau": 1.0, "spearman_rho": 1.0},
    }
    path = tmp_path / "ranking.json"
    path.write_text(json.dumps(ranking))
    assert main([str(path), "--out", str(tmp_path / "fig")]) == 0
    for stem in ("rank_bump", "rank_scatter"):
        for ext in ("png", "svg", "pdf"):
            assert (tmp_path / "fig" / f"{stem}.{ext}").stat().st_size > 0
    with (tmp_path / "fig" / "rank_figures.csv").open() as handle:
        rows = {(r["model"], r["evaluation"]): r for r in csv.DictReader(handle)}
    assert rows["m1", "direct"]["gsm8k_rank"] == "1" and rows["m1", "direct"]["mathqa_rank"] == "3"
    assert rows["m1", "ttra"]["mathqa_rank"] == "1"  # harmonised: the same order on both
    assert "ρ = 1.00" in (tmp_path / "fig" / "rank_scatter.svg").read_text()
    assert ranks([0.1, 0.1, 0.3]) == [2, 2, 1]


def test_a_ranking_file_that_is_not_one_is_refused(tmp_path, capsys):
    path = tmp_path / "ranking.json"
    path.write_text(json.dumps({"benchmarks": ["a"], "models": []}))
    assert main([str(path)]) == 2
    assert "two benchmarks" in capsys.readouterr().err
