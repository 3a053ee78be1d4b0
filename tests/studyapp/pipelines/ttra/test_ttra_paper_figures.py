"""The paper's figures 1, 5-9, 12 and table 2 from a folder of runs made here with tiny models,
and appendix A.2's seeded SFT subsets."""

import csv
import json
import shutil

import pytest

pytest.importorskip("trl")

from studyapp.pipelines.ttra.figure_runs import Models, discover, score  # noqa: E402
from studyapp.pipelines.ttra.harmonize import main as harmonize_main  # noqa: E402
from studyapp.pipelines.ttra.paper_figures import draw_all  # noqa: E402
from studyapp.pipelines.ttra.sft_subsets import main as subsets_main  # noqa: E402
from studyapp.pipelines.ttra.tasks import Task  # noqa: E402
from tests.studyapp.pipelines.ttra.test_ttra_pipeline import tiny_options  # noqa: E402

pytestmark = pytest.mark.ttra

MATH = [Task(f"m{i}", f"What is {i} + 2?", str(i + 2)) for i in range(6)]
CASES = [
    Task(f"c{i}", f"Pain case {i}.", label, "word")
    for i, label in enumerate(["appendicitis", "pancreatitis"] * 3)
]
SFT = [{"question": f"What is {i} + 1?", "response": f"\\boxed{{{i + 1}}}"} for i in range(4)]

TINY = dict(num_generations=2, max_completion_length=4, eval_max_completion_length=4,
            one_shot_steps=1, ttrl_steps=1, ttrl_prompts_per_step=2, eval_samples=2,
            eval_engine="hf", save_model=False, sft_max_length=64)  # fmt: skip


def results(folder):
    return json.loads((folder / "results.json").read_text())


@pytest.fixture(scope="module")
def runs(tiny_model, tmp_path_factory):
    from studyapp.pipelines.ttra.evaluate import run_experiment
    from studyapp.pipelines.ttra.tiny import build_tiny_model

    root = tmp_path_factory.mktemp("runs")
    tuned = str(build_tiny_model(tmp_path_factory.mktemp("tuned") / "model", seed=7))
    sft_file = root.parent / "sft-a.jsonl"
    sft_file.write_text("".join(json.dumps(r) + "\n" for r in SFT))
    other = root.parent / "sft-b.jsonl"
    other.write_text("".join(json.dumps(r) + "\n" for r in SFT[:2]))

    def go(where, model, tasks, **extra):
        run_experiment(tiny_options(model, **(TINY | extra)), tasks, root / where)

    go("math500/base", tiny_model, MATH)
    go("math500/tuned", tuned, MATH)
    go("math500/base/seed-2", tiny_model, MATH, seed=2)
    go("math500/base/sft-a", tiny_model, MATH, experiment="sft", sft_data=str(sft_file),
       sft_with_ttra=False)  # fmt: skip
    go("math500/base/sft-b", tiny_model, MATH, experiment="sft", sft_data=str(other),
       sft_with_ttra=False)  # fmt: skip
    go("math500/base/split", tiny_model, MATH, experiment="split-half")
    go("mimic/base/ablation", tiny_model, CASES, experiment="ablation", one_shot_per_label=True)
    go("mimic/base", tiny_model, CASES, one_shot_per_label=True)
    for bench in ("math500", "olympiadbench"):  # the same runs, filed as other models' too
        for name, source in (("llama-base", "base"), ("llama-oat", "tuned"), ("base", "base"),
                             ("tuned", "tuned")):  # fmt: skip
            target = root / bench / name / "results.json"
            if not target.exists():
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(root / "math500" / source / "results.json", target)
    return root


MODELS = {
    "base": {"group": "Qwen2.5-Math-7B", "base": True, "label": "Base",
             "reported": {"math500": 50.8}},
    "tuned": {"group": "Qwen2.5-Math-7B", "label": "Tuned"},
    "llama-base": {"group": "Llama-3.2-3B", "base": True, "label": "Base",
                   "reported": {"math500": 0.6}},
    "llama-oat": {"group": "Llama-3.2-3B", "label": "Oat-Zero-3B"},
}  # fmt: skip


def rows(path):
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


