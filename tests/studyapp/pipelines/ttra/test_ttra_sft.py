"""The SFT baseline (§3.2, §6.2): TRL's SFTTrainer on a file, evaluated as TTRA is, and costed in
table 1's middle row."""

import json
from pathlib import Path

import pytest

pytest.importorskip("trl")

from studyapp.pipelines.ttra.__main__ import main  # noqa: E402

pytestmark = pytest.mark.ttra

TASKS = [
    {"id": f"g{i}", "question": f"What is {i} + {i}?", "answer": str(2 * i)} for i in range(1, 6)
]
SFT = [
    {"question": f"What is {i} + 1?", "response": f"{i} + 1 = {i + 1}. \\boxed{{{i + 1}}}"}
    for i in range(6)
] + [{"prompt": "Q: 2 + 2?\n", "completion": "\\boxed{4}"}]

TINY = [
    "--num-generations", "2", "--max-completion-length", "4", "--eval-max-completion-length", "4",
    "--one-shot-steps", "1", "--ttrl-steps", "1", "--ttrl-prompts-per-step", "2",
    "--eval-samples", "2", "--no-gradient-checkpointing", "--use-vllm", "off",
    "--eval-engine", "hf", "--quiet", "--sft-max-length", "64",
]  # fmt: skip


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_the_sft_experiment_trains_evaluates_and_costs_three_rows(tiny_model, tmp_path, capsys):
    tasks = write_jsonl(tmp_path / "tasks.jsonl", TASKS)
    sft = write_jsonl(tmp_path / "sft.jsonl", SFT)
    out = tmp_path / "out"
    argv = ["--model", tiny_model, "--tasks", str(tasks), "--out", str(out), "--preset",
            "sft-s6.2", "--sft-data", str(sft), "--sft-batch-size", "4", "--sft-epochs", "2",
            "--one-shot-id", "g1", *TINY]  # fmt: skip
    assert main(argv) == 0
    results = json.loads((out / "results.json").read_text())
    assert results["preset"]["name"] == "sft-s6.2" and "§6.2" in results["preset"]["section"]
    assert results["options"]["sft_learning_rate"] == 2e-6  # the preset's, resolved
    assert results["options"]["sft_batch_size"] == 4  # the explicit flag's
    stages = [t["stage"] for t in results["times"]]
    assert stages == ["direct-eval", "sft", "sft-eval", "one-shot", "ttrl", "aligned-eval"]
    sft_time = results["times"][1]
    assert sft_time["wall_s"] > 0 and sft_time["gpu_s"] == 0.0  # a CPU: no GPU-seconds
    assert results["sft"]["stage"]["steps"] == 4  # 7 examples in batches of 4, two epochs
    assert results["sft"]["stage"]["loss"] is not None
    evaluation = results["sft"]["evaluation"]
    assert evaluation["questions"] == 4 and evaluation["k"] == 2
    assert {q["id"] for q in evaluation["per_question"]} == {"g2", "g3", "g4", "g5"}
    rows = {r["method"]: r for r in results["cost_table"]}
    assert list(rows) == [
        "Direct evaluation",
        "Train-before-test (SFT)",
        "Train-before-test (TTRA)",
    ]
    middle = rows["Train-before-test (SFT)"]
    assert middle["wall_s"] == pytest.approx(sft_time["wall_s"] + results["times"][2]["wall_s"])
    assert middle["training_wall_s"] == pytest.approx(sft_time["wall_s"])
    direct = results["times"][0]["wall_s"]
    assert middle["relative"] == pytest.approx(middle["wall_s"] / direct)
    assert results["cost"]["sft_relative"] == pytest.approx(middle["relative"])
    table = (out / "cost_table.md").read_text()
    assert "| Train-before-test (SFT) |" in table and "table 1" in table
    assert (out / "model-sft" / "config.json").exists()
    assert "sft" in json.loads(capsys.readouterr().out)  # the printed summary


def test_sft_alone_and_a_bad_sft_file(tiny_model, tmp_path, capsys):
    tasks = write_jsonl(tmp_path / "tasks.jsonl", TASKS)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"question": "q"}\n')
    out = tmp_path / "out"
    argv = ["--model", tiny_model, "--tasks", str(tasks), "--out", str(out), "--experiment",
            "sft", "--sft-data", str(bad), *TINY]  # fmt: skip
    assert main(argv) == 2
    assert "bad.jsonl:1" in capsys.readouterr().err
    assert not (out / "results.json").exists()

    sft = write_jsonl(tmp_path / "sft.jsonl", SFT)
    argv[argv.index(str(bad))] = str(sft)
    assert main([*argv, "--no-sft-with-ttra", "--sft-batch-size", "7", "--no-save-model"]) == 0
    results = json.loads((out / "results.json").read_text())
    assert [t["stage"] for t in results["times"]] == ["direct-eval", "sft", "sft-eval"]
    assert [r["method"] for r in results["cost_table"]] == [
        "Direct evaluation",
        "Train-before-test (SFT)",
    ]
    assert "aligned" not in results and "model_dir" not in results["sft"]


