"""``/healthz`` (studyapp/health.py): 200 naming each check, or 503 naming what failed; no login,
nothing of the settings shown, no rate limit. A worker answering is checked on the production
topology (tests/production/test_production_topology.py)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db

# Nothing listens on port 1 of this machine: a connection is refused at once.
CLOSED = "redis://127.0.0.1:1/0"


def get(client: Client):
    response = client.get("/healthz")
    return response, response.json()


def test_the_embedded_site_is_healthy_and_says_it_is_embedded(settings):
    settings.REDIS_URL = ""
    response, body = get(Client())  # nobody logged in
    assert response.status_code == 200
    assert body["status"] == "ok" and "failed" not in body
    assert body["checks"]["database"] == "ok"
    assert body["checks"]["redis"].startswith("not configured")
    assert body["checks"]["celery"].startswith("embedded")
    assert "no-cache" in response["Cache-Control"]


def test_an_unreachable_redis_and_broker_answer_503_naming_them_and_no_address(settings):
    settings.REDIS_URL = settings.CELERY_BROKER_URL = CLOSED
    settings.CELERY_TASK_ALWAYS_EAGER = False  # background work goes to Celery workers
    response, body = get(Client())
    assert response.status_code == 503
    assert body["status"] == "failing"
    # the steps' executors are found through Redis too: without it none can be seen
    assert body["failed"] in (["redis", "celery"], ["redis", "celery", "steps"])
    assert body["checks"]["database"] == "ok"
    assert body["checks"]["redis"].startswith("failed")
    text = response.content.decode()
    assert "127.0.0.1" not in text and ":1" not in text and "redis://" not in text
    assert settings.SECRET_KEY not in text


@pytest.mark.skipif(
    not os.environ.get("REDIS_URL", "").startswith("redis"), reason="needs REDIS_URL (a Redis)"
)
def test_celery_mode_with_no_worker_running_fails_on_celery_alone(settings):
    # Another database number than the environment's: the production tests' site (and its
    # worker, which would answer) may still run on that one; Celery's broadcasts are per number.
    parts = urlsplit(os.environ["REDIS_URL"])
    number = (int(parts.path.strip("/") or 0) + 5) % 16
    settings.REDIS_URL = settings.CELERY_BROKER_URL = urlunsplit(parts._replace(path=f"/{number}"))
    settings.CELERY_TASK_ALWAYS_EAGER = False
    response, body = get(Client())
    assert response.status_code == 503
    assert body["failed"][0] == "celery"
    assert body["checks"]["redis"] == "ok"
    assert body["checks"]["celery"] == "failed: no worker answered"


def test_production_with_no_steps_executor_fails_on_steps(settings):
    from studyapp import steps

    if steps.redis() is None:
        pytest.skip("the steps' executors are found through the Redis cache (REDIS_URL)")
    settings.CELERY_TASK_ALWAYS_EAGER = False
    steps.status()  # forgets executors that stopped publishing
    assert steps.status()["executors"] == 0 or pytest.skip("an executor of another test is alive")
    response, body = get(Client())
    assert response.status_code == 503
    assert "steps" in body["failed"]
    assert body["checks"]["steps"] == "failed: no steps executor is running (manage.py run_steps)"


def test_probes_are_not_rate_limited(settings):
    settings.REDIS_URL = ""
    settings.PARTICIPANT_RATE_BURST = settings.PARTICIPANT_RATE_PER_MINUTE = 1
    client = Client()
    assert all(client.get("/healthz").status_code == 200 for _ in range(20))


def test_a_database_out_of_reach_answers_503_naming_it():
    """A site whose PostgreSQL does not answer (nothing listens on port 1): its own process, as
    the settings are read once."""
    code = (
        "import django; django.setup()\n"
        "from django.test import Client\n"
        "response = Client().get('/healthz')\n"
        "print(response.status_code, response.content.decode())\n"
    )
    root = Path(__file__).resolve().parents[2]
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "studyapp.settings",
        "PYTHONPATH": str(root),
        "DATABASE_URL": "postgres://study:secret-word@127.0.0.1:1/study",
        "DB_POOL_TIMEOUT": "1",
        "REDIS_URL": "",
    }
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120, cwd=root
    )
    status, _, text = done.stdout.strip().splitlines()[-1].partition(" ")
    body = json.loads(text)
    assert status == "503"
    assert body["failed"] == ["database"]
    assert body["checks"]["database"].startswith("failed")
    assert "secret-word" not in text and "127.0.0.1" not in text


def test_a_failing_check_is_written_once_when_it_begins_and_once_when_it_ends(settings, caplog):
    from studyapp import health

    health.FAILING.since.clear()
    caplog.set_level("WARNING", logger="studyapp.health")
    settings.REDIS_URL = settings.CELERY_BROKER_URL = CLOSED
    settings.CELERY_TASK_ALWAYS_EAGER = False
    for _ in range(5):  # a monitor probing through the fault
        assert get(Client())[0].status_code == 503
    began = [r.getMessage() for r in caplog.records if " failing: " in r.getMessage()]
    names = sorted(re.search(r"healthz: (\w+) failing", m)[1] for m in began)
    assert names in (["celery", "redis"], ["celery", "redis", "steps"]), began
    caplog.clear()
    settings.REDIS_URL = ""
    settings.CELERY_TASK_ALWAYS_EAGER = True
    assert get(Client())[0].status_code == 200
    ended = [r.getMessage() for r in caplog.records]
    assert sorted(message.split()[1] for message in ended) == names, ended
    assert all("passing again after" in m and "(5 failed probe(s))" in m for m in ended), ended
