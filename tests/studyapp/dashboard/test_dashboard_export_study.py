"""Study records and ``manage.py export_study``: the files read back equal the database, and no
recruiter ID leaves it."""

import hashlib
import json
from pathlib import Path

import pandas as pd
import pytest
from analysis_db_helpers import PROLIFIC_PID, events_found_at, finished_table, make_study
from django.core.management import CommandError, call_command

from analysis.export import read_frames
from studyapp.dashboard.records import agent_frames, study_frames, study_tables
from studyapp.participants.models import Participant
from studyapp.tables.models import Seat, Turn
from tests.exports import assert_export_agrees, export_checked

pytestmark = pytest.mark.django_db


def test_it_names_humans_by_public_id_and_numbers_rounds_from_zero():
    study = make_study()
    games = study_frames(study)["games"]
    first = Participant.objects.get(prolific_pid=PROLIFIC_PID)
    mine = games[games["player"] == first.public_id]
    assert mine["round"].tolist() == [0, 1, 2]
    assert mine["reward"].tolist() == pytest.approx([1.0, 0.5, 1 / 3])
    assert set(games["player_kind"]) == {"human"}


def test_it_leaves_out_participants_who_withdrew():
    study = make_study()
    frames = study_frames(study)
    gone = Participant.objects.get(status=Participant.Status.WITHDRAWN).public_id
    assert gone not in set(frames["games"]["player"])
    assert gone not in set(frames["participants"]["player"])
    assert len(frames["participants"]) == 2


def test_it_makes_each_game_outside_an_experiment_round_one_of_its_own_sample():
    seats = [
        {"kind": "agent", "agent_spec": "offline:infogain"},
        {"kind": "agent", "agent_spec": "offline:kb"},
    ]
    for k in (7, 3):
        finished_table(events_found_at(k), seats)
    games = agent_frames()["games"]
    # Never "the next round" in the order the games happened to be played.
    assert games["round"].tolist() == [0, 0] and games["sample"].tolist() == [0, 1]
    assert games["reward"].tolist() == pytest.approx([1 / 3, 0.5])
    assert set(games["player_kind"]) == {"offline"}


@pytest.mark.parametrize("format", ["csv", "parquet"])
def test_it_exports_files_that_read_back_as_the_database(tmp_path, format):
    study = make_study()
    export_checked(study.slug, str(tmp_path), "--format", format)
    back = read_frames(tmp_path, format)
    assert not (tmp_path / f"games.{'csv' if format == 'parquet' else 'parquet'}").exists()
    turns = back["turns"]
    tables = sorted(set(turns["table"]))
    rows = Turn.objects.filter(table_id__in=[int(t) for t in tables]).order_by("table_id", "seq")
    expected = [(str(r.table_id), r.seq, r.event) for r in rows]
    ordered = sorted(
        zip(turns["table"], turns["seq"], turns["event"], strict=True),
        key=lambda x: (int(x[0]), x[1]),
    )
    got = [(table, seq, json.loads(event)) for table, seq, event in ordered]
    assert got == expected
    participants = back["participants"].set_index("player")
    for person in Participant.objects.exclude(status=Participant.Status.WITHDRAWN):
        assert participants.loc[person.public_id, "total_reward"] == person.total_reward
        assert participants.loc[person.public_id, "rounds_finished"] == 3
    assert back["games"]["reward"].sum() == pytest.approx(1.0 + 0.5 + 1 / 3 + 3 * 0.5)


def test_it_keeps_recruiter_ids_out_of_every_exported_file(tmp_path):
    study = make_study()
    export_checked(study.slug, str(tmp_path))
    files = [path for path in tmp_path.rglob("*") if path.is_file()]
    assert len(files) > 10
    for path in files:
        assert PROLIFIC_PID.encode() not in path.read_bytes(), path.name


def test_it_writes_a_readme_of_the_columns(tmp_path):
    export_checked(make_study().slug, str(tmp_path))
    readme = (tmp_path / "README.md").read_text()
    assert "## participants.csv (2 rows)" in readme
    assert "| player | string | pseudonymous participant id" in readme


def test_it_refuses_an_unknown_study(tmp_path):
    with pytest.raises(CommandError, match="no study with slug 'nope'"):
        call_command("export_study", "nope", "--out", str(tmp_path))


