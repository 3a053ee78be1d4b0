"""Explicit guesses (``{"type": "question", "guess": word}``, no text) read as questions in the
transcripts the TTRA tasks and the LWE judge are built from."""

from __future__ import annotations

from games.twenty_questions.engine import ENGINE
from studyapp.pipelines.lwe.data import transcript
from studyapp.pipelines.ttra.tasks import tasks_from_games

EVENTS = [
    {"type": "question", "seat": 0, "text": "Is it an animal?"},
    {"type": "answer", "seat": 1, "answer": "Yes"},
    {"type": "question", "seat": 0, "guess": "cat"},
    {"type": "question", "seat": 0, "guess": "Dog"},
]


def test_the_log_replays_to_a_game_found_by_an_explicit_guess():
    state = ENGINE.replay(ENGINE.new_config(0, answer="Dog"), EVENTS)
    assert ENGINE.outcome(state)[0]["found"] is True
    assert ENGINE.outcome(state)[0]["questions"] == 3


def test_the_judges_transcript_shows_the_guesses_as_questions():
    assert transcript(EVENTS).splitlines() == [
        "Q1: Is it an animal?",
        "A1: Yes",
        "Q2: Is the word Cat?",
        "Q3: Is the word Dog?",
    ]


def test_the_ttra_task_keeps_the_wrong_guess_and_drops_the_winning_one():
    record = {"game": "twenty-questions", "config": {"answer": "Dog"}, "events": EVENTS}
    (task,) = tasks_from_games([record], candidates=("Cat", "Dog"))
    assert "Q2: Is the word Cat?" in task.question
    assert "Is the word Dog?" not in task.question
    assert task.answer == "Dog"
