"""Stage 1's example by preset: MATH500's among level-1 problems, AIME's from an AIME 2023 file,
GSM8K's from its training split; A.1's prompts as plain text; sft-a2 at s1's length; and a dry run
that prints all of it without loading a model."""

import json

import pytest

from studyapp.pipelines.ttra.__main__ import main
from studyapp.pipelines.ttra.config import resolve
from studyapp.pipelines.ttra.one_shot import parse_source, select
from studyapp.pipelines.ttra.tasks import load_tasks


def write(path, records):
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def math500(tmp_path):
    return write(
        tmp_path / "math500.jsonl",
        [
            {
                "id": f"p{i}",
                "question": f"What is {i} + 1?",
                "answer": str(i + 1),
                "level": 1 + i % 5,
            }
            for i in range(20)
        ],
    )


def dry(capsys, *argv):
    code = main(["--model", "m", "--dry-run", *argv])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return json.loads(captured.out)


def test_the_b_preset_draws_a_level_one_problem_and_the_seed_moves_it(math500):
    tasks = load_tasks(math500)
    levels = {t.id: t.value_of("level") for t in tasks}
    picks = set()
    for seed in range(12):
        chosen = select(tasks, resolve({"model": "m", "seed": seed}, "b"))
        assert [levels[t.id] for t in chosen.chosen] == ["1"]
        assert chosen.candidates == 4 and len(chosen.pool) == 19
        picks.add(chosen.chosen[0].id)
    assert len(picks) > 1  # drawn with the seed, not always the first


def test_an_aime_file_needs_its_aime_2023_file_and_the_id_is_looked_up_there(tmp_path):
    aime = write(
        tmp_path / "aime2425.jsonl",
        [{"id": f"2024-{i}", "question": f"q{i}", "answer": str(i)} for i in range(6)],
    )
    aime23 = write(tmp_path / "aime2023.jsonl",
                   [{"id": f"2023-I-{i}", "question": f"old {i}", "answer": str(i)} for i in range(3)])  # fmt: skip
    tasks = load_tasks(aime)
    with pytest.raises(ValueError, match="AIME 2023"):
        select(tasks, resolve({"model": "m"}, "b"))  # no level field: refused, not drawn from 2024
    options = resolve(
        {"model": "m", "one_shot_from": f"file:{aime23}", "one_shot_id": "2023-I-2"}, "b"
    )
    chosen = select(tasks, options)
    assert [t.id for t in chosen.chosen] == ["2023-I-2"]
    assert len(chosen.pool) == 6  # all of AIME 2024 and 2025 stay for TTRL and evaluation
    with pytest.raises(ValueError, match="2024-1"):
        select(
            tasks, resolve({"model": "m", "one_shot_from": str(aime23), "one_shot_id": "2024-1"})
        )


def test_gsm8k_draws_from_its_training_split_which_never_reaches_evaluation(tmp_path):
    both = write(
        tmp_path / "gsm8k.jsonl",
        [{"id": f"train-{i}", "question": f"t{i}", "answer": str(i), "split": "train"} for i in range(5)]
        + [{"id": f"test-{i}", "question": f"e{i}", "answer": str(i), "split": "test"} for i in range(7)],
    )  # fmt: skip
    chosen = select(load_tasks(both), resolve({"model": "m", "seed": 3}, "a1-gsm8k"))
    assert chosen.chosen[0].id.startswith("train-") and chosen.candidates == 5
    assert sorted(t.id for t in chosen.pool) == sorted(f"test-{i}" for i in range(7))
    named = resolve({"model": "m", "one_shot_id": "train-4"}, "a1-gsm8k")
    assert [t.id for t in select(load_tasks(both), named).chosen] == ["train-4"]
    with pytest.raises(ValueError, match="test-1"):  # a test question is no training example
        select(load_tasks(both), resolve({"model": "m", "one_shot_id": "test-1"}, "a1-gsm8k"))
    plain = write(tmp_path / "plus.jsonl", [{"question": f"q{i}", "answer": "1"} for i in range(4)])
    fallback = select(load_tasks(plain), resolve({"model": "m"}, "a1-gsm8k"))
    assert "no record has a split field" in fallback.source and len(fallback.pool) == 3


def test_a_malformed_source_is_refused_before_anything_runs():
    for bad in ("where:level", "split:", "somewhere"):
        with pytest.raises(ValueError, match="one-shot-from"):
            resolve({"model": "m", "one_shot_from": bad})
    assert parse_source(None).kind == "tasks"


