"""Stage 1 on k labelled cases and accuracy per label: appendix C aligns on one case per
pathology and reports the mean of the per-pathology accuracies."""

import json

import pytest

pytest.importorskip("trl")

from studyapp.pipelines.ttra.config import TTRAOptions  # noqa: E402
from studyapp.pipelines.ttra.tasks import Task  # noqa: E402

pytestmark = pytest.mark.ttra

CHOICES = [
    Task(f"m{i}", f"Which is {i}?", "ABCD"[i % 4], "choice", ("0", "1", "2", "3")) for i in range(8)
]
CASES = [
    Task(f"case{i}", f"Case {i}: findings.", label, "word")
    for i, label in enumerate(
        ["appendicitis", "cholecystitis", "pancreatitis", "diverticulitis"] * 2
    )
]


def tiny_options(model: str, **overrides) -> TTRAOptions:
    values = dict(
        model=model,
        num_generations=4,
        max_completion_length=6,
        eval_max_completion_length=6,
        one_shot_steps=1,
        ttrl_steps=1,
        ttrl_prompts_per_step=2,
        eval_samples=2,
        gradient_checkpointing=False,
        use_vllm="off",
        eval_engine="hf",
        save_model=False,
        progress_bars=False,
        seed=3,
    )
    return TTRAOptions(**(values | overrides))


def test_score_gives_accuracy_per_label_and_its_macro_average():
    from studyapp.pipelines.ttra.evaluate import score

    tasks = [
        Task("a1", "q", "A", "choice", ("x", "y")),
        Task("a2", "q", "A", "choice", ("x", "y")),
        Task("a3", "q", "A", "choice", ("x", "y")),
        Task("b1", "q", "B", "choice", ("x", "y")),
    ]
    completions = [
        ["\\boxed{A}", "\\boxed{A}"],
        ["\\boxed{A}", "\\boxed{A}"],
        ["\\boxed{A}", "\\boxed{A}"],
        ["\\boxed{A}", "\\boxed{B}"],
    ]
    result = score(tasks, completions)
    labels = result["per_label"]["labels"]
    assert labels["A"] == {"questions": 3, "avg_at_k": 1.0, "majority_accuracy": 1.0}
    assert labels["B"]["avg_at_k"] == 0.5 and labels["B"]["majority_accuracy"] == 0.0  # tie: A
    assert result["avg_at_k"] == pytest.approx(3.5 / 4)  # the micro average: 0.875
    assert result["per_label"]["macro_avg_at_k"] == pytest.approx(0.75)  # (1.0 + 0.5) / 2
    assert result["per_label"]["macro_majority_accuracy"] == pytest.approx(0.5)
    assert result["macro_avg_at_k"] == result["per_label"]["macro_avg_at_k"]
    math = score([Task("m", "q", "2")], [["\\boxed{2}"]])
    assert math["per_label"] is None and math["macro_avg_at_k"] is None  # math: no labels


def test_four_one_shot_ids_train_stage_1_and_are_named_in_the_results(tiny_model, tmp_path):
    from studyapp.pipelines.ttra.evaluate import run_experiment
    from studyapp.pipelines.ttra.train import load, pick_one_shot, stage_dataset

    options = tiny_options(tiny_model, one_shot_ids="m5,m0,m2,m7", stages="one-shot")
    chosen, rest = pick_one_shot(CHOICES, options)
    assert [t.id for t in chosen] == ["m5", "m0", "m2", "m7"]
    _, tokenizer = load(tiny_model)
    rows = stage_dataset(chosen, "one-shot", options, tokenizer)
    # Every rotation of each chosen choice task: 4 tasks x 4 options.
    assert sorted(rows["task_id"]) == sorted(
        f"{i}#rot{r}" for i in ("m5", "m0", "m2", "m7") for r in range(4)
    )

    results = run_experiment(options, CHOICES, tmp_path)
    assert results["one_shot_tasks"] == ["m5", "m0", "m2", "m7"]
    assert results["one_shot_task"] == "m5"
    assert results["questions"] == 4
    assert {q["id"] for q in results["aligned"]["per_question"]} == {"m1", "m3", "m4", "m6"}
    saved = json.loads((tmp_path / "results.json").read_text())
    assert saved["one_shot_tasks"] == ["m5", "m0", "m2", "m7"]
    assert saved["options"]["one_shot_ids"] == "m5,m0,m2,m7"


def test_an_unknown_one_shot_id_is_named(tiny_model):
    from studyapp.pipelines.ttra.train import pick_one_shot

    with pytest.raises(ValueError, match="'m9', 'zz'"):
        pick_one_shot(CHOICES, tiny_options(tiny_model, one_shot_ids="m1,m9,zz"))


def test_one_case_per_label_is_drawn_with_the_seed():
    from studyapp.pipelines.ttra.train import pick_one_shot

    options = TTRAOptions(model="m", one_shot_per_label=True, seed=5)
    chosen, rest = pick_one_shot(CASES, options)
    assert sorted(t.answer for t in chosen) == sorted({t.answer for t in CASES})
    assert len(rest) == 4 and not {t.id for t in chosen} & {t.id for t in rest}
    assert pick_one_shot(CASES, options)[0] == chosen  # the same seed, the same cases


def test_macro_accuracy_reaches_results_json_for_choice_tasks(tiny_model, tmp_path):
    from studyapp.pipelines.ttra.evaluate import run_experiment, summary

    results = run_experiment(tiny_options(tiny_model, one_shot_id="m0"), CHOICES, tmp_path)
    saved = json.loads((tmp_path / "results.json").read_text())
    for when in ("direct", "aligned"):
        found = saved[when]["per_label"]
        assert set(found["labels"]) == {"A", "B", "C", "D"}
        assert sum(v["questions"] for v in found["labels"].values()) == 7
        mean = sum(v["avg_at_k"] for v in found["labels"].values()) / 4
        assert found["macro_avg_at_k"] == pytest.approx(mean)
        assert saved[when]["macro_avg_at_k"] == found["macro_avg_at_k"]
        assert 0.0 <= found["macro_majority_accuracy"] <= 1.0
    assert "per_label" in summary(results)["aligned"]  # the printed summary keeps it