def test_sft_prompts_its_questions_as_the_evaluation_does(tiny_model, tmp_path):
    from studyapp.pipelines.ttra.config import resolve
    from studyapp.pipelines.ttra.sft import read_sft_data, sft_config, sft_dataset
    from studyapp.pipelines.ttra.tasks import Task
    from studyapp.pipelines.ttra.train import chat_prompt, load

    _, tokenizer = load(tiny_model)
    options = resolve({"model": tiny_model, "sft_data": "x"}, "sft-a2")
    data = write_jsonl(
        tmp_path / "one.jsonl", [{"question": "What is 3 + 1?", "response": "\\boxed{4}"}]
    )
    examples = read_sft_data(data)
    assert examples == [
        {"question": "What is 3 + 1?", "response": "\\boxed{4}", "kind": "math", "options": []}
    ]
    rows = sft_dataset(examples, options, tokenizer)
    expected = chat_prompt(Task("x", "What is 3 + 1?", "4"), options, tokenizer)
    assert rows[0]["prompt"] == expected
    assert rows[0]["completion"] == [{"role": "assistant", "content": "\\boxed{4}"}]
    config = sft_config(options, Path("/tmp/ttra-sft-config"), examples=64)
    assert (config.learning_rate, config.num_train_epochs) == (1e-5, 5.0)
    assert (config.adam_beta1, config.adam_beta2, config.weight_decay) == (0.9, 0.95, 1e-4)
    assert config.per_device_train_batch_size == 16
    assert config.warmup_steps == int(0.05 * 4 * 5)  # 5% of 4 steps an epoch for 5 epochs


def test_common_sft_formats_are_read_and_a_mix_of_forms_is_refused(tiny_model, tmp_path):
    from studyapp.pipelines.ttra.config import resolve
    from studyapp.pipelines.ttra.sft import read_sft_data, sft_dataset
    from studyapp.pipelines.ttra.tasks import TaskFileError
    from studyapp.pipelines.ttra.train import load

    rows = [
        {"query": "What is 2 + 2?", "response": "\\boxed{4}"},  # MetaMathQA
        {"question": "What is 3 + 3?", "answer": "6"},  # Orca-Math
        {"instruction": "Pick.", "output": "A", "options": ["x", "y"]},  # Alpaca-style, choice
    ]
    examples = read_sft_data(write_jsonl(tmp_path / "mixed.jsonl", rows))
    assert [(e["question"], e["response"], e["kind"]) for e in examples] == [
        ("What is 2 + 2?", "\\boxed{4}", "math"),
        ("What is 3 + 3?", "6", "math"),
        ("Pick.", "A", "choice"),
    ]
    talk = [
        {"messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "4"}]}
    ]
    conversations = read_sft_data(write_jsonl(tmp_path / "talk.jsonl", talk * 2))
    _, tokenizer = load(tiny_model)
    options = resolve({"model": tiny_model, "sft_data": "x"}, "sft-s6.2")
    assert sft_dataset(conversations, options, tokenizer).column_names == ["messages"]
    with pytest.raises(TaskFileError, match="one form"):
        read_sft_data(write_jsonl(tmp_path / "both.jsonl", talk + rows))
    with pytest.raises(TaskFileError, match="both.jsonl:1"):
        read_sft_data(write_jsonl(tmp_path / "both.jsonl", [{"query": "q"}]))
    with pytest.raises(TaskFileError, match="no examples"):
        read_sft_data(write_jsonl(tmp_path / "empty.jsonl", []))


def test_a_length_that_leaves_no_example_is_refused_up_front(tiny_model, tmp_path, capsys):
    """TRL drops an example whose response starts past --sft-max-length; with none left it would
    fail at the start of training ("num_samples=0"), after the direct evaluation. The run is
    refused before anything runs, naming the limit and the examples' lengths."""
    from studyapp.pipelines.ttra.train import load

    _, tokenizer = load(tiny_model)
    rows = [
        {"prompt": "Q: " + "how much is two and two " * n + "?\n", "completion": "\\boxed{4}"}
        for n in (8, 12, 20)
    ]
    prompts = [len(tokenizer(text=row["prompt"])["input_ids"]) for row in rows]
    wholes = [len(tokenizer(text=row["prompt"] + row["completion"])["input_ids"]) for row in rows]
    assert min(prompts) > 32
    tasks = write_jsonl(tmp_path / "tasks.jsonl", TASKS)
    sft = write_jsonl(tmp_path / "long.jsonl", rows)
    out = tmp_path / "out"
    argv = ["--model", tiny_model, "--tasks", str(tasks), "--out", str(out), "--experiment",
            "sft", "--sft-data", str(sft), "--no-sft-with-ttra", *TINY, "--sft-max-length", "32"]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "--sft-max-length 32 leaves no SFT example to train on" in err
    assert f"prompts: {min(prompts)} to {max(prompts)} tokens" in err
    assert f"the shortest and the longest: {min(wholes)} to {max(wholes)} tokens" in err
    assert "num_samples" not in err and not (out / "results.json").exists()

    # A limit one of them fits in trains on it (the others are dropped, with a warning).
    short = min(prompts) + 2
    assert main([*argv[:-1], str(short), "--no-save-model"]) == 0
    results = json.loads((out / "results.json").read_text())
    assert results["sft"]["stage"]["steps"] >= 1