def test_every_figure_and_table_is_drawn_from_the_runs(runs, tmp_path):
    models = tmp_path / "models.json"
    models.write_text(json.dumps(MODELS))
    out = tmp_path / "figures"
    argv = ["figures", str(runs), "--out", str(out), "--models", str(models), "--doctors", "73.0"]
    assert harmonize_main(argv) == 0  # through harmonize, as the docs say
    report = json.loads((out / "figures.json").read_text())
    for name in ("figure1", "figure5", "figure6", "figure7", "figure8", "figure9", "figure12"):
        assert "files" in report["outputs"][name], (name, report["outputs"][name])
        assert (out / f"{name}.png").stat().st_size > 0 and (out / f"{name}.pdf").exists()
    base = results(runs / "math500" / "base")
    # Figure 6: the split-half run's two halves, in percent.
    split = results(runs / "math500" / "base" / "split")
    (six,) = rows(out / "figure6.csv")
    assert float(six["aligned_half"]) == pytest.approx(
        100 * split["aligned"]["aligned_half"]["avg_at_k"]
    )
    assert float(six["held_out_half"]) == pytest.approx(
        100 * split["aligned"]["held_out_half"]["avg_at_k"]
    )
    # Figure 5: two TTRA seeds beside two SFT data sets.
    five = rows(out / "figure5.csv")
    assert sorted(r["setting"] for r in five if r["method"] == "TTRA") == ["seed 1", "seed 2"]
    assert sorted(r["setting"] for r in five if r["method"] == "SFT") == ["sft-a", "sft-b"]
    sft_a = results(runs / "math500" / "base" / "sft-a")
    (a,) = [r for r in five if r["setting"] == "sft-a"]
    assert float(a["accuracy"]) == pytest.approx(100 * sft_a["sft"]["evaluation"]["avg_at_k"])
    # Figure 8: the clinical runs' macro average over pathologies.
    clinical = results(runs / "mimic" / "base")
    (eight,) = rows(out / "figure8.csv")
    assert float(eight["ttra"]) == pytest.approx(100 * clinical["aligned"]["macro_avg_at_k"])
    assert float(eight["doctors"]) == 73.0
    # Figure 9: direct and the three variants of the ablation run.
    nine = rows(out / "figure9.csv")
    assert [r["setting"] for r in nine] == ["Direct", "1-shot only", "TTRL only", "TTRA"]
    # Figure 1: the reported score where models.json has one, else the direct evaluation.
    one = {r["model"]: r for r in rows(out / "figure1.csv")}
    assert float(one["Base"]["reported"]) == pytest.approx((50.8 + score(base["direct"])) / 2)
    # Figure 7 leaves out table 2's Llama group.
    assert {r["group"] for r in rows(out / "figure7.csv")} == {"Qwen2.5-Math-7B"}
    # Table 2: the Llama group, reported direct scores starred, the fine-tuned model's gain.
    table = (out / "table2.md").read_text()
    assert "Llama-3.2-3B: Base" in table and "0.60*" in table
    gain = [r for r in rows(out / "table2.csv") if r["model"].startswith("gain")]
    tuned = results(runs / "math500" / "tuned")
    expected = score(tuned["aligned"]) - score(base["aligned"])
    assert float(gain[0]["math500_ttra"]) == pytest.approx(expected)


def test_a_figure_without_its_runs_is_skipped_and_says_why(runs, tmp_path):
    only = tmp_path / "only"
    shutil.copytree(
        runs / "math500" / "tuned",
        only / "math500" / "tuned",
        ignore=shutil.ignore_patterns("sft-*"),
    )
    report = draw_all(only, tmp_path / "out", Models({}))
    assert "split-half" in report["outputs"]["figure6"]["skipped"]
    assert "files" in report["outputs"]["figure7"]
    assert len(discover(only)) == 1
    with pytest.raises(ValueError, match="no results.json"):
        draw_all(tmp_path / "empty", tmp_path / "x")


def test_sft_subsets_are_drawn_with_the_seed_and_recorded(tmp_path):
    big = tmp_path / "am.jsonl"
    big.write_text(
        "".join(json.dumps({"question": f"q{i}", "response": f"r{i}"}) + "\n" for i in range(50))
    )
    small = tmp_path / "s1k.jsonl"
    small.write_text(
        "".join(json.dumps({"prompt": f"p{i}", "completion": "c"}) + "\n" for i in range(5))
    )

    def draw(out, seed, *sources):
        argv = ["--size", "10", "--seed", str(seed), "--out", str(out)]
        for source in sources:
            argv += ["--source", source]
        assert subsets_main(argv) == 0
        return json.loads((out / "subsets.json").read_text())

    first = draw(tmp_path / "a", 0, f"am={big}", f"s1k={small}")
    chosen = first["subsets"]["am"]["lines"]
    assert len(chosen) == 10 == len(set(chosen)) and chosen == sorted(chosen)
    written = [json.loads(line) for line in (tmp_path / "a" / "am.jsonl").read_text().splitlines()]
    assert [r["question"] for r in written] == [f"q{n - 1}" for n in chosen]
    assert first["subsets"]["s1k"]["whole"] and first["subsets"]["s1k"]["chosen"] == 5
    assert first["seed"] == 0 and len(first["subsets"]["am"]["sha256"]) == 64
    again = draw(tmp_path / "b", 0, f"am={big}")  # the same seed, alone: the same subset
    assert again["subsets"]["am"]["lines"] == chosen
    assert draw(tmp_path / "c", 1, f"am={big}")["subsets"]["am"]["lines"] != chosen
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"nothing": 1}\n')
    assert subsets_main(["--source", f"bad={bad}", "--out", str(tmp_path / "d")]) == 2
