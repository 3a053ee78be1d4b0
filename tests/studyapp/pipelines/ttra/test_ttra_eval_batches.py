"""Evaluation at the floor: every sample of as many questions as fit in one generate call, sized
from free GPU memory (a fixed size on a CPU); the engine named; a preset run from the command line;
transformers' current argument names."""

import json
import warnings
from pathlib import Path
from types import SimpleNamespace

import pytest

pytest.importorskip("trl")

from studyapp.pipelines.ttra.config import TTRAOptions  # noqa: E402
from studyapp.pipelines.ttra.tasks import Task  # noqa: E402

pytestmark = pytest.mark.ttra

TASKS = [Task(f"q{i}", "What is " + "1 + " * (i % 5) + f"{i}?", str(i + i % 5)) for i in range(11)]


def tiny_options(model: str, **overrides) -> TTRAOptions:
    values = dict(
        model=model,
        eval_max_completion_length=5,
        eval_samples=3,
        use_vllm="off",
        eval_engine="hf",
        progress_bars=False,
        seed=2,
    )
    return TTRAOptions(**(values | overrides))


def test_batches_take_the_longest_prompts_first_and_fill_the_memory():
    from studyapp.pipelines.ttra.sampling import plan_batches, sequence_bytes

    lengths = [10, 40, 20, 30]
    assert plan_batches(lengths, size=3) == [[1, 3, 2], [0]]
    config = SimpleNamespace(
        num_hidden_layers=16,
        num_attention_heads=16,
        num_key_value_heads=16,
        hidden_size=1024,
        intermediate_size=2048,
        vocab_size=32000,
    )
    per_seq = sequence_bytes(config, 300, 256, 2)
    # The key-value cache dominates: 2 x 16 layers x 1024 x 556 tokens x 2 bytes.
    assert per_seq > 2 * 16 * 1024 * 556 * 2
    budget = 130 * per_seq  # room for 16 questions x 8 samples, not 17

    def fits(questions, longest):
        return questions * 8 * sequence_bytes(config, longest, 256, 2) <= budget

    batches = plan_batches([300] * 20, fits=fits)
    assert [len(b) for b in batches] == [16, 4]
    assert plan_batches([10**9], fits=lambda n, longest: False) == [[0]]  # never fewer than one


def test_auto_on_a_cpu_takes_a_fixed_number_of_questions(tiny_model):
    from studyapp.pipelines.ttra.sampling import CPU_EVAL_QUESTIONS, eval_batches
    from studyapp.pipelines.ttra.train import load

    model, _ = load(tiny_model)
    batches = eval_batches(model, list(range(11)), tiny_options(tiny_model))
    assert [len(b) for b in batches] == [CPU_EVAL_QUESTIONS, 11 - CPU_EVAL_QUESTIONS]
    fixed = eval_batches(model, list(range(11)), tiny_options(tiny_model, eval_batch_questions=4))
    assert [len(b) for b in fixed] == [4, 4, 3]


def test_sorted_batches_give_each_question_its_own_samples(tiny_model):
    """Batches run longest prompt first; each question's completions still come back in the
    task order, k of them."""
    from studyapp.pipelines.ttra.evaluate import evaluate
    from studyapp.pipelines.ttra.train import load

    model, tokenizer = load(tiny_model)
    result = evaluate(model, tokenizer, TASKS, tiny_options(tiny_model))
    assert [q["id"] for q in result["per_question"]] == [t.id for t in TASKS]
    assert all(len(q["answers"]) == 3 for q in result["per_question"])
    assert result["engine"] == "hf"
    assert 1 <= result["completion_tokens"]["max"] <= 5


def test_a_preset_run_from_the_command_line_records_its_learning_rates(tiny_model, tmp_path):
    from studyapp.pipelines.ttra.__main__ import main

    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(
        "".join(json.dumps({"id": t.id, "question": t.question, "answer": t.answer}) + "\n"
                for t in TASKS[:4])
    )  # fmt: skip
    out = tmp_path / "out"
    argv = ["--model", tiny_model, "--tasks", str(tasks), "--out", str(out), "--preset",
            "a1-mathqa", "--num-generations", "2", "--max-completion-length", "4",
            "--eval-max-completion-length", "4", "--one-shot-steps", "1", "--ttrl-steps", "1",
            "--ttrl-prompts-per-step", "1", "--eval-samples", "2", "--no-gradient-checkpointing",
            "--use-vllm", "off", "--eval-batch-questions", "auto", "--quiet",
            "--no-save-model"]  # fmt: skip
    assert main(argv) == 0
    results = json.loads((out / "results.json").read_text())
    assert results["preset"] == {"name": "a1-mathqa", "section": "§3.1, appendix A.1 (MathQA)"}
    options = results["options"]
    assert (options["one_shot_learning_rate"], options["ttrl_learning_rate"]) == (1e-6, 5e-8)
    assert options["max_completion_length"] == 4  # the flag over the preset's 1,024
    assert options["eval_batch_questions"] == "auto"
    assert results["engines"] == {"rollouts": "hf", "evaluation": "hf"}  # no GPU here
    assert (out / "cost_table.md").exists()


def test_the_trainer_configs_use_transformers_current_names():
    from trl import GRPOConfig

    from studyapp.pipelines.ttra.train import checkpointing_args, grpo_config

    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        config = grpo_config(
            TTRAOptions(model="m", num_generations=2), "ttrl", Path("/tmp/ttra-names")
        )
    assert config.gradient_checkpointing is True  # the switch itself still reaches the trainer
    names = checkpointing_args(True, GRPOConfig)
    assert list(names) in (["activation_checkpointing"], ["gradient_checkpointing"])
