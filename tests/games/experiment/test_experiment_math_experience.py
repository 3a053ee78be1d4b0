"""The math testbed's earlier games draw their problems from --math-experience-tasks when given,
so the test problems need not be seen (and judged) before the test; without it they come from the
test file, and reproduce's table notes say so."""

import json

import pytest

from analysis.reproduce import block_notes
from games.experiment.runner import Runner
from games.experiment.spec import ExperimentSpec
from games.mathtest import load_tasks

SAMPLE = "games/mathtest/sample_tasks.jsonl"


@pytest.fixture
def other_problems(tmp_path):
    path = tmp_path / "aime2024.jsonl"
    rows = [{"id": f"x{n}", "question": f"What is {n} plus {n}?", "answer": str(2 * n)}
            for n in range(1, 6)]  # fmt: skip
    path.write_text("\n".join(json.dumps(row) for row in rows))
    return path


def spec(**values):
    return ExperimentSpec(game="math", model="openai:m", setting="experience-policy",
                          tasks=SAMPLE, cases=2, samples=1, **values)  # fmt: skip


def test_earlier_games_come_from_the_experience_file_when_one_is_given(tmp_path, other_problems):
    runner = Runner(out=tmp_path / "out.jsonl")
    chosen = spec(experience_tasks=str(other_problems))
    drawn = {runner.warmup_config(chosen, 0, i, 0)["question"] for i in range(5)}
    assert drawn == {t.question for t in load_tasks(other_problems)}
    tests = {t.question for t in load_tasks(SAMPLE)}
    assert {runner.warmup_config(spec(), 0, i, 0)["question"] for i in range(5)} <= tests


def test_the_table_notes_name_experience_drawn_from_the_test_problems(other_problems):
    def record(experience_tasks):
        return {"game": "math", "setting": "experience-policy", "model": "openai:m",
                "experience_games": 5, "experience_tasks": experience_tasks, "config": {},
                "reward": 1.0}  # fmt: skip

    [leaky], _ = block_notes([record(None)])
    assert "earlier games drawn from the test problems" in leaky["note"]
    [clean], _ = block_notes([record(str(other_problems))])
    assert clean["note"] == ""


def test_experience_tasks_are_refused_outside_math():
    with pytest.raises(ValueError, match="experience_tasks is for the math testbed only"):
        ExperimentSpec(game="undercover", model="offline:descriptor", experience_tasks=SAMPLE)
