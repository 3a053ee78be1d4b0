"""The math testbed: task files, the judge, and problems played by the runner over HTTP."""

import json
from pathlib import Path

import pytest

from games.experiment.runner import run_experiment
from games.experiment.spec import ExperimentSpec
from games.llm.providers import ProviderConfig, close_clients
from games.mathtest import JUDGE, TaskFileError, is_correct, load_tasks
from games.mathtest.judge import normalise
from tests.fakes.llm_server import last_user_text, prompt_text

SAMPLE = Path("games/mathtest/sample_tasks.jsonl")


def test_the_shipped_sample_loads_in_ttras_format():
    tasks = load_tasks(SAMPLE)
    assert len(tasks) == 8 and tasks[-1].kind == "choice" and tasks[-1].answer == "C"
    assert tasks[0].kind == "math" and tasks[0].answer == "20"


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"answer": "3"}', r"missing field\(s\) question"),
        ('{"question": "q", "answer": true}', "'answer' must be"),
        ('{"question": "q", "answer": "E", "options": ["1", "2"]}', "neither an option letter"),
        ('{"question": "q", "answer": "1", "kind": "essay"}', "'kind' must be one of"),
        ("not json", "not valid JSON"),
    ],
)
def test_a_bad_line_is_named(tmp_path, line, message):
    path = tmp_path / "t.jsonl"
    path.write_text('{"question": "fine", "answer": "1"}\n' + line + "\n")
    with pytest.raises(TaskFileError, match=f"t.jsonl:2: .*{message}"):
        load_tasks(path)


def test_the_judge():
    assert is_correct("204", "204") and not is_correct("205", "204")
    assert is_correct("\\boxed{0204}", "204") and not is_correct(None, "1")
    assert is_correct("(B)", "B", "choice") and not is_correct("A train", "B", "choice")
    assert normalise(" 1,000. ") == "1000"
    if JUDGE == "math-verify":
        assert is_correct("0.5", "\\frac{1}{2}")
    assert not is_correct("1/2", "1/3", judge="exact") and is_correct("1/2", "1/2", judge="exact")


def solver(body):
    """Right on problems s1-s4, wrong on the rest; a policy from the reflections."""
    last = last_user_text(body)
    if "Look back at this game" in last:
        return "<answer>Check the arithmetic twice.</answer>"
    if "From the rules and these games" in last:
        return "<answer>Policy: check the arithmetic twice.</answer>"
    right = {"How many steps": "20", "remainder when 7": "9", "consecutive odd": "45",
             "both are red": "2/15"}  # fmt: skip
    for phrase, answer in right.items():
        if phrase in last:
            return f"Worked it out. <answer>{answer}</answer>"
    return "<answer>1</answer>"


async def test_both_settings_score_every_problem_and_store_the_judge(llm_server, tmp_path):
    llm_server.responder = solver
    config = ProviderConfig(api_key="t", base_url=llm_server.openai_base_url)
    specs = [
        ExperimentSpec(
            game="math",
            model="openai-compatible:m",
            setting=s,
            tasks=str(SAMPLE),
            cases=8,
            samples=1,
            experience_games=5,
        )  # fmt: skip
        for s in ("none", "experience-policy")
    ]
    out = tmp_path / "math.jsonl"
    try:
        records = await run_experiment(specs, out, config_for=lambda s: config, progress=False)
    finally:
        await close_clients()
    assert len(records) == 16
    none = [r for r in records if r["setting"] == "none"]
    assert [r["reward"] for r in sorted(none, key=lambda r: r["round"])] == [1] * 4 + [0] * 4
    policy = {r["policy"] for r in records if r["setting"] == "experience-policy"}
    assert policy == {"Policy: check the arithmetic twice."}
    prompts = [prompt_text(r.body) for r in llm_server.requests]
    derive = [p for p in prompts if "From the rules and these games" in p]
    assert len(derive) == 1 and derive[0].count("Earlier game") == 5
    assert sum("Look back at this game" in p for p in prompts) == 5
    first = json.loads(out.read_text().splitlines()[0])
    assert first["events"][0]["judge"] == JUDGE and first["config"]["task_id"].startswith("s")


def test_a_math_spec_needs_a_readable_task_file(tmp_path):
    with pytest.raises(ValueError, match="needs a task file"):
        ExperimentSpec(game="math", model="openai:gpt-4o")
    with pytest.raises(TaskFileError, match="no tasks|No such file"):
        ExperimentSpec(game="math", model="openai:gpt-4o", tasks=str(tmp_path / "none.jsonl"))
    with pytest.raises(ValueError, match="no shipped human policy"):
        ExperimentSpec(
            game="math", model="openai:gpt-4o", tasks=str(SAMPLE), setting="human-policy"
        )
