"""The demo study that `make run` seeds shows the whole path, policy question and code included,
and returns people to a page of the site that stands in for the recruiter."""

from __future__ import annotations

import io
import re

import pytest
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.urls import reverse
from participant_helpers import get_ready, page, win_round

from studyapp.participants.models import Study, validate_completion_url

pytestmark = pytest.mark.django_db


def seed() -> str:
    out = io.StringIO()
    call_command("seed_demo", stdout=out)
    return out.getvalue()


def test_the_demo_study_has_a_policy_question_a_completion_page_and_codes(db):
    seed()
    demo = Study.objects.get(slug="demo")
    assert demo.policy_question
    assert demo.completion_url == "/s/demo/complete/"
    assert (demo.code_finished, demo.code_dropped, demo.code_screened) == (
        "DEMOFIN",
        "DEMODROP",
        "DEMONO",
    )
    demo.full_clean()  # the admin accepts it as it is


def test_seeding_again_fills_what_an_older_demo_lacks_and_keeps_staff_edits(db):
    Study.objects.create(
        slug="demo", title="Demo", rounds=3, consent_text="c", code_finished="MINE"
    )
    seed()
    seed()
    demo = Study.objects.get(slug="demo")
    assert demo.code_finished == "MINE"
    assert demo.code_dropped == "DEMODROP"
    assert demo.completion_url == "/s/demo/complete/"


def test_a_demo_participant_ends_on_the_local_page_with_their_code(db, alice):
    seed()
    demo = Study.objects.get(slug="demo")
    participant = get_ready(alice, demo)
    for _ in range(demo.rounds):
        win_round(alice, participant)
    alice.post(page(participant, "policy"), {"policy": "Ask about size first."})
    done = alice.get(page(participant, "done")).content.decode()
    assert 'href="/s/demo/complete/?cc=DEMOFIN"' in done
    text = alice.get("/s/demo/complete/?cc=DEMOFIN").content.decode()
    assert '<code id="received-code">DEMOFIN</code>' in text
    assert "(finished)" not in text  # the page never says which of the study's codes it is


def test_the_local_completion_page_escapes_a_code_and_answers_every_guess_alike(db, alice):
    seed()
    url = reverse("participants:recruiter_return", args=["demo"])
    text = alice.get(url, {"cc": "<b>x</b>"}).content.decode()
    assert "&lt;b&gt;x&lt;/b&gt;" in text
    right = alice.get(url, {"cc": "DEMOFIN"}).content.decode()
    wrong = alice.get(url, {"cc": "DEMOFIX"}).content.decode()
    token = re.compile(r'"X-CSRFToken": "\w+"')
    assert token.sub("", right.replace("DEMOFIN", "CODE")) == token.sub(
        "", wrong.replace("DEMOFIX", "CODE")
    )
    assert alice.get(reverse("participants:recruiter_return", args=["nope"])).status_code == 404


@pytest.mark.parametrize(
    "url", ["https://app.prolific.com/submissions/complete", "http://127.0.0.1:8000/x", "/done/"]
)
def test_a_completion_url_may_be_a_full_address_or_a_local_path(url):
    validate_completion_url(url)


@pytest.mark.parametrize(
    "url",
    [
        "app.prolific.com/complete",
        "//evil.example/",
        "javascript:x",
        "/\\evil.example/x",
        "\\\\evil.example/x",
        "\\/evil.example",
        "https://ok.example\\@evil.example/",
        "/\t/evil.example",
        "/ok path",
    ],
)
def test_a_completion_url_that_is_neither_is_refused(url):
    with pytest.raises(ValidationError):
        validate_completion_url(url)