def test_the_a1_presets_prompt_in_plain_text_as_printed(capsys):
    for name in ("a1-gsm8k", "a1-mathqa"):
        shown = dry(capsys, "--preset", name)["resolved"]
        assert shown["chat_template"] is False and shown["system_message"] is None
        assert shown["max_completion_length"] == 1024
    mathqa = dry(capsys, "--preset", "a1-mathqa")["resolved"]
    assert mathqa["prompts"]["choice"].startswith("Let's think step by step and output the final")
    assert "enclosed in boxed{}." in mathqa["prompts"]["choice"]  # A.1 prints no backslash
    assert mathqa["one_shot"]["from"] == "tasks"
    gsm = dry(capsys, "--preset", "a1-gsm8k")["resolved"]
    assert gsm["prompts"]["math"].startswith("Q: {question}\nLet's think step by step")
    assert gsm["one_shot"]["from"] == "split:train"
    b = dry(capsys, "--preset", "b")["resolved"]
    assert b["chat_template"] is True and b["system_message"] == "You are a helpful assistant."
    assert b["one_shot"]["from"] == "where:level=1"


def test_a_dry_run_needs_no_model_tasks_or_output(capsys):
    assert main(["--preset", "a1-mathqa", "--dry-run"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["options"]["preset"] == "a1-mathqa" and shown["options"]["model"] == "(not given)"
    assert shown["options"]["use_chat_template"] is False
    assert main(["--preset", "sft-a2", "--dry-run"]) == 0  # an SFT preset without its file too
    assert json.loads(capsys.readouterr().out)["options"]["sft_max_length"] == 32768


def test_sft_a2_trains_at_s1s_length_and_says_it_is_assumed(capsys):
    shown = dry(capsys, "--preset", "sft-a2", "--sft-data", "s.jsonl")
    assert shown["options"]["sft_max_length"] == 32768
    assert shown["resolved"]["sft_max_length"] == 32768
    assert any("sft_max_length" in a for a in shown["resolved"]["preset"]["assumed"])
    assert (
        dry(capsys, "--preset", "sft-s6.2", "--sft-data", "s.jsonl")["options"]["sft_max_length"]
        == 4096
    )


def test_a_dry_run_with_tasks_names_the_example_it_would_take(capsys, math500, tmp_path):
    shown = dry(capsys, "--preset", "b", "--tasks", str(math500), "--seed", "5")["resolved"]
    level_one = {f"p{i}" for i in range(0, 20, 5)}
    assert set(shown["one_shot"]["chosen"]) <= level_one and shown["one_shot"]["candidates"] == 4
    assert shown["one_shot"]["pool"] == 19
    aime = write(
        tmp_path / "a.jsonl", [{"question": "q", "answer": "1"}, {"question": "r", "answer": "2"}]
    )
    assert main(["--model", "m", "--dry-run", "--preset", "b", "--tasks", str(aime)]) == 2
    assert "AIME 2023" in capsys.readouterr().err
    with pytest.raises(SystemExit):  # a real run still needs tasks and --out
        main(["--model", "m", "--preset", "b"])


@pytest.mark.parametrize("name", ["one_shot", "mimic", "figure_runs", "model_figures"])
def test_the_new_modules_docstring_examples_hold(name):
    import doctest
    import importlib

    failures, tried = doctest.testmod(importlib.import_module(f"studyapp.pipelines.ttra.{name}"))
    assert tried > 0 and failures == 0


def test_aime_runs_are_scored_per_year_in_the_figures(tmp_path):
    from studyapp.pipelines.ttra.paper_figures import draw_all

    def evaluation(values):
        return {"avg_at_k": sum(values.values()) / len(values), "macro_avg_at_k": None,
                "per_question": [{"id": k, "avg": v} for k, v in values.items()]}  # fmt: skip

    run = tmp_path / "runs" / "aime" / "base"
    run.mkdir(parents=True)
    direct = {"2024-I-1": 0.0, "2024-I-2": 0.5, "2025-I-1": 1.0}
    aligned = {"2024-I-1": 0.5, "2024-I-2": 0.5, "2025-I-1": 0.25}
    run.joinpath("results.json").write_text(json.dumps(
        {"experiment": "ttra", "direct": evaluation(direct), "aligned": evaluation(aligned)}))  # fmt: skip
    out = tmp_path / "out"
    draw_all(tmp_path / "runs", out, splits={"aime": ["2024", "2025"]})
    import csv

    with (out / "figure7.csv").open() as handle:
        rows = {r["benchmark"]: r for r in csv.DictReader(handle)}
    assert set(rows) == {"aime2024", "aime2025"}
    assert float(rows["aime2024"]["direct"]) == 25.0 and float(rows["aime2025"]["ttra"]) == 25.0
