"""The pairwise JSONL loader and the built-in Twenty Questions dataset."""

from __future__ import annotations

import json

import pytest

from studyapp.pipelines.lwe.data import DatasetError, load_jsonl, twenty_questions_pairs


def write_lines(tmp_path, lines: list[str]):
    path = tmp_path / "pairs.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def row(**changes) -> str:
    data = {"prompt": "2+2?", "response_a": "4", "response_b": "5", "label": "A", **changes}
    return json.dumps({k: v for k, v in data.items() if v is not None})


def test_it_loads_cases_and_resolves_images_next_to_the_file(tmp_path):
    (tmp_path / "cat.png").write_bytes(b"png")
    path = write_lines(tmp_path, [row(id="one"), "", row(label="b", image="cat.png")])
    cases = load_jsonl(path)
    assert [(c.id, c.label) for c in cases] == [("one", "A"), ("line-3", "B")]
    assert cases[1].image == str(tmp_path / "cat.png")
    assert cases[0].swapped().label == "B" and cases[0].swapped().response_a == "5"


def test_it_names_every_bad_line_and_what_is_wrong(tmp_path):
    path = write_lines(
        tmp_path,
        [row(), "{not json", row(label="C"), row(response_b=None), row(image="missing.png"), "[1]"],
    )
    with pytest.raises(DatasetError) as caught:
        load_jsonl(path)
    problems = dict(caught.value.problems)
    assert set(problems) == {2, 3, 4, 5, 6}
    assert "not valid JSON" in problems[2]
    assert "label must be" in problems[3] and "'C'" in problems[3]
    assert "missing field(s) response_b" in problems[4]
    assert "missing.png" in problems[5]
    assert "pairs.jsonl, line 3:" in str(caught.value)


def test_it_rejects_a_repeated_id(tmp_path):
    path = write_lines(tmp_path, [row(id="x"), row(id="x")])
    with pytest.raises(DatasetError, match="line 2: id 'x' already used on line 1"):
        load_jsonl(path)


def game(game_id: int, word: str, reward: float, questions: int) -> dict:
    events = []
    for k in range(questions):
        events += [
            {"type": "question", "seat": 0, "text": f"Question {k} of game {game_id}?"},
            {"type": "answer", "seat": 1, "answer": "No"},
        ]
    return {"id": game_id, "config": {"answer": word}, "events": events, "reward": reward}


def test_the_built_in_dataset_pairs_games_on_one_word_labelled_by_reward():
    records = [
        game(1, "Apple", 0.5, 3),
        game(2, "Apple", 0.0, 20),
        game(3, "apple", 0.5, 3),  # ties game 1: that pair carries no label
        game(4, "Piano", 1.0, 1),  # alone on its word
    ]
    cases = twenty_questions_pairs(records, seed=3)
    assert sorted(c.id for c in cases) == ["apple:1-2", "apple:2-3"]
    for case in cases:
        better, worse = (case.response_a, case.response_b)
        if case.label == "B":
            better, worse = worse, better
        assert "Q4:" not in better and "Q20:" in worse  # the game that found the word won
        assert "'Apple'" in case.prompt


def test_the_built_in_dataset_balances_which_side_is_better():
    records = [game(n, "Apple", n / 10, 20 - n) for n in range(10)]
    labels = [
        case.label for case in twenty_questions_pairs(records, seed=0, max_pairs_per_word=None)
    ]
    assert len(labels) == 45
    assert 10 < labels.count("A") < 35
