"""Error reporting: the scrubber as a plain function, then sentry-sdk's own transport sending a
participant's failed request to a loopback server, which must receive the pseudonym and none of
the participant's words or recruiter IDs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import sentry_sdk
from django.test import Client

from studyapp.errors import FILTERED, scrub_event
from studyapp.participants.identity import SESSION_KEY
from studyapp.participants.models import Participant, Study
from tests.fakes.sentry_server import FakeSentry

ROOT = Path(__file__).resolve().parents[2]
PID = "5f0c8f3a9d1e2b4c6a7e8f90"
SESSION_ID = "sess-7c1e5d"
WORD = "giraffe"


def test_the_scrubber_keeps_the_error_and_drops_words_ids_and_credentials():
    event = {
        "message": f"bad move {WORD!r}",
        "logentry": {"message": "bad move %r", "params": [WORD], "formatted": f"bad move '{WORD}'"},
        "request": {
            "url": f"https://games.example/i/tok-secret/?PROLIFIC_PID={PID}",
            "query_string": f"PROLIFIC_PID={PID}&SESSION_ID={SESSION_ID}&STUDY_ID=study-4k9x",
            "data": {"word": WORD},
            "cookies": {"sessionid": "abc"},
            "headers": {"Cookie": "sessionid=abc", "User-Agent": "Firefox", "Referer": "x?y=z"},
            "env": {"REMOTE_ADDR": "10.0.0.7"},
        },
        "user": {"id": "P-7Q2", "ip_address": "10.0.0.7", "email": "a@b.c"},
        "exception": {
            "values": [
                {
                    "type": "ValueError",
                    "value": f"no such move: '{WORD}'",
                    "stacktrace": {"frames": [{"function": "fail", "vars": {"word": WORD}}]},
                }
            ]
        },
        "breadcrumbs": {"values": [{"message": f"said '{WORD}'", "data": {"text": WORD}}]},
        "extra": {"frame": json.dumps({"move": WORD})},
    }
    scrubbed = scrub_event(event, {})
    text = json.dumps(scrubbed)
    for secret in (
        WORD,
        PID,
        SESSION_ID,
        "study-4k9x",
        "tok-secret",
        "sessionid",
        "10.0.0.7",
        "a@b.c",
    ):
        assert secret not in text, secret
    request = scrubbed["request"]
    assert (
        request["query_string"]
        == "PROLIFIC_PID=[Filtered]&SESSION_ID=[Filtered]&STUDY_ID=[Filtered]"
    )
    assert request["url"] == "https://games.example/i/…/?PROLIFIC_PID=[Filtered]"
    assert request["headers"] == {"User-Agent": "Firefox"}
    assert scrubbed["user"] == {"id": "P-7Q2"}
    error = scrubbed["exception"]["values"][0]
    assert error["type"] == "ValueError" and error["value"] == f"no such move: '{FILTERED}'"
    assert error["stacktrace"]["frames"] == [{"function": "fail"}]


@pytest.fixture
def sentry():
    with FakeSentry() as server:
        from studyapp.errors import init_sentry

        init_sentry(server.dsn, environment="test", release=None, transport_queue_size=10)
        try:
            yield server
        finally:
            sentry_sdk.get_client().close(timeout=2)
            sentry_sdk.init()  # no DSN: reporting off again for the other tests


@pytest.mark.django_db
def test_a_participants_failed_request_reaches_sentry_under_their_pseudonym_only(sentry, settings):
    settings.ROOT_URLCONF = "tests.studyapp.error_urls"
    settings.MIDDLEWARE = [*settings.MIDDLEWARE, "studyapp.errors.ParticipantUserMiddleware"]
    study = Study.objects.create(slug="err", title="Errors", rounds=1, consent_text="ok")
    person = Participant.objects.create(study=study, prolific_pid=PID)
    client = Client(raise_request_exception=False)
    session = client.session
    session[SESSION_KEY] = {str(study.pk): person.pk}
    session.save()
    query = f"?PROLIFIC_PID={PID}&SESSION_ID={SESSION_ID}&STUDY_ID=study-4k9x"
    assert client.post(f"/fail/{query}", {"word": WORD}).status_code == 500
    sentry_sdk.flush(timeout=5)
    events = sentry.events()
    assert len(events) == 1
    event = events[0]
    assert event["exception"]["values"][-1]["type"] == "ValueError"
    assert event["user"] == {"id": person.public_id}
    sent = b"".join(sentry.raw)
    for secret in (WORD, PID, SESSION_ID, "study-4k9x", session.session_key):
        assert secret.encode() not in sent, secret


def test_a_dsn_in_the_environment_turns_reporting_and_the_pseudonym_on():
    code = (
        "import django; django.setup(); import sentry_sdk; from django.conf import settings; "
        "print(sentry_sdk.get_client().is_active(), "
        "'studyapp.errors.ParticipantUserMiddleware' in settings.MIDDLEWARE)"
    )
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "studyapp.settings", "PYTHONPATH": str(ROOT)}
    on = subprocess.run(
        [sys.executable, "-c", code],
        env={**env, "SENTRY_DSN": "http://k@127.0.0.1:9/1"},
        capture_output=True, text=True, timeout=60, cwd=ROOT,
    )  # fmt: skip
    off = subprocess.run(
        [sys.executable, "-c", code],
        env={k: v for k, v in env.items() if k != "SENTRY_DSN"},
        capture_output=True, text=True, timeout=60, cwd=ROOT,
    )  # fmt: skip
    assert on.stdout.split() == ["True", "True"], on.stderr
    assert off.stdout.split() == ["False", "False"], off.stderr
