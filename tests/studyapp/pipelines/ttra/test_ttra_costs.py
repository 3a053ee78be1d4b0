"""Gradient accumulation keeps the paper's questions per step; training and evaluation have their
own lengths; every stage's time is recorded, and the cost table follows from them."""

import pytest

pytest.importorskip("trl")

from studyapp.pipelines.ttra.collapse import CollapseMonitor  # noqa: E402
from studyapp.pipelines.ttra.tasks import Task  # noqa: E402
from tests.studyapp.pipelines.ttra.test_ttra_pipeline import TASKS, tiny_options  # noqa: E402

pytestmark = pytest.mark.ttra


class Counting(CollapseMonitor):
    """Hears the majority answers of every generation batch: one entry per question in it."""

    def __init__(self):
        super().__init__(threshold=1.0, min_questions=10_000)
        self.batches: list[int] = []

    def update(self, winners):
        self.batches.append(len(winners))
        super().update(winners)


@pytest.mark.parametrize("accumulation", [1, 2])
def test_each_optimizer_step_sees_the_papers_questions_per_step(tiny_model, tmp_path, accumulation):
    from studyapp.pipelines.ttra.train import grpo_config, load, run_stage

    options = tiny_options(
        tiny_model, ttrl_steps=3, ttrl_prompts_per_step=2, gradient_accumulation_steps=accumulation
    )
    config = grpo_config(options, "ttrl", tmp_path / "cfg")
    assert config.generation_batch_size == 2 * options.num_generations
    assert config.per_device_train_batch_size * accumulation == 2 * options.num_generations
    model, tokenizer = load(tiny_model)
    monitor = Counting()
    tasks = [Task(f"q{i}", f"What is {i} + 1?", str(i + 1)) for i in range(8)]
    _, result = run_stage(model, tokenizer, tasks, "ttrl", options, tmp_path, monitor=monitor)
    assert result.steps == 3
    # One vote (one generation batch) per optimizer step, over exactly 2 questions.
    assert monitor.batches == [2, 2, 2]


def test_an_accumulation_that_does_not_divide_the_step_is_refused(tiny_model, tmp_path):
    from studyapp.pipelines.ttra.train import grpo_config

    options = tiny_options(tiny_model, ttrl_prompts_per_step=1, gradient_accumulation_steps=3)
    with pytest.raises(ValueError, match="do not split into 3 micro-batches"):
        grpo_config(options, "ttrl", tmp_path)


def test_training_and_evaluation_lengths_are_separate(tiny_model, tmp_path):
    from studyapp.pipelines.ttra.evaluate import evaluate
    from studyapp.pipelines.ttra.train import grpo_config, load

    options = tiny_options(
        tiny_model, max_completion_length=2, eval_max_completion_length=12, eval_samples=4
    )
    assert grpo_config(options, "one-shot", tmp_path).max_completion_length == 2
    model, tokenizer = load(tiny_model)
    result = evaluate(model, tokenizer, TASKS, options)
    assert result["max_new_tokens"] == 12
    # A random model rarely stops at once: some completion goes past the training limit.
    assert 2 < result["completion_tokens"]["max"] <= 12


def test_every_stage_is_timed_and_the_cost_is_their_ratio(tiny_model, tmp_path):
    from studyapp.pipelines.ttra.evaluate import run_experiment

    results = run_experiment(tiny_options(tiny_model, save_model=False), TASKS, tmp_path)
    times = results["times"]
    assert [t["stage"] for t in times] == ["direct-eval", "one-shot", "ttrl", "aligned-eval"]
    assert all(t["wall_s"] > 0 for t in times)
    assert all(t["gpus"] == 0 and t["gpu_s"] == 0 for t in times)  # a CPU run
    direct = times[0]["wall_s"]
    ttra = sum(t["wall_s"] for t in times[1:])
    assert results["cost"]["relative"] == pytest.approx(ttra / direct)
    assert results["cost"]["measure"] == "wall_s"
    assert [s["time"]["stage"] for s in results["stages"]] == ["one-shot", "ttrl"]
    assert results["direct"]["seconds"] == times[0]["wall_s"]
    from studyapp.pipelines.ttra.prompt_files import prompt_hashes

    assert results["prompts"] == prompt_hashes()  # the built-in prompt files, by sha256


def test_a_prompt_limit_cuts_the_start_of_long_questions(tiny_model):
    from studyapp.pipelines.ttra.sampling import prompt_text
    from studyapp.pipelines.ttra.train import load

    _, tokenizer = load(tiny_model)
    long = Task("long", "Is it an animal? " * 200 + "What is 2 + 3?", "5")
    free = prompt_text(long, tiny_options(tiny_model), tokenizer)
    held = prompt_text(long, tiny_options(tiny_model, max_prompt_length=60), tokenizer)
    count = len(tokenizer(held, add_special_tokens=False)["input_ids"])
    assert len(tokenizer(free, add_special_tokens=False)["input_ids"]) > 60
    assert 50 <= count <= 60
    assert "What is 2 + 3?" in held and held.endswith("<|im_start|>assistant\n")
    assert prompt_text(Task("s", "What is 1 + 1?", "2"), tiny_options(tiny_model), tokenizer) == (
        prompt_text(
            Task("s", "What is 1 + 1?", "2"),
            tiny_options(tiny_model, max_prompt_length=60),
            tokenizer,
        )
    )


def test_a_runs_prompt_directory_reaches_the_model(tiny_model, tmp_path):
    from studyapp.pipelines.ttra.sampling import prompt_text
    from studyapp.pipelines.ttra.train import load

    (tmp_path / "math.txt").write_text("Compute {question} and box it: \\boxed{{}}\n")
    _, tokenizer = load(tiny_model)
    task = Task("s", "What is 1 + 1?", "2")
    text = prompt_text(task, tiny_options(tiny_model, prompts=str(tmp_path)), tokenizer)
    assert "Compute What is 1 + 1? and box it: \\boxed{}" in text
