"""The analysis pages: staff only, with the participants, curves, table and downloads."""

import asyncio
import io
import zipfile

import pytest
from analysis_db_helpers import events_found_at, finished_table, make_study
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from games import get_engine
from games.agents import make_agent
from games.runner import play_game
from studyapp.tables.models import Seat, Table, Turn

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff() -> Client:
    client = Client()
    client.force_login(User.objects.create_user("researcher", password="pw", is_staff=True))
    return client


@pytest.fixture
def mallory() -> Client:
    client = Client()
    client.force_login(User.objects.create_user("mallory", password="pw"))
    return client


def study_url(view, **kwargs):
    return reverse(f"dashboard:analysis_study{view}", kwargs={"slug": "tq-study", **kwargs})


def test_it_keeps_the_pages_from_someone_who_is_not_staff(mallory):
    make_study()
    for url in (
        reverse("dashboard:analysis"),
        study_url(""),
        study_url("_download", format="csv"),
        study_url("_figure", name="study-twenty-questions.png"),
    ):
        response = mallory.get(url)
        assert response.status_code == 302 and "/login/" in response["Location"], url


def test_it_lists_participants_with_their_final_reward_and_group(staff):
    make_study()
    page = staff.get(study_url("")).content.decode()
    assert "6 finished games" in page
    # Two people are too few for a steady/variable split: the page says so instead.
    assert "<td>steady</td>" not in page and "No steady/variable split" in page
    assert "<td>0.6111</td>" in page  # (1 + 0.5 + 1/3) / 3
    assert "0.3210 (perfect binary questioning, computed optimum)" in page


def test_it_draws_the_same_labelled_reference_on_the_study_and_the_tables_page(staff):
    make_study()
    infogain = [
        {"kind": "agent", "agent_spec": "offline:infogain"},
        {"kind": "agent", "agent_spec": "offline:kb"},
    ]
    finished_table(events_found_at(1), infogain)  # infogain at reward 1.0, outside the study
    anonymous = [
        {"kind": "human", "session_key": "visitor"},
        {"kind": "agent", "agent_spec": "offline:kb"},
    ]
    finished_table(events_found_at(3), anonymous)
    reference = "Reference line: 0.3210 (perfect binary questioning, computed optimum)"
    assert reference in staff.get(study_url("")).content.decode()
    assert reference in staff.get(reverse("dashboard:analysis_tables")).content.decode()


def test_it_draws_the_study_figure_in_every_publication_format(staff):
    make_study()
    staff.get(study_url(""))  # computes the cached result (inline: no server runs here)
    png = staff.get(study_url("_figure", name="study-twenty-questions.png"))
    assert png["Content-Type"] == "image/png" and b"".join(png.streaming_content).startswith(
        b"\x89PNG"
    )
    svg = staff.get(study_url("_figure", name="study-twenty-questions.svg"))
    assert b"<svg" in b"".join(svg.streaming_content)
    pdf = staff.get(study_url("_figure", name="study-twenty-questions.pdf"))
    assert b"".join(pdf.streaming_content).startswith(b"%PDF")
    data = b"".join(
        staff.get(study_url("_figure", name="study-twenty-questions.csv")).streaming_content
    )
    assert data.startswith(b"panel,condition,series,kind,t,mean,low,high,n")


def test_it_answers_404_for_a_figure_without_data(staff):
    make_study()
    staff.get(study_url(""))
    response = staff.get(study_url("_figure", name="cumulative-twenty-questions.png"))
    assert response.status_code == 404
    assert staff.get(study_url("_figure", name="..%2Fsecret")).status_code == 404


def test_it_downloads_the_study_export_as_a_zip(staff):
    make_study()
    response = staff.get(study_url("_download", format="parquet"))
    names = set(zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content))).namelist())
    assert {
        "games.parquet",
        "turns.parquet",
        "participants.parquet",
        "datapackage.json",
        "README.md",
        "analysis/participants.csv",
    } <= names


def test_it_shows_the_settings_table_for_tables_outside_studies(staff):
    seats = [
        {"kind": "agent", "agent_spec": "offline:infogain"},
        {"kind": "agent", "agent_spec": "offline:kb"},
    ]
    finished_table(events_found_at(3), seats)
    finished_table(events_found_at(1), seats, setting="cumulative")
    page = staff.get(reverse("dashboard:analysis_tables")).content.decode()
    assert "<th>w/ Cumulative Policy</th><td><strong>1.0000</strong></td>" in page
    # An offline agent reads no policy: its difference is not reported as a gain.
    assert "<td>NA (reads no policy)</td>" in page
    assert "/analysis/tables/file/cumulative-twenty-questions.png" in page


def test_it_counts_games_not_seats(staff):
    # An Undercover game has a row per player in the frame; the page counts it once.
    engine = get_engine("undercover")
    config = engine.new_config(seed=3, players=5)
    agents = {
        i: make_agent("offline:kb", game="undercover", role="player", seed=i) for i in range(5)
    }
    _, events = asyncio.run(play_game(engine, config, agents))
    table = Table.objects.create(
        game="undercover", config=config, status=Table.Status.FINISHED, finished_at=timezone.now()
    )
    for index in range(5):
        Seat.objects.create(table=table, index=index, kind="agent", agent_spec="offline:kb")
    for seq, event in enumerate(events):
        Turn.objects.create(table=table, seq=seq, seat=event.get("seat"), event=event)
    page = staff.get(reverse("dashboard:analysis_tables")).content.decode()
    assert "1 finished game." in page
