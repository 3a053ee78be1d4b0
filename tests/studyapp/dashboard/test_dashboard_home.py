"""The dashboard home and the staff header: every researcher page group is one click away."""

from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.contrib.staticfiles import finders
from django.test import Client

from studyapp.pipelines.models import Job

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff() -> Client:
    client = Client()
    client.force_login(User.objects.create_user("researcher", password="pw", is_staff=True))
    return client


def test_it_links_the_jobs_pages_from_the_dashboard_and_the_staff_header(staff):
    Job.objects.create(kind="experiment", status=Job.Status.RUNNING)
    page = staff.get("/dashboard/").content.decode()
    assert '<h2><a href="/dashboard/jobs/">Jobs</a></h2>' in page
    assert "1 running, 0 queued" in page and 'href="/dashboard/jobs/new/"' in page
    header = page[page.index('<nav aria-label="Staff">') : page.index("</nav>")]
    assert 'href="/dashboard/jobs/"' in header


def test_it_keeps_the_jobs_link_out_of_a_participants_header(client):
    assert 'href="/dashboard/jobs/"' not in client.get("/").content.decode()


def test_it_gives_every_page_an_svg_icon(client):
    page = client.get("/").content.decode()
    assert '<link rel="icon" href="/static/favicon.svg" type="image/svg+xml">' in page
    path = finders.find("favicon.svg")
    assert path and "<svg" in Path(path).read_text(encoding="utf-8")


def test_pages_without_the_icon_link_get_the_icon_at_the_old_address(client):
    response = client.get("/favicon.ico")
    assert response.status_code == 301
    assert response["Location"] == "/static/favicon.svg"
