"""Records in the experiment JSONL shape, small enough to check by hand."""

from __future__ import annotations

import pytest


def make_record(**fields):
    """A Twenty Questions record of ``openai:m`` with no usage; ``fields`` override any key."""
    record = {
        "experiment": "exp",
        "game": "twenty-questions",
        "model": "openai:m",
        "setting": "none",
        "sample": 0,
        "round": 0,
        "case": 0,
        "seed": 1,
        "config": {"answer": "Apple", "max_questions": 20},
        "events": [
            {"type": "question", "seat": 0, "text": "Is it a fruit?"},
            {"type": "answer", "seat": 1, "answer": "Yes"},
            {"type": "question", "seat": 0, "text": "Is it an apple?"},
        ],
        "outcome": {"0": {"reward": 0.63, "win": None}},
        "evaluated_seat": 0,
        "reward": 0.63,
        "win": None,
        "questions": 2,
        "usage": {
            "calls": 3,
            "input_tokens": 100,
            "output_tokens": 20,
            "input_chars": 400,
            "output_chars": 80,
            "retries": 1,
            "latency_s": 0.5,
        },
        "policy": None,
        "started_at": "2025-01-01T00:00:00+00:00",
        "finished_at": "2025-01-01T00:01:00+00:00",
    }
    return record | fields


def curve_records(model, rewards):
    """Records from ``{setting: [[round 0 rewards by sample], [round 1 ...], ...]}``."""
    return [
        make_record(model=model, setting=setting, round=t, sample=i, reward=reward)
        for setting, rounds in rewards.items()
        for t, samples in enumerate(rounds)
        for i, reward in enumerate(samples)
    ]


@pytest.fixture
def record():
    return make_record


@pytest.fixture
def curves_from():
    return curve_records
