"""Staff tables fit the screen a researcher has: at 1600 px the admin's participant list shows
every column without scrolling, and the live-tables monitor keeps its tables inside their own box
(no table runs out of the page's column)."""

from __future__ import annotations

import os

import pytest

from tests.e2e.site import LiveSite

SETUP = """
from django.contrib.auth.models import User
from games import get_engine
from django.utils import timezone
from studyapp.participants.models import Participant, Study, StudyTable
from studyapp.tables.models import Seat, Table
User.objects.create_superuser("fit", "fit@example.org", "fit-password-123")
study = Study.objects.create(slug="fit-study-with-a-long-slug", title="Fit", consent_text="ok")
now = timezone.now()
for n in range(3):
    Participant.objects.create(
        study=study, status="finished", condition="a-long-condition-name", consent_version="1",
        consented_at=now, started_at=now, finished_at=now, paid=True, paid_at=now,
        payment_amount="10.00", bonus="1.25", rounds_finished=20, total_reward=12.5,
    )
for n in range(3):
    table = Table.objects.create(
        game="undercover", status="playing", config=get_engine("undercover").new_config(n, players=5),
    )
    StudyTable.objects.create(table=table, study=study.slug, round=3)
    Seat.objects.create(table=table, index=0, kind="human", session_key="k")
    for i in range(1, 5):
        Seat.objects.create(
            table=table, index=i, kind="agent",
            agent_spec="openai-compatible:meta-llama/Llama-3.1-70B-Instruct-Turbo@a-server",
        )
"""


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    live = LiveSite(tmp_path_factory.mktemp("fit-var"))
    live.start(SETUP)
    yield live
    live.stop()


def login(page, url: str) -> None:
    page.goto(url + "/admin/login/")
    page.fill("#id_username", "fit")
    page.fill("#id_password", "fit-password-123")
    page.click("input[type=submit]")


def test_the_participant_list_shows_every_column_at_1600_px(browser, site):
    context = browser.new_context(viewport={"width": 1600, "height": 900})
    page = context.new_page()
    login(page, site.url)
    page.goto(site.url + "/admin/participants/participant/")
    box = page.eval_on_selector("#changelist-form .results", "e => [e.scrollWidth, e.clientWidth]")
    widths = page.eval_on_selector_all(
        "#result_list thead th", "es => es.map(e => [e.innerText, e.getBoundingClientRect().width])"
    )
    assert box[0] <= box[1], f"{widths} the list scrolls: {box[0]} px of columns in {box[1]} px"
    headers = [h.lower() for h in page.locator("#result_list thead th").all_inner_texts()]
    assert any("transcript" in h for h in headers) and any("paid" in h for h in headers)
    context.close()


def test_the_live_tables_stay_inside_the_page(browser, site):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    login(page, site.url)
    page.goto(site.url + "/dashboard/tables/")
    assert page.locator("#open-tables").count() == 1, page.content()[:3000]
    main = page.eval_on_selector("main", "e => e.getBoundingClientRect().right")
    right = page.eval_on_selector("#open-tables", "e => e.getBoundingClientRect().right")
    assert right <= main + 1, f"the table ends at {right} px, its column at {main} px"
    table = page.eval_on_selector("#open-tables", "e => e.closest('.table-scroll') !== null")
    assert table
    scroller = page.eval_on_selector(
        "#open-tables", "e => e.closest('.table-scroll').getBoundingClientRect().right"
    )
    assert scroller <= main + 1
    assert page.evaluate("document.documentElement.scrollWidth") <= 1280
    context.close()


if not os.environ.get("CHROMIUM_PATH") and not os.path.exists("/usr/bin/chromium"):
    pytestmark = pytest.mark.skip(reason="no Chromium")
