"""Prolific's API failing in ways a terminal should not show raw: a malformed PROLIFIC_API_URL is
one line naming the setting (no traceback), and a gateway's HTML error page is named by its
title, in the terminal and in the participant's payment_error, never dumped."""

from __future__ import annotations

import io

import pytest
from django.core.management import CommandError, call_command
from participant_helpers import get_ready, page, win_round

from tests.fakes.prolific_server import FakeProlific

pytestmark = pytest.mark.django_db

STUDY_ID = "5f0c1d2e3a4b5c6d7e8f9012"
PID = "0" * 23 + "7"


@pytest.fixture
def prolific(settings):
    with FakeProlific() as server:
        settings.PROLIFIC_API_TOKEN = server.token
        settings.PROLIFIC_API_URL = server.url
        yield server


def finished(client, study, server):
    server.add_submission("sub7", PID, STUDY_ID)
    person = get_ready(client, study, f"?PROLIFIC_PID={PID}&STUDY_ID={STUDY_ID}&SESSION_ID=sub7")
    win_round(client, person)
    win_round(client, person)
    client.post(page(person, "policy"), {"policy": "Halve the candidates."})
    person.refresh_from_db()
    assert person.status == "finished"
    return person


@pytest.mark.parametrize("url", ["api.prolific.com/api/v1/", "ftp://x/", "::"])
def test_a_malformed_api_url_is_one_line_naming_the_setting(study, alice, prolific, settings, url):
    finished(alice, study, prolific)
    settings.PROLIFIC_API_URL = url
    with pytest.raises(CommandError) as failure:
        call_command("prolific", "approve", study.slug, stdout=io.StringIO())
    said = str(failure.value)
    assert "PROLIFIC_API_URL" in said and "is not a web address" in said
    assert "\n" not in said and "Traceback" not in said


def test_an_html_error_page_is_named_not_dumped(study, alice, prolific):
    person = finished(alice, study, prolific)
    prolific.html_error_next = 502
    out, err = io.StringIO(), io.StringIO()
    with pytest.raises(CommandError):
        call_command("prolific", "pay", study.slug, stdout=out, stderr=err)
    shown = out.getvalue() + err.getvalue()
    assert "HTTP 502: 502 Bad Gateway (an HTML error page" in shown
    assert "<" not in shown and "nginx" not in shown
    person.refresh_from_db()
    assert person.payment_error.startswith("HTTP 502: 502 Bad Gateway (an HTML error page")
    assert "<" not in person.payment_error
