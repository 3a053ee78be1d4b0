"""Issue 48: a study's model arm is its people's twin. A 6-seat German Who is Undercover study whose
design seats two people beside four ``offline:kb`` agents gets an arm that plays 6 seats in German,
the model in the people's two slots and the design's agents in theirs, each track holding in
round k the role its person held; one job per condition, each with the condition's design."""

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from analysis.comparability import comparability
from games import languages
from studyapp.dashboard.records import study_games
from studyapp.dashboard.views.analysis import arm_parameters
from studyapp.participants.models import Condition, Participant, Round, Study
from studyapp.participants.study_tables import round_config
from studyapp.pipelines.jobs import start_job
from studyapp.pipelines.models import Job
from studyapp.tables import services
from studyapp.tables.models import Seat

pytestmark = pytest.mark.django_db

DESIGN = {"seats": [{"kind": "person"}] * 2 + [{"kind": "agent", "spec": "offline:kb"}] * 4}


@pytest.fixture(autouse=True)
def scratch_media(settings, tmp_path) -> None:
    settings.MEDIA_ROOT = tmp_path / "media"


@pytest.fixture
def german_six() -> Study:
    """The study, and two people who played its two rounds at one table each round: the first
    at the round's difference seat in round 1, the second in round 2. A screened person and a
    pilot played too, and are followed by no track."""
    study = Study.objects.create(
        slug="uc-de", title="UC de", game="undercover", rounds=2, seed=5, consent_text="ok",
        design=DESIGN, language="de",
    )  # fmt: skip
    first = Participant.objects.create(study=study, status=Participant.Status.FINISHED)
    second = Participant.objects.create(study=study, status=Participant.Status.FINISHED)
    screened = Participant.objects.create(study=study, status=Participant.Status.SCREENED)
    pilot = Participant.objects.create(
        study=study, status=Participant.Status.FINISHED, is_pilot=True
    )
    seats = [{"kind": "agent", "agent_spec": "offline:kb"}] * 6
    for number in (1, 2):
        config = round_config(study, number, 6)
        difference = config["difference_seat"]
        other = (difference + 1) % 6
        table = services.create_table("undercover", config, seats, seed=number)
        at = {first: difference if number == 1 else other}
        at[second] = other if number == 1 else difference
        at[screened] = difference
        at[pilot] = difference
        for person, seat in at.items():
            Round.objects.create(participant=person, number=number, table=table, seat=seat)
    return study


def test_the_arm_parameters_carry_the_studys_design_language_and_each_persons_roles(german_six):
    parameters = arm_parameters(german_six, "offline:descriptor", "none", 2)
    plan = parameters["seat_plan"]
    assert plan["seats"] == ["model", "model"] + ["offline:kb"] * 4
    assert plan["language"] == "de" and plan["seat_order"] == "drawn"
    assert plan["roles"] == [["difference", "normal"], ["normal", "difference"]]
    assert parameters["samples"] == 4  # two tracks per person followed
    assert parameters["condition"] == "" and parameters["study"] == "uc-de"
    assert parameters["players"] == 6


def test_a_six_seat_german_studys_arm_plays_six_seats_in_german_beside_the_designs_agents(
    german_six, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        job = start_job("experiment", arm_parameters(german_six, "offline:descriptor", "none", 1))
    job.refresh_from_db()
    assert job.status == "succeeded", job.log
    games = study_games(german_six)
    arm = games[games["experiment"] == f"job-{job.pk}"]
    assert len(arm) == 4  # one row per game: its scored seat, not the design's agents
    assert set(arm["players"]) == {6} and set(arm["language"]) == {"de"}
    assert set(arm["opponents"]) == {"offline:kb ×4"}
    assert set(arm["player"]) == {"offline:descriptor"}
    assert set(arm["evaluated_role"]) == {"people"}
    german = {f"{a} / {b}" for a, b in languages.undercover_pairs("de")}
    german |= {f"{b} / {a}" for a, b in languages.undercover_pairs("de")}
    assert set(arm["word"]) <= german
    roles = {(0, 0): "difference", (0, 1): "normal", (1, 0): "normal", (1, 1): "difference"}
    for row in arm.itertuples():
        assert row.role == roles[(row.sample, row.round)]
    for table in arm["table"]:
        specs = sorted(
            Seat.objects.filter(table_id=int(table)).values_list("agent_spec", flat=True)
        )
        assert specs == ["offline:descriptor"] * 2 + ["offline:kb"] * 4
    assert comparability(arm.assign(player_kind="offline")) == []


def test_the_form_starts_one_job_per_condition_with_its_design(
    german_six, django_capture_on_commit_callbacks
):
    Condition.objects.create(study=german_six, name="kb", quota=5, position=0)
    Condition.objects.create(
        study=german_six, name="solo", quota=5, position=1,
        overrides={"design": {"seats": [{"kind": "person"}]
                              + [{"kind": "agent", "spec": "offline:descriptor"}] * 4}},
    )  # fmt: skip
    staff = Client()
    staff.force_login(User.objects.create_user("researcher", password="pw", is_staff=True))
    url = reverse("dashboard:analysis_study_model_arm", args=[german_six.slug])
    with django_capture_on_commit_callbacks(execute=False):
        response = staff.post(url, {"models": "offline:kb", "settings": ["none"], "samples": "1"})
    assert response.status_code == 302
    jobs = {j.parameters["condition"]: j.parameters for j in Job.objects.filter(kind="experiment")}
    assert set(jobs) == {"kb", "solo"}
    assert jobs["kb"]["seat_plan"]["seats"] == ["model", "model"] + ["offline:kb"] * 4
    assert jobs["solo"]["seat_plan"]["seats"] == ["model"] + ["offline:descriptor"] * 4
    assert jobs["solo"]["seat_plan"]["condition"] == "solo"
    assert all(p["seat_plan"]["language"] == "de" for p in jobs.values())
