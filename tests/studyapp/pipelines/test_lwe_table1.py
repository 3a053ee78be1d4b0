"""Table 1 in one command: every method on two image-text benchmarks against the loopback server,
the cost column, TextGrad* scored on the cases it did not train on, and a rerun that reuses."""

from __future__ import annotations

import csv
import json

import pytest

from studyapp.pipelines.lwe.baselines import split_labelled
from studyapp.pipelines.lwe.table1 import METHOD_ORDER, main
from tests.fakes.llm_server import images_in
from tests.studyapp.pipelines.synthetic import SyntheticJudge, make_cases
from tests.studyapp.pipelines.test_lwe_images import png


def benchmark_file(tmp_path, name, labels):
    """A benchmark in the Multimodal RewardBench fields (as the LWE authors convert both)."""
    folder = tmp_path / name
    (folder / "images").mkdir(parents=True)
    lines = []
    for n, case in enumerate(make_cases(labels), start=1):
        (folder / "images" / f"{n}.png").write_bytes(png(n))
        lines.append(
            {
                "ID": case.id,
                "Text": case.prompt,
                "Output1": case.response_a,
                "Output2": case.response_b,
                "Better": "Output1" if case.label == "A" else "Output2",
                "Image": f"images/{n}.png",
            }
        )
    path = folder / "data.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines))
    return path


@pytest.fixture
def env(monkeypatch, llm_server):
    llm_server.responder = SyntheticJudge(biased={2, 5})
    monkeypatch.setenv("OPENAI_BASE_URL", llm_server.openai_base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    return llm_server


def test_every_method_on_both_benchmarks_with_the_cost_column(tmp_path, env, capsys):
    vl = benchmark_file(tmp_path, "vl", "ABBAABBA")
    mm = benchmark_file(tmp_path, "mm", "BAABBAAB")
    out = tmp_path / "out"
    argv = ["--model", "openai-compatible:judge", "--benchmark", f"VL={vl}"]
    argv += ["--benchmark", f"MM={mm}", "--out", str(out), "--orders", "2", "--quiet"]
    argv += ["--textgrad-split", "VL=2,2", "--textgrad-split", "MM=3,1", "--batch-size", "2"]
    assert main(argv) == 0
    with (out / "table1.csv").open() as handle:
        rows = {row["method"]: row for row in csv.DictReader(handle)}
    assert list(rows) == list(METHOD_ORDER)
    assert float(rows["vanilla"]["relative_cost"]) == pytest.approx(1.0)
    for method, row in rows.items():
        for bench in ("VL", "MM"):
            for figure in ("accuracy", "consistency", "pair_accuracy"):
                assert 0.0 <= float(row[f"{bench}_{figure}"]) <= 1.0
        expected = (float(row["VL_relative_cost"]) + float(row["MM_relative_cost"])) / 2
        assert float(row["relative_cost"]) == pytest.approx(expected)
        if method != "vanilla":
            assert float(row["relative_cost"]) > 1.0, method  # every other method costs more
    # TextGrad* is scored on the cases it neither trained nor validated on.
    assert rows["textgrad"]["VL_cases"] == "4" and rows["textgrad"]["MM_cases"] == "4"
    saved = json.loads((out / "runs" / "VL" / "textgrad.json").read_text())
    held = set(saved["labelled_cases"]["train"]) | set(saved["labelled_cases"]["validation"])
    tested = {r["id"] for run in saved["runs"] for r in run["results"]}
    assert len(held) == 4 and not held & tested
    assert "| Method | VL Acc. |" in capsys.readouterr().out
    # Every request carried its case's image(s) but those about the instructions alone (the
    # meta-prompt's condensing, TextGrad's rewrite from critiques).
    textual = ("# Condensing the meta-prompt", "# Improving the judge's instructions")
    for request in env.requests:
        if not any(heading in str(request.body) for heading in textual):
            assert images_in(request.body), str(request.body)[:300]
    # A second run reuses every finished method: not one more request.
    sent = len(env.requests)
    assert main(argv) == 0
    assert len(env.requests) == sent


def test_bad_arguments_change_nothing(tmp_path, env, capsys):
    vl = benchmark_file(tmp_path, "vl", "AB")
    out = tmp_path / "out"
    argv = ["--model", "openai-compatible:judge", "--benchmark", f"VL={vl}", "--out", str(out)]
    assert main([*argv, "--ids", "XX=ids.json"]) == 2
    assert "no benchmark named XX" in capsys.readouterr().err
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "vanila.txt").write_text("typo")
    assert main([*argv, "--prompts", str(tmp_path / "p")]) == 2
    assert "vanila.txt" in capsys.readouterr().err
    assert not out.exists() and not env.requests


def test_the_labelled_split_is_drawn_apart_from_the_test_cases():
    cases = make_cases("ABABABAB")
    train, validation, test = split_labelled(cases, 3, 2, seed=4)
    ids = [c.id for c in train + validation + test]
    assert sorted(ids) == sorted(c.id for c in cases) and len(set(ids)) == 8
    with pytest.raises(ValueError, match="TextGrad needs"):
        split_labelled(cases, 4, 4, seed=0)
