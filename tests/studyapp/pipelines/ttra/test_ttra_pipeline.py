"""Both stages, evaluation and the artifacts, end to end on CPU with a tiny model built in the test."""

import json
from pathlib import Path

import pytest

pytest.importorskip("trl")

from studyapp.pipelines.ttra.config import TTRAOptions  # noqa: E402
from studyapp.pipelines.ttra.tasks import Task  # noqa: E402

pytestmark = pytest.mark.ttra

TASKS = [
    Task("a", "What is 2 + 3?", "5"),
    Task("b", "What is 1 + 1?", "2"),
    Task("c", "Pick the even number.", "B", "choice", ("3", "4", "5")),
    Task("d", "What is 4 + 3?", "7"),
    Task("e", "What is 6 - 2?", "4"),
]


def tiny_options(model: str, **overrides) -> TTRAOptions:
    values = dict(
        model=model,
        num_generations=4,
        max_completion_length=8,
        eval_max_completion_length=8,
        one_shot_steps=2,
        ttrl_steps=2,
        ttrl_prompts_per_step=2,
        eval_samples=2,
        gradient_checkpointing=False,
        one_shot_learning_rate=1e-3,
        ttrl_learning_rate=1e-3,
        use_vllm="off",
        seed=1,
    )
    return TTRAOptions(**(values | overrides))


def test_ttra_runs_both_stages_and_writes_its_artifacts(tiny_model, tmp_path):
    from studyapp.pipelines.ttra.evaluate import run_experiment

    reports = []
    results = run_experiment(
        tiny_options(tiny_model, one_shot_id="c"), TASKS, tmp_path, progress=reports.append
    )
    assert results["one_shot_task"] == "c"
    assert [s["stage"] for s in results["stages"]] == ["one-shot", "ttrl"]
    assert [s["steps"] for s in results["stages"]] == [2, 2]
    for key in ("direct", "aligned"):
        assert results[key]["questions"] == 4
        assert results[key]["k"] == 2
        assert 0.0 <= results[key]["avg_at_k"] <= 1.0
        assert "c" not in [q["id"] for q in results[key]["per_question"]]
    assert {(r["stage"], r["step"]) for r in reports} == {
        ("one-shot", 1),
        ("one-shot", 2),
        ("ttrl", 1),
        ("ttrl", 2),
    }
    assert all(set(r) >= {"reward_mean", "majority_agreement", "max_steps"} for r in reports)
    saved = json.loads((tmp_path / "results.json").read_text())
    assert saved["aligned"]["avg_at_k"] == results["aligned"]["avg_at_k"]
    assert (Path(results["model_dir"]) / "config.json").exists()
    assert (Path(results["model_dir"]) / "tokenizer.json").exists()


def test_split_half_aligns_on_one_half_and_scores_both(tiny_model, tmp_path):
    from studyapp.pipelines.ttra.evaluate import run_experiment

    options = tiny_options(tiny_model, experiment="split-half", save_model=False)
    results = run_experiment(options, TASKS, tmp_path)
    seen = {q["id"] for q in results["aligned"]["aligned_half"]["per_question"]}
    held = {q["id"] for q in results["aligned"]["held_out_half"]["per_question"]}
    assert len(seen) == 2 and len(held) == 2 and not seen & held
    assert results["one_shot_task"] not in seen | held
    assert "model_dir" not in results


def test_the_ablation_runs_each_stage_alone_and_both(tiny_model, tmp_path):
    from studyapp.pipelines.ttra.evaluate import run_experiment

    options = tiny_options(tiny_model, experiment="ablation", ttrl_steps=1, one_shot_steps=1)
    results = run_experiment(options, TASKS, tmp_path)
    stages = {v: [s["stage"] for s in e["stages"]] for v, e in results["variants"].items()}
    assert stages == {"one-shot": ["one-shot"], "ttrl": ["ttrl"], "both": ["one-shot", "ttrl"]}
    assert (tmp_path / "model-both" / "model.safetensors").exists()


