"""The model arm's human-policy setting can play with the policies a study's finished
participants wrote (each one, or a chosen one); each job names the participant whose text it
used."""

import json

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from studyapp.participants.models import Participant, Study
from studyapp.pipelines.models import Job

pytestmark = pytest.mark.django_db

FINISHED = Participant.Status.FINISHED


@pytest.fixture(autouse=True)
def scratch_media(settings, tmp_path) -> None:
    """Jobs write their results under a MEDIA_ROOT of their own (a job id of an earlier run
    would otherwise find that run's results file and resume it)."""
    settings.MEDIA_ROOT = tmp_path / "media"


@pytest.fixture
def staff() -> Client:
    client = Client()
    client.force_login(User.objects.create_user("researcher", password="pw", is_staff=True))
    return client


@pytest.fixture
def study() -> Study:
    study = Study.objects.create(slug="hp", title="HP", rounds=2, consent_text="ok", seed=4)
    for status, policy, pilot in [
        (FINISHED, "Halve the candidates with every question.", False),
        (FINISHED, "Ask about the category first, then size.", False),
        (FINISHED, "", False),  # wrote nothing
        (FINISHED, "A pilot bot's scripted advice.", True),
        (Participant.Status.DROPPED, "Left before the end.", False),
    ]:
        Participant.objects.create(study=study, status=status, policy=policy, is_pilot=pilot)
    return study


def writers(study: Study) -> dict[str, str]:
    rows = study.participants.filter(status=FINISHED, is_pilot=False).exclude(policy="")
    return dict(rows.values_list("public_id", "policy"))


def post(staff, study, capture, **fields) -> list[Job]:
    data = {"models": "offline:infogain", "settings": ["human-policy"], "samples": "1", **fields}
    url = reverse("dashboard:analysis_study_model_arm", args=[study.slug])
    with capture(execute=True):
        response = staff.post(url, data)
    assert response.status_code == 302
    return list(Job.objects.filter(kind="experiment").order_by("pk"))


def test_the_form_offers_each_finished_participants_policy(staff, study):
    page = staff.get(reverse("dashboard:analysis_study", args=[study.slug])).content.decode()
    assert 'name="human_policy"' in page and 'value="each"' in page
    for public_id in writers(study):
        assert f'value="{public_id}"' in page
    for other in study.participants.exclude(public_id__in=writers(study)):
        assert other.public_id not in page  # no pilot, dropout or empty policy


def test_each_participants_policy_runs_as_its_own_job(
    staff, study, django_capture_on_commit_callbacks
):
    jobs = post(staff, study, django_capture_on_commit_callbacks, human_policy="each")
    expected = writers(study)
    assert len(jobs) == len(expected) == 2
    assert {j.parameters["policy_from"]: j.parameters["policy"] for j in jobs} == expected
    for job in jobs:
        assert job.status == "succeeded", job.log
        records = (job.artifact_dir / "results.jsonl").read_text().splitlines()
        played = {json.loads(line)["policy"] for line in records}
        assert played == {expected[job.parameters["policy_from"]]}  # the text the games used
    page = staff.get(reverse("dashboard:analysis_study", args=[study.slug])).content.decode()
    assert all(public_id in page for public_id in expected)  # the job list names them


def test_a_chosen_participant_or_the_shipped_text(staff, study, django_capture_on_commit_callbacks):
    chosen = next(iter(writers(study)))
    jobs = post(staff, study, django_capture_on_commit_callbacks, human_policy=chosen)
    assert [(j.parameters["policy_from"], j.parameters["policy"]) for j in jobs] == [
        (chosen, writers(study)[chosen])
    ]
    Job.objects.all().delete()
    jobs = post(staff, study, django_capture_on_commit_callbacks)  # the default
    assert [j.parameters["policy_from"] for j in jobs] == ["shipped"]
    assert "policy" not in jobs[0].parameters


def test_a_participant_without_a_finished_policy_is_refused(
    staff, study, django_capture_on_commit_callbacks
):
    pilot = study.participants.get(is_pilot=True)
    jobs = post(staff, study, django_capture_on_commit_callbacks, human_policy=pilot.public_id)
    assert jobs == []
    page = staff.get(reverse("dashboard:analysis_study", args=[study.slug])).content.decode()
    assert "is not a finished participant of this study with a policy" in page


def test_the_model_arm_table_refreshes_itself_while_a_job_is_queued_or_running(staff, study):
    """The study page's job table polls its own URL while a job is active and stops once every
    job has ended; the URL is staff-only."""
    job = Job.objects.create(kind="experiment", parameters={"study": study.slug, "model": "m"})
    jobs_url = reverse("dashboard:analysis_study_jobs", args=[study.slug])
    page = staff.get(reverse("dashboard:analysis_study", args=[study.slug])).content.decode()
    assert f'hx-get="{jobs_url}"' in page and f"#{job.pk}" in page
    Job.objects.filter(pk=job.pk).update(status=Job.Status.RUNNING, message="case 3 of 20")
    rows = staff.get(jobs_url).content.decode()
    assert "case 3 of 20" in rows and f'hx-get="{jobs_url}"' in rows
    Job.objects.filter(pk=job.pk).update(status=Job.Status.SUCCEEDED, message="done")
    rows = staff.get(jobs_url).content.decode()
    assert "done" in rows and "hx-get" not in rows
    assert Client().get(jobs_url).status_code == 302  # to the login page
