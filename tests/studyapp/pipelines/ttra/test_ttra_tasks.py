import json

import pytest

from studyapp.pipelines.ttra.tasks import (
    Task,
    TaskFileError,
    load_games,
    load_tasks,
    rotations,
    tasks_from_games,
)


def write_lines(path, lines):
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_it_reads_math_and_choice_tasks(tmp_path):
    path = write_lines(
        tmp_path / "t.jsonl",
        [
            json.dumps({"question": "2+3?", "answer": r"\boxed{5}"}),
            "",
            json.dumps({"question": "GSM", "answer": "so 3 * 4 = 12\n#### 12", "id": "g1"}),
            json.dumps({"question": "Even?", "options": ["3", "4"], "answer": "4"}),
        ],
    )
    tasks = load_tasks(path)
    assert [(t.id, t.answer, t.kind) for t in tasks] == [
        ("line-1", "5", "math"),
        ("g1", "12", "math"),
        ("line-4", "B", "choice"),
    ]
    assert "\\boxed{}" in tasks[0].prompt()
    assert "A. 3\nB. 4" in tasks[2].prompt()


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ("{not json", "not valid JSON"),
        ('{"question": "q"}', "missing field(s) answer"),
        ('["q", "a"]', "expected a JSON object"),
        ('{"question": "", "answer": "1"}', "non-empty string"),
        ('{"question": "q", "answer": "Z", "options": ["a", "b"]}', "neither an option letter"),
        ('{"question": "q", "answer": "1", "kind": "essay"}', "'kind' must be one of"),
    ],
)
def test_a_bad_line_is_named_by_number(tmp_path, bad, message):
    path = write_lines(tmp_path / "t.jsonl", [json.dumps({"question": "ok", "answer": "1"}), bad])
    with pytest.raises(TaskFileError) as err:
        load_tasks(path)
    assert f"{path}:2:" in str(err.value)
    assert message in str(err.value)


def test_duplicate_ids_are_rejected(tmp_path):
    line = json.dumps({"question": "q", "answer": "1", "id": "x"})
    with pytest.raises(TaskFileError, match=r":2: duplicate id 'x'"):
        load_tasks(write_lines(tmp_path / "t.jsonl", [line, line]))


def test_rotations_move_the_label_with_its_option():
    task = Task("m", "Which is prime?", "C", "choice", ("4", "6", "7", "8"))
    variants = rotations(task)
    assert len(variants) == 4
    for v in variants:
        assert v.options[ord(v.answer) - ord("A")] == "7"
    assert sorted(v.answer for v in variants) == ["A", "B", "C", "D"]
    assert len({v.id for v in variants}) == 4


def test_a_math_task_has_no_rotations():
    task = Task("m", "1+1?", "2")
    assert rotations(task) == [task]


CANDIDATES = ("Apple", "Baseball", "Baseball bat", "Cat")


def game(answer, *pairs, final=None):
    events = []
    for question, reply in pairs:
        events.append({"type": "question", "seat": 0, "text": question})
        events.append({"type": "answer", "seat": 1, "answer": reply})
    if final:
        events.append({"type": "question", "seat": 0, "text": final})
    return {"game": "twenty-questions", "config": {"answer": answer}, "events": events}


def test_a_game_becomes_its_transcript_without_the_winning_guess():
    record = game(
        "baseball bat",
        ("Is it sports gear?", "Yes"),
        ("Is it a baseball?", "No"),
        final="Is it a baseball bat?",
    )
    (task,) = tasks_from_games([record], candidates=CANDIDATES)
    assert task.answer == "Baseball bat"
    assert task.kind == "word"
    assert "Is it a baseball?" in task.question
    assert "Is it a baseball bat?" not in task.question
    assert "Baseball bat, Cat" in task.question


