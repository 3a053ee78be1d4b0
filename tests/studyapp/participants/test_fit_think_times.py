"""Issue 42: ``manage.py fit_think_times`` fits a blinded study's think-time bounds per kind of
move to the moves people made in a pilot or an earlier study, and writes them into a study file.

The log is built with known move times: people's clues drawn log-normal around 12 s, their
ballots around 4 s (counted from the vote's opening, not the ballot before), agents' and the
table's moves at other paces that must not count."""

from __future__ import annotations

import io
import math
import random
import tomllib
from datetime import timedelta
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.utils import timezone

from studyapp.participants import studyfile
from studyapp.participants.models import Participant, Round, Study
from studyapp.participants.think_fit import fit, move_seconds
from studyapp.tables import think
from studyapp.tables.models import PERSON_ACTOR, Table, Turn

CLUE_MEDIAN, VOTE_MEDIAN, SPREAD = 12.0, 4.0, 0.5


def pilot(study: Study, tables: int = 6, is_pilot: bool = True, seed: int = 0) -> None:
    """Tables where seat 0 is a person of ``study`` and seats 1-2 agents: three clue rounds
    (person, agent, agent) then a vote (agent ballots first, the person's last)."""
    rng = random.Random(seed)
    for number in range(tables):
        began = timezone.now() - timedelta(hours=2, minutes=number * 10)
        table = Table.objects.create(game="undercover", config={}, started_at=began)
        person = Participant.objects.create(study=study, status="finished", is_pilot=is_pilot)
        Round.objects.create(participant=person, number=1, table=table, seat=0)
        moves: list[tuple[int, str, float, str]] = []
        for _ in range(3):
            moves.append(
                (0, "clue", rng.lognormvariate(math.log(CLUE_MEDIAN), SPREAD), PERSON_ACTOR)
            )
            moves.append((1, "clue", 60.0, "offline:kb"))  # agents' times are not people's
            moves.append((2, "clue", 61.0, "offline:kb"))
        ballot = max(1.5, rng.lognormvariate(math.log(VOTE_MEDIAN), SPREAD))
        moves.append((1, "vote", 1.0, "offline:kb"))
        moves.append((0, "vote", ballot - 1.0, PERSON_ACTOR))  # ``ballot`` s after it opened
        moves.append((2, "vote", 30.0, "offline:kb"))
        at = began
        for seq, (seat, kind, seconds, actor) in enumerate(moves):
            at += timedelta(seconds=seconds)
            event = {"type": kind, "seat": seat}
            event.update({"text": "x"} if kind == "clue" else {"target": 1})
            Turn.objects.create(
                table=table, seq=seq, seat=seat, event=event, actor=actor, created_at=at
            )


def test_move_seconds_counts_a_ballot_from_the_votes_opening() -> None:
    t0 = timezone.now()
    turns = [
        (0, "clue", t0 + timedelta(seconds=10), True),
        (1, "clue", t0 + timedelta(seconds=40), False),
        (2, "vote", t0 + timedelta(seconds=45), False),
        (3, "vote", t0 + timedelta(seconds=48), True),
        (4, "clue", t0 + timedelta(seconds=60), True),
    ]
    found = move_seconds(turns, t0)
    assert found == {"clue": [10.0, 12.0], "vote": [8.0]}


def test_fit_finds_the_bounds_a_log_normal_draw_came_from() -> None:
    rng = random.Random(3)
    low, high = 6.0, 30.0  # the scheduler's draw: median sqrt(low*high), bounds 2 sd out
    centre, spread = (math.log(low) + math.log(high)) / 2, (math.log(high) - math.log(low)) / 4
    seconds = [math.exp(rng.gauss(centre, spread)) for _ in range(4000)]
    fitted = fit(seconds, "clue").bounds
    assert fitted is not None
    assert abs(fitted[0] - low) <= 0.6 and abs(fitted[1] - high) <= 2.0, fitted
    assert fit(seconds[:5], "clue").bounds is None  # too few to fit


def test_the_command_writes_peoples_bounds_into_the_study_file(db, tmp_path: Path) -> None:
    study = Study.objects.create(
        slug="uc-pilot", title="Pilot", game="undercover", consent_text="Recorded."
    )
    pilot(study, tables=12)
    pilot(study, tables=3, is_pilot=False, seed=9)
    main = Study.objects.create(
        slug="uc-main", title="Main", game="undercover", consent_text="R.", active=False
    )
    path = tmp_path / "study.toml"  # the main study's file, fitted to the earlier one's people
    path.write_text("# my study\n" + studyfile.dumps(main).split("\n", 1)[1], encoding="utf-8")
    out = io.StringIO()
    call_command("fit_think_times", "uc-pilot", "--pilots-only", "--file", str(path), stdout=out)
    text = out.getvalue()
    assert "clue         36" in text and "vote         12" in text, text
    assert "question" in text and "not fitted" in text
    written = path.read_text(encoding="utf-8")
    assert written.startswith("# my study\n")
    bounds = tomllib.loads(written)["agent_think_seconds"]
    clue, vote = bounds["clue"], bounds["vote"]
    # the fitted median is the people's (12 s and 4 s), far from the agents' 60 s
    assert 9 <= math.sqrt(clue[0] * clue[1]) <= 16 and clue[0] < CLUE_MEDIAN < clue[1]
    assert 2.5 <= math.sqrt(vote[0] * vote[1]) <= 6 and vote[1] < 20
    assert bounds["question"] == think.DEFAULT_THINK_SECONDS["question"]  # kept, not fitted
    assert think.bounds_problem(bounds) == ""
    # the file applies: the main study's agents now wait people's times
    call_command("study", "apply", str(path), stdout=io.StringIO())
    main.refresh_from_db()
    assert main.agent_think_seconds["clue"] == clue


def test_a_source_without_peoples_moves_fits_nothing(db) -> None:
    Study.objects.create(slug="empty", title="Empty", game="undercover", consent_text="R.")
    with pytest.raises(CommandError, match="nothing to fit"):
        call_command("fit_think_times", "empty", stdout=io.StringIO())
    with pytest.raises(CommandError, match="no study 'nope'"):
        call_command("fit_think_times", "nope", stdout=io.StringIO())