@pytest.mark.django_db(transaction=True)
def test_its_second_process_writes_the_same_files_as_one_process(tmp_path):
    """``processes=2`` forks a process that reads and writes the turns: on PostgreSQL with the
    rows committed (the forked process has its own connection), with chunks of two tables so
    keys and turns pass over the queue several times. Every file is byte for byte the same."""
    from django.db import connection

    from studyapp.dashboard.exporting import _can_fork, export_study

    if connection.vendor != "postgresql":
        pytest.skip("the second process is used on PostgreSQL only (DATABASE_URL=postgres://...)")
    study = make_study()
    assert _can_fork()
    one, two = tmp_path / "one", tmp_path / "two"
    export_study(study, one, processes=1, chunk=2)
    export_study(study, two, processes=2, chunk=2)
    files = sorted(p.relative_to(one) for p in one.rglob("*") if p.is_file())
    assert len(files) > 10
    assert files == sorted(p.relative_to(two) for p in two.rglob("*") if p.is_file())
    for name in files:
        if name.suffix in (".png", ".pdf", ".svg"):
            continue  # figures carry a creation date; their CSV data is compared
        assert (one / name).read_bytes() == (two / name).read_bytes(), name
    turns = read_frames(two, "parquet")["turns"]
    assert len(turns) == 2 * (1 + 3 + 7 + 3 * 3) - 6  # six games, 2k - 1 turns for k questions


def test_a_known_rounds_model_usage_is_the_same_on_the_page_and_in_the_export(tmp_path):
    """A finished round whose reward the flow recorded is not replayed, and its log is not read
    for the page: what the oracle's model calls cost is summed by the database, to the numbers
    the export reads from the whole log."""
    from studyapp.dashboard.records import study_games
    from studyapp.participants.models import Round

    study = make_study()
    first = Participant.objects.get(prolific_pid=PROLIFIC_PID)
    round_ = Round.objects.get(participant=first, number=2)  # the word at question 3
    Round.objects.filter(pk=round_.pk).update(reward=0.5)
    used = {"calls": 1, "input_tokens": 10, "output_tokens": 2, "latency_s": 0.25}
    assert Turn.objects.filter(table_id=round_.table_id, seat=1).update(usage=used) == 2
    page = study_games(study).set_index("table").loc[str(round_.table_id)]
    assert (page["calls"], page["input_tokens"], page["tokens"]) == (2, 20, 24)
    assert page["latency_s"] == pytest.approx(0.5)
    export_checked(study.slug, str(tmp_path))
    exported = read_frames(tmp_path, "csv")["games"].set_index("table").loc[str(round_.table_id)]
    for column in ("calls", "input_tokens", "output_tokens", "tokens", "latency_s", "reward"):
        assert exported[column] == page[column], column


def test_the_export_carries_each_figure_with_its_data_and_what_is_owed(tmp_path):
    study = make_study()
    export_checked(study.slug, str(tmp_path))
    drawn = pd.read_csv(tmp_path / "analysis" / "study-twenty-questions.csv")
    assert {"condition", "series", "t", "mean", "low", "high", "n"} <= set(drawn.columns)
    assert drawn.loc[drawn["kind"] == "mean", "n"].tolist() == [2, 2, 2]
    assert "`analysis/study-twenty-questions.csv`" in (tmp_path / "README.md").read_text()
    people = pd.read_csv(tmp_path / "participants.csv")
    assert {"payment_status", "base_pay", "bonus", "bonus_due", "currency"} <= set(people.columns)
    turns = pd.read_csv(tmp_path / "turns.csv")
    assert pd.api.types.is_numeric_dtype(turns["seat"])


def test_the_export_names_what_produced_it(tmp_path):
    study = make_study()
    export_checked(study.slug, str(tmp_path))
    block = json.loads((tmp_path / "provenance.json").read_text())
    assert json.loads((tmp_path / "datapackage.json").read_text())["provenance"] == block
    lock = Path(__file__).resolve().parents[3] / "requirements" / "lock.txt"
    assert block["lock"]["requirements/lock.txt"] == hashlib.sha256(lock.read_bytes()).hexdigest()
    assert len(block["prompts"]["sha256"]) == 64
    specs = set(
        Seat.objects.filter(table__in=study_tables(study, False))
        .exclude(agent_spec="")
        .values_list("agent_spec", flat=True)
    )
    assert {model["spec"] for model in block["models"]} == specs


def test_the_command_shows_its_progress_on_stderr_unless_quiet(tmp_path, capsys):
    study = make_study()
    tables = study_tables(study, False).count()
    call_command("export_study", study.slug, "--out", str(tmp_path / "a"), "--format", "csv")
    assert_export_agrees(tmp_path / "a")
    shown = capsys.readouterr()
    assert f"{tables}/{tables}" in shown.err and "table" in shown.err
    assert "datapackage.json" in shown.out and f"{tables}/{tables}" not in shown.out
    call_command(
        "export_study", study.slug, "--out", str(tmp_path / "b"), "--format", "csv", "--quiet"
    )
    assert capsys.readouterr().err == ""