def test_collapse_during_ttrl_stops_the_stage_with_the_share(tiny_model, tmp_path):
    """A monitor that hears one answer for every question stands in for a collapsed model."""
    import warnings

    from studyapp.pipelines.ttra.collapse import CollapseMonitor, CollapseWarning
    from studyapp.pipelines.ttra.train import load, run_stage

    class Stuck(CollapseMonitor):
        def update(self, winners):
            super().update({key: "appendicitis" for key in winners})

    options = tiny_options(tiny_model, ttrl_steps=4, on_collapse="stop")
    model, tokenizer = load(tiny_model)
    monitor = Stuck(threshold=0.5, min_questions=2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _, result = run_stage(model, tokenizer, TASKS, "ttrl", options, tmp_path, monitor=monitor)
    assert result.stopped_for_collapse
    assert result.steps == 1
    assert result.collapse.answer == "appendicitis" and result.collapse.share == 1.0
    assert any(issubclass(w.category, CollapseWarning) for w in caught)


def test_collapse_only_warns_when_asked_to(tiny_model, tmp_path):
    from studyapp.pipelines.ttra.collapse import CollapseMonitor, CollapseWarning
    from studyapp.pipelines.ttra.train import load, run_stage

    class Stuck(CollapseMonitor):
        def update(self, winners):
            super().update({key: "B" for key in winners})

    options = tiny_options(tiny_model, ttrl_steps=2, on_collapse="warn")
    model, tokenizer = load(tiny_model)
    with pytest.warns(CollapseWarning, match="100.0%"):
        _, result = run_stage(
            model,
            tokenizer,
            TASKS,
            "ttrl",
            options,
            tmp_path,
            monitor=Stuck(threshold=0.5, min_questions=2),
        )
    assert result.steps == 2 and not result.stopped_for_collapse
    assert result.collapse.answer == "B"


def test_the_command_line_runs_an_experiment(tiny_model, tmp_path, capsys):
    from studyapp.pipelines.ttra.__main__ import main

    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(
        "\n".join(json.dumps({"question": t.question, "answer": t.answer}) for t in TASKS[:3]),
        encoding="utf-8",
    )
    code = main(
        [
            "--tasks",
            str(tasks),
            "--out",
            str(tmp_path / "out"),
            "--model",
            tiny_model,
            "--num-generations",
            "2",
            "--max-completion-length",
            "4",
            "--eval-max-completion-length",
            "4",
            "--one-shot-steps",
            "1",
            "--ttrl-steps",
            "1",
            "--ttrl-prompts-per-step",
            "1",
            "--eval-samples",
            "1",
            "--no-gradient-checkpointing",
            "--no-save-model",
            "--use-vllm",
            "off",
        ]
    )
    assert code == 0
    captured = capsys.readouterr()
    assert '"progress"' in captured.err  # progress on stderr, through tqdm
    assert json.loads(captured.out)["questions"] == 2  # stdout is the summary alone
    assert (tmp_path / "out" / "results.json").exists()


def test_quiet_leaves_only_the_summary(tiny_model, tmp_path, capsys):
    from studyapp.pipelines.ttra.__main__ import main

    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(
        "\n".join(json.dumps({"question": t.question, "answer": t.answer}) for t in TASKS[:3]),
        encoding="utf-8",
    )
    argv = ["--tasks", str(tasks), "--out", str(tmp_path / "out"), "--model", tiny_model]
    argv += ["--num-generations", "2", "--max-completion-length", "4", "--one-shot-steps", "1"]
    argv += ["--eval-max-completion-length", "4"]
    argv += ["--ttrl-steps", "1", "--ttrl-prompts-per-step", "1", "--eval-samples", "1"]
    argv += ["--no-gradient-checkpointing", "--no-save-model", "--use-vllm", "off", "--quiet"]
    assert main(argv) == 0
    captured = capsys.readouterr()
    assert '"progress"' not in captured.err
    assert "it/s" not in captured.err and "s/it" not in captured.err  # no progress bar
    assert json.loads(captured.out)["questions"] == 2
    saved = json.loads((tmp_path / "out" / "results.json").read_text())
    assert saved["options"]["progress_bars"] is False


def test_report_to_a_tracker_that_is_missing_is_a_clear_error(tiny_model, tmp_path, capsys):
    import importlib.util

    from studyapp.pipelines.ttra.__main__ import main

    if importlib.util.find_spec("trackio") is not None:
        pytest.skip("trackio is installed here")
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(
        "\n".join(json.dumps({"question": t.question, "answer": t.answer}) for t in TASKS[:3]),
        encoding="utf-8",
    )
    argv = ["--tasks", str(tasks), "--out", str(tmp_path / "out"), "--model", tiny_model]
    argv += ["--report-to", "trackio", "--quiet", "--use-vllm", "off", "--num-generations", "2"]
    argv += [
        "--eval-samples",
        "1",
        "--max-completion-length",
        "2",
        "--eval-max-completion-length",
        "2",
    ]
    assert main(argv) == 2
    assert "trackio" in capsys.readouterr().err


def test_the_command_line_names_a_bad_line(tmp_path, capsys):
    from studyapp.pipelines.ttra.__main__ import main

    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text('{"question": "q", "answer": "1"}\n{"question": 3}\n', encoding="utf-8")
    code = main(["--tasks", str(tasks), "--out", str(tmp_path / "o"), "--model", "unused"])
    assert code == 2
    assert f"{tasks}:2:" in capsys.readouterr().err


async def test_an_aligned_model_answers_as_a_local_provider(tiny_model):
    from games.llm.local import LocalProvider

    provider = LocalProvider.from_spec(f"local:{tiny_model}")
    messages = [{"role": "user", "content": "Is it an animal?"}]
    first = await provider.complete(messages, system="Be brief.", max_tokens=5, sample=3)
    again = await provider.complete(messages, system="Be brief.", max_tokens=5, sample=3)
    assert first.text == again.text
    assert 0 < first.output_tokens <= 5
    assert first.input_tokens > 0
    assert first.input_chars == len("Be brief.") + len("Is it an animal?")
    assert first.output_chars == len(first.text)
    assert first.retries == 0 and first.cached is False
