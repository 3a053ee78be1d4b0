"""The terminal commands: a JSON summary for scripts and a game a person can play."""

from __future__ import annotations

import argparse
import io
import json

import pytest

from games.twenty_questions import cli


def run_simulate(argv: list[str], capsys) -> str:
    parser = argparse.ArgumentParser()
    cli.add_simulate(parser.add_subparsers(dest="game"))
    args = parser.parse_args(["twenty-questions", *argv])
    assert args.func(args) == 0
    return capsys.readouterr().out


def test_simulate_prints_a_json_summary_over_every_word(capsys):
    out = run_simulate(["--questioner", "offline:infogain", "--games", "157", "--json"], capsys)
    summary = json.loads(out)
    assert summary["games"] == 157
    assert summary["found_rate"] == 1.0
    assert summary["mean_reward"] >= 0.28
    assert 5 < summary["mean_questions"] < 10
    assert summary["not_found"] == []


def test_simulate_with_a_few_seeded_games_is_reproducible(capsys):
    argv = ["--questioner", "offline:random", "--games", "5", "--seed", "4", "--json"]
    first = json.loads(run_simulate(argv, capsys))
    second = json.loads(run_simulate(argv, capsys))
    first.pop("seconds"), second.pop("seconds")
    assert first == second
    assert first["games"] == 5 and first["questioner"] == "offline:random"


def test_the_answers_cover_every_word_in_order_for_a_multiple_of_157():
    assert cli.answers_for(314, 0)[156:158] == ["Wrench", "Airplane"]


def test_python_m_games_simulate_twenty_questions(capsys):
    main = pytest.importorskip("games.__main__", reason="the undercover CLI is not there yet")
    argv = ["simulate", "twenty-questions", "--games", "3", "--seed", "1", "--json"]
    assert main.main(argv) == 0
    assert json.loads(capsys.readouterr().out)["games"] == 3


def test_a_person_can_play_and_hears_why_a_question_is_refused():
    lines = iter(["", "Is it an animal?", "Does it start with C?", "Is it a dog?", "Is it a cat?"])
    out = io.StringIO()
    result = cli.play("Cat", "offline:kb", lambda prompt: next(lines), out)
    text = out.getvalue()
    assert "157 words" in text and "Baseball bat" in text
    assert "Not accepted: the question is empty" in text
    assert text.count("\nYes\n") == 2 and "\nInvalid\n" in text and "\nNo\n" in text
    assert result["found"] and result["questions"] == 4
    assert "You found it: Cat, at question 4" in text


def test_a_person_who_quits_is_told_the_word():
    out = io.StringIO()
    result = cli.play("Harp", "offline:kb", lambda prompt: "quit", out)
    assert result["reward"] == 0.0
    assert "The word was Harp" in out.getvalue()
