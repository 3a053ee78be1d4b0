"""The policy job with an offline model: the statistics writer, its progress and its record."""

from __future__ import annotations

import json

import pytest
from django.core.management import call_command

from games import get_engine
from games.cases import case_config
from games.experience.offline_policy import offline_policy, split_quality
from studyapp.pipelines.models import Job
from studyapp.tables.models import PolicyRecord

# Per game: (question, answer) pairs, then a guess of the secret word (found) or not.
SCRIPTS = [
    ([("Is it alive?", "Yes"), ("Is it bigger than a cat?", "No"), ("Is it red?", "No")], True),
    ([("Is it alive?", "No"), ("Is it bigger than a cat?", "No"), ("Is it red?", "No")], True),
    ([("Is it alive?", "Yes"), ("Is it bigger than a cat?", "Yes"), ("Is it red?", "No")], False),
    ([("is it alive", "No"), ("Is it bigger than a cat?", "Yes")], True),
]


def scripted_games() -> list[dict]:
    engine = get_engine("twenty-questions")
    games = []
    for case, (pairs, found) in enumerate(SCRIPTS):
        config = case_config("twenty-questions", 5, case, max_questions=6)
        events = []
        for question, answer in pairs:
            events.append({"type": "question", "seat": 0, "text": question})
            events.append({"type": "answer", "seat": 1, "answer": answer})
        guess = config["answer"] if found else "zzz-not-a-word"
        if found:
            events.append({"type": "question", "seat": 0, "guess": guess})
        else:
            events += [{"type": "question", "seat": 0, "text": "Is it a tool?"}] + [
                {"type": "answer", "seat": 1, "answer": "Invalid"}
            ]
            while not engine.is_over(engine.replay(config, events)):
                events.append({"type": "question", "seat": 0, "text": "Is it a tool?"})
                events.append({"type": "answer", "seat": 1, "answer": "Invalid"})
        state = engine.replay(config, events)
        assert engine.is_over(state)
        reward = engine.outcome(state)[0]["reward"]
        games.append(
            {
                "game": "twenty-questions",
                "config": config,
                "events": events,
                "evaluated_seat": 0,
                "seat": 0,
                "reward": reward,
            }
        )
    return games


def test_the_writer_ranks_questions_by_how_evenly_they_split_the_words():
    text = offline_policy("twenty-questions", scripted_games())
    assert "From 4 games: the word was found in 3" in text
    evenly = text[text.index("split the words most evenly") :].splitlines()[0]
    # "Is it alive?" (spelled two ways) and the size question each split 2 to 2, the best there
    # is; "Is it red?" was always No, so it told nothing.
    assert '"Is it alive?" (Yes 2, No 2)' in evenly
    assert '"Is it bigger than a cat?" (Yes 2, No 2)' in evenly
    assert '"Is it red?" (Yes 0, No 3)' in text[text.index("told little") :]
    assert split_quality(2, 2) == 1.0
    assert offline_policy("twenty-questions", scripted_games()) == text  # deterministic


def test_a_rule_policy_needs_no_games():
    text = offline_policy("twenty-questions", [], rules_only=True)
    assert "157 possible words" in text and "8 well-chosen questions" in text
    assert "clues" in offline_policy("undercover", [], rules_only=True)


@pytest.mark.django_db
@pytest.mark.parametrize(("mode", "steps"), [("experience", 1), ("cumulative", 4)])
def test_an_offline_policy_job_runs_end_to_end_and_stores_a_record(tmp_path, mode, steps):
    results = tmp_path / "games.jsonl"
    results.write_text("\n".join(json.dumps(g) for g in scripted_games()) + "\n")
    call_command(
        "run_job", "policy",
        "--param", "model=offline:kb",
        "--param", f"mode={mode}",
        "--param", f"results={results}",
        "--param", "name=tq-offline",
        "--wait",
    )  # fmt: skip
    job = Job.objects.get()
    assert job.status == Job.Status.SUCCEEDED, job.error
    assert job.progress == 1.0
    record = PolicyRecord.latest("tq-offline")
    assert (record.version, record.kind, record.game) == (1, mode, "twenty-questions")
    assert record.text == offline_policy("twenty-questions", scripted_games())
    assert "offline statistics writer (offline:kb)" in record.source
    assert record.job_id == job.pk  # the tables app keeps the job's id (no foreign key up)
    assert (job.artifact_dir / "policy.txt").read_text() == record.text
    assert job.cost["calls"] == 0
    assert job.result["version"] == 1 and job.result["policy"] == record.pk


@pytest.mark.django_db
def test_a_policy_stays_when_the_job_that_made_it_is_deleted():
    call_command(
        "run_job", "policy", "--param", "model=offline:infogain", "--param", "mode=rule",
        "--param", "name=tq-rules", "--wait",
    )  # fmt: skip
    Job.objects.all().delete()
    record = PolicyRecord.latest("tq-rules")
    assert record.kind == "rule" and record.job_id is None


@pytest.mark.django_db
def test_an_offline_rule_policy_job_needs_no_games():
    call_command(
        "run_job", "policy", "--param", "model=offline:infogain", "--param", "mode=rule",
        "--param", "name=tq-rules", "--wait",
    )  # fmt: skip
    job = Job.objects.get()
    assert job.status == Job.Status.SUCCEEDED, job.error
    assert PolicyRecord.latest("tq-rules").kind == "rule"