def test_a_lost_game_keeps_every_question():
    (task,) = tasks_from_games(
        [game("Cat", ("Is it alive?", "Yes"), ("Is it a fish?", "No"))],
        candidates=CANDIDATES,
        list_candidates=False,
    )
    assert "Is it a fish?" in task.question
    assert "Apple" not in task.question


def test_an_answer_outside_the_candidates_is_rejected():
    with pytest.raises(TaskFileError, match="game 0: answer 'Dog' is not a candidate"):
        tasks_from_games([game("Dog", ("Is it alive?", "Yes"))], candidates=CANDIDATES)


def test_the_game_files_errors_name_the_line(tmp_path):
    path = write_lines(
        tmp_path / "games.jsonl",
        [json.dumps(game("Cat", ("Alive?", "Yes"))), json.dumps(game("Cat", final="Is it a cat?"))],
    )
    with pytest.raises(TaskFileError, match=r"games.jsonl:2: no questions left"):
        load_games(path, candidates=CANDIDATES)


def test_the_study_candidates_are_the_default():
    (task,) = tasks_from_games([game("apple", ("Is it food?", "Yes"))])
    assert task.answer == "Apple"
    assert task.question.count(",") >= 150


def test_prompt_files_override_the_built_in_ones_by_name(tmp_path):
    import hashlib

    from studyapp.pipelines.ttra.prompt_files import load_prompts, prompt_hashes

    (tmp_path / "math.txt").write_text("Solve: {question}\nPut it in \\boxed{{}}.\n")
    templates = load_prompts(tmp_path)
    task = Task("t", "What is 2 + 3?", "5")
    assert task.prompt(templates) == "Solve: What is 2 + 3?\nPut it in \\boxed{}."
    assert task.prompt() != task.prompt(templates)  # the built-in text without the directory
    choice = Task("c", "Pick.", "A", "choice", ("x", "y"))
    assert choice.prompt(templates) == choice.prompt()  # names not in the directory: built in
    hashes, built_in = prompt_hashes(tmp_path), prompt_hashes()
    assert hashes["math"] == hashlib.sha256((tmp_path / "math.txt").read_bytes()).hexdigest()
    assert hashes["math"] != built_in["math"] and hashes["choice"] == built_in["choice"]
    assert set(built_in) == {"math", "choice", "word", "label"}


def test_an_unknown_prompt_file_name_is_refused(tmp_path):
    from studyapp.pipelines.ttra.prompt_files import PromptDirError, load_prompts

    (tmp_path / "maths.txt").write_text("{question}")
    with pytest.raises(PromptDirError, match=r"maths\.txt.*math\.txt"):
        load_prompts(tmp_path)
    with pytest.raises(PromptDirError, match="not a directory"):
        load_prompts(tmp_path / "nowhere")


def test_prompt_files_go_through_the_one_loader_set_first_then_the_directory(tmp_path):
    from games.llm.prompts import PromptSetError
    from studyapp.pipelines.ttra.prompt_files import CATALOG, load_prompts, prompts_in_force

    assert CATALOG.style == "format"  # TTRA's {name} files, read by games.llm.prompts.Catalog
    gsm8k = load_prompts(prompt_set="a1-gsm8k")
    assert gsm8k["math"].startswith("Q: {question}") and gsm8k["choice"] == load_prompts()["choice"]
    (tmp_path / "math.txt").write_text("Mine: {question}\n")
    chosen = prompts_in_force(tmp_path, "a1-gsm8k")
    assert chosen.texts["math"] == "Mine: {question}"  # the directory over the set
    assert chosen.files["math"] == tmp_path / "math.txt"
    assert chosen.overridden == ("math",)
    (tmp_path / "math.txt").write_text("Solve {problem}\n")  # a slot the code never fills
    with pytest.raises(PromptSetError, match=r"missing \{question\}; unknown \{problem\}"):
        load_prompts(tmp_path)
    with pytest.raises(PromptSetError, match="no prompt set 'b2'"):
        load_prompts(prompt_set="b2")
