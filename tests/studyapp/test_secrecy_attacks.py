"""Attacks on secrecy: try to read a secret word, another participant's data or a completion code
through every page, error page, export, socket frame and log line a participant or a stranger can
reach. The first part uses Django's test client and the real ASGI socket stack; the last part
attacks a served site (daphne in its own process, DEBUG off) over HTTP and WebSocket."""

from __future__ import annotations

import http.cookiejar
import json
import logging
import re
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
from channels.db import database_sync_to_async
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from studyapp.participants.models import Participant, Study
from studyapp.tables import services, store
from studyapp.tables.models import Seat, Table, Turn
from tests.exports import export_checked
from tests.studyapp.tables.conftest import new_session_key, socket

ROOT = Path(__file__).resolve().parents[2]
ORACLE = {"kind": "agent", "agent_spec": "offline:kb"}
UNDERCOVER = {
    "players": 4,
    "normal_word": "apple",
    "difference_word": "pear",
    "difference_seat": 3,
    "max_vote_rounds": 3,
}
CANDIDATES = re.compile(
    r'<datalist id="candidate-words">.*?</datalist>|<details class="card" id="candidates">'
    r"<summary>Candidate words</summary>.*?</details>",
    re.S,
)


def outside_the_word_list(html: str) -> str:
    """A questioner's page lists every candidate word (the guess control); the rest must not
    name the answer."""
    return CANDIDATES.sub("", html)


def names(text: str, word: str) -> bool:
    return re.search(rf"\b{re.escape(word)}\b", text, re.I) is not None


def tq_table(key: str) -> Table:
    seats = [{"kind": "human", "session_key": key}, ORACLE]
    return services.create_table("twenty-questions", {"answer": "Apple"}, seats)


def study(**fields) -> Study:
    values = {
        "slug": "attack",
        "title": "Attack study",
        "rounds": 2,
        "consent_text": "ok",
        "completion_url": "https://app.prolific.com/submissions/complete",
        "code_finished": "FINSECRET1",
        "code_dropped": "DROPSECRET2",
        **fields,
    }
    return Study.objects.create(**values)


# ---- pages and sockets of one game --------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
async def test_the_questioner_never_sees_the_word_before_the_end():
    key = await database_sync_to_async(new_session_key)()
    table = await database_sync_to_async(tq_table)(key)
    communicator = socket(table.pk, key)
    assert (await communicator.connect())[0]
    frames = [await communicator.receive_from(timeout=5)]
    for question in ("Is it alive?", "Is it a fruit?", "Is it red?"):
        await communicator.send_to(text_data=json.dumps({"type": "question", "text": question}))
        frames += [await communicator.receive_from(timeout=5) for _ in range(2)]
    await communicator.disconnect()
    client = Client()
    client.cookies["sessionid"] = key
    page = await database_sync_to_async(client.get)(reverse("tables:table", args=[table.pk]))
    for html in [*frames, page.content.decode()]:
        visible = outside_the_word_list(html)
        assert 'id="secret-word"' not in visible and 'id="revealed-word"' not in visible
        assert not names(visible, "Apple")


@pytest.mark.django_db(transaction=True)
async def test_an_undercover_seat_never_sees_another_seats_word():
    keys = [await database_sync_to_async(new_session_key)() for _ in range(4)]
    seats = [{"kind": "human", "session_key": k} for k in keys]
    create = database_sync_to_async(services.create_table)
    table = await create("undercover", UNDERCOVER, seats)
    sockets = [socket(table.pk, k) for k in keys]
    frames: list[list[str]] = [[] for _ in keys]
    for index, communicator in enumerate(sockets):
        assert (await communicator.connect())[0]
        frames[index].append(await communicator.receive_from(timeout=5))
    submit = database_sync_to_async(services.submit)
    for clue in ["it is sweet", "it grows on trees", "you can eat it", "a fruit"]:
        speaker = (await database_sync_to_async(services.table_state)(table.pk)).waiting_for()[0]
        await submit(table.pk, speaker, {"type": "clue", "text": clue})
        for index, communicator in enumerate(sockets):
            frames[index].append(await communicator.receive_from(timeout=5))
    for communicator in sockets:
        await communicator.disconnect()
    words = {0: "apple", 1: "apple", 2: "apple", 3: "pear"}
    for index, seen in enumerate(frames):
        other = "pear" if words[index] == "apple" else "apple"
        assert any(names(frame, words[index]) for frame in seen)
        assert not any(names(frame, other) for frame in seen), index
        # before the end nothing says who holds the different word
        assert not any("word-cell" in frame or "You were" in frame for frame in seen)


# ---- another participant's pages, tables and sockets ------------------------------------------


PROLIFIC = "?PROLIFIC_PID=aaaabbbbccccdddd11112222&STUDY_ID=s1&SESSION_ID=se1"


def ready(client: Client, found: Study, query: str = PROLIFIC) -> Participant:
    url = reverse("participants:study_link", args=[found.slug]) + query
    client.post(url)
    participant = Participant.objects.get(pk=client.session["participants"][str(found.pk)])
    client.post(
        reverse("participants:consent", args=[participant.public_id]),
        {"version": found.consent_version, "agree": "on"},
    )
    client.post(
        reverse("participants:instructions", args=[participant.public_id]),
        {"check_0": "Yes, No or Invalid"},
    )
    client.post(reverse("participants:play", args=[participant.public_id]))
    participant.refresh_from_db()
    return participant


@pytest.mark.django_db(transaction=True)
def test_a_stranger_reaches_nothing_of_a_participant():
    found = study()
    alice, mallory = Client(), Client()
    participant = ready(alice, found)
    round_table = participant.round_set.get().table_id
    steps = ["resume", "consent", "instructions", "play", "policy", "done", "withdraw"]
    for step in steps:
        response = mallory.get(reverse(f"participants:{step}", args=[participant.public_id]))
        assert response.status_code == 404
        assert participant.public_id not in response.content.decode()
    for attempt in ("", "?PROLIFIC_PID=aaaabbbbccccdddd11112222", PROLIFIC.replace("se1", "se2")):
        response = mallory.post(reverse("participants:study_link", args=[found.slug]) + attempt)
        assert b"FINSECRET1" not in response.content and b"DROPSECRET2" not in response.content
    table_page = mallory.get(reverse("tables:table", args=[round_table]))
    assert table_page.status_code == 404 and b"Apple" not in table_page.content
    post = mallory.post(reverse("tables:move", args=[round_table]), {"type": "question"})
    assert post.status_code == 404
    assert not Turn.objects.filter(table_id=round_table).exists()
    for url in (
        "/dashboard/",
        "/dashboard/tables/",
        f"/dashboard/tables/{round_table}/",
        f"/dashboard/analysis/study/{found.slug}/",
        f"/dashboard/analysis/study/{found.slug}/download/csv.zip",
        "/dashboard/analysis/tables/download/csv.zip",
        "/admin/participants/participant/",
        f"/admin/tables/table/{round_table}/change/",
    ):
        response = mallory.get(url)
        assert response.status_code in (302, 404), url
        assert b"aaaabbbbccccdddd11112222" not in response.content


@pytest.mark.django_db(transaction=True)
async def test_a_stranger_cannot_open_or_listen_to_a_participants_table_socket():
    found = await database_sync_to_async(study)()
    alice = Client()
    participant = await database_sync_to_async(ready)(alice, found)
    table_id = await database_sync_to_async(lambda: participant.round_set.get().table_id)()
    for key in (await database_sync_to_async(new_session_key)(), None, "x" * 32):
        communicator = socket(table_id, key)
        assert not (await communicator.connect())[0]


# ---- error pages ---------------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_error_pages_show_no_game_state_and_say_what_to_do(settings):
    assert not settings.DEBUG
    key = new_session_key()
    table = tq_table(key)
    Turn.objects.create(table=table, seq=0, seat=1, event={"type": "answer", "seat": 1})
    store._recent.clear()
    seat = Client(raise_request_exception=False)
    seat.cookies["sessionid"] = key
    staff = Client(raise_request_exception=False)
    staff.force_login(get_user_model().objects.create_user("s", password="x", is_staff=True))
    for client in (seat, staff):
        response = client.get(reverse("tables:table", args=[table.pk]))
        assert response.status_code == 500
        text = response.content.decode()
        assert "Something went wrong" in text and "same browser" in text
        assert not names(text, "Apple") and "Traceback" not in text and key not in text
    lost = Client().get(reverse("tables:table", args=[table.pk]))
    assert lost.status_code == 404
    text = lost.content.decode()
    assert "This page is not here" in text and "study link" in text
    assert "URLconf" not in text and "urlpatterns" not in text
    for url in ("/no/such/page/", "/p/p0000000000000000/", "/s/nope/"):
        assert Client().get(url).status_code == 404


# ---- exports carry no recruiter IDs or session keys ----------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_study_exports_carry_no_recruiter_ids_or_session_keys(tmp_path):

    found = study(rounds=1)
    alice = Client()
    participant = ready(alice, found)
    table_id = participant.round_set.get().table_id
    answer = Table.objects.get(pk=table_id).config["answer"]
    services.submit(table_id, 0, {"type": "question", "text": f"Is it a {answer}?"})
    alice.get(reverse("participants:play", args=[participant.public_id]))
    key = Seat.objects.get(table_id=table_id, index=0).session_key
    export_checked(found.slug, str(tmp_path), "--format", "csv")
    for path in tmp_path.rglob("*"):
        if not path.is_file():
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        assert "aaaabbbbccccdddd11112222" not in text, path.name
        assert not re.search(r"\bse1\b", text), path.name
        assert key not in text, path.name
        assert "FINSECRET1" not in text and "DROPSECRET2" not in text, path.name


# ---- log lines at INFO -----------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_no_log_line_at_info_names_a_word_a_code_or_a_session_key(caplog):
    caplog.set_level(logging.INFO)
    found = study(rounds=2)
    alice = Client()
    participant = ready(alice, found)
    secrets = {"FINSECRET1", "DROPSECRET2", alice.session.session_key}
    for number in (1, 2):
        round_ = participant.round_set.get(number=number)
        secrets.add(round_.table.config["answer"])
        secrets.add(Seat.objects.get(table_id=round_.table_id, index=0).session_key)
        services.submit(round_.table_id, 0, {"type": "question", "text": "Is it alive?"})
        answer = round_.table.config["answer"]
        services.submit(round_.table_id, 0, {"type": "question", "text": f"Is it a {answer}?"})
        alice.get(reverse("participants:play", args=[participant.public_id]))
        if number == 1:
            alice.post(reverse("participants:play", args=[participant.public_id]))
    Client().post(reverse("participants:study_link", args=[found.slug]) + PROLIFIC[:-1] + "9")
    text = "\n".join(record.getMessage() for record in caplog.records)
    for secret in secrets:
        assert not names(text, secret), secret


# ---- the served site: daphne with DEBUG off ----------------------------------------------------


class Browser:
    """A cookie-keeping HTTP client, as a participant's (or an attacker's) browser."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar))

    def cookie(self, name: str) -> str:
        return next((c.value for c in self.jar if c.name == name), "")

    def get(self, path: str) -> tuple[int, str, str]:
        return self._open(urllib.request.Request(self.base + path))

    def post(self, path: str, data: dict | None = None) -> tuple[int, str, str]:
        if not self.cookie("csrftoken"):
            self.get(path)
        body = urllib.parse.urlencode({**(data or {})}).encode()
        headers = {"X-CSRFToken": self.cookie("csrftoken"), "Referer": self.base + path}
        return self._open(urllib.request.Request(self.base + path, body, headers))

    def _open(self, request: urllib.request.Request) -> tuple[int, str, str]:
        try:
            with self.opener.open(request, timeout=20) as response:
                return response.status, response.geturl(), response.read().decode()
        except urllib.error.HTTPError as err:
            return err.code, err.geturl(), err.read().decode()


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    from tests.e2e.site import LiveSite

    site = LiveSite(
        tmp_path_factory.mktemp("attack-site"),
        DEBUG="false",
        SECRET_KEY="",
        AGENT_DELAY_SECONDS="0",
        PARTICIPANT_RATE_BURST="10",
        LOG_LEVEL="INFO",
    )
    site.manage("migrate", "--noinput", "-v", "0")
    site.manage("seed_demo")
    site.start()
    yield site
    site.stop()


def shell(site, code: str) -> str:
    return site.manage("shell", "-c", code).strip().splitlines()[-1]


def test_the_served_site_with_debug_off_serves_static_files_and_friendly_errors(served):
    browser = Browser(served.url)
    status, _, css = browser.get("/static/css/site.css")
    assert status == 200 and "--accent" in css
    status, _, home = browser.get("/")
    assert status == 200
    for src in re.findall(r'src="(/static/[^"]+)"', home):
        assert browser.get(src)[0] == 200, src
    status, _, text = browser.get("/no/such/page/")
    assert status == 404 and "This page is not here" in text and "URLconf" not in text


def test_a_static_path_that_climbs_out_or_an_invite_404_logs_no_stack_and_no_secret(served):
    import http.client

    before = served.log_path.read_text(errors="replace").count("Traceback")
    host, port = served.url.removeprefix("http://").rstrip("/").split(":")
    for path in ("/static/../studyapp/settings.py", "/static/%2e%2e/%2e%2e/etc/passwd"):
        connection = http.client.HTTPConnection(host, int(port), timeout=20)
        connection.request("GET", path)
        response = connection.getresponse()
        body = response.read().decode()
        assert response.status == 400, path
        assert "SECRET_KEY" not in body and "root:" not in body and "Traceback" not in body
    # a personal link's token is a secret: a 404 on it is logged with the token masked
    token = "tok" + "9" * 30
    assert Browser(served.url).get(f"/i/{token}/")[0] == 404
    time.sleep(0.5)
    log = served.log_path.read_text(errors="replace")
    assert log.count("Traceback") == before
    # (this test site has daphne's access log on, which names every path and query; the Procfile
    # keeps it off unless ACCESS_LOG is set)
    lines = [line for line in log.splitlines() if not re.search(r'\] "[A-Z]+ /', line)]
    # Each line as the site's formatter writes it (time, level, logger), then the message.
    assert any(line.endswith("Not Found: /i/…/") for line in lines)
    assert not any(token in line for line in lines)


def test_an_attacker_on_the_served_site_gets_no_seat_word_or_code(served):
    from websockets.sync.client import connect

    pid, session = "5f0c0ffee0c0ffee0c0aaaa1", "sess-aaa1"
    link = f"/s/demo/?PROLIFIC_PID={pid}&STUDY_ID=st&SESSION_ID={session}"
    alice = Browser(served.url)
    status, where, _ = alice.post(link)
    assert status == 200 and "/consent/" in where, where
    public_id = where.rstrip("/").split("/")[-2]
    version = shell(
        served,
        "from studyapp.participants.models import Study; "
        "print(Study.objects.get(slug='demo').consent_version)",
    )
    alice.post(f"/p/{public_id}/consent/", {"version": version, "agree": "on"})
    answers = json.loads(
        shell(
            served,
            "import json; from studyapp.participants.models import "
            "Study; from studyapp.participants.steps import study_checks; "
            "print(json.dumps([c['answer'] for c in "
            "study_checks(Study.objects.get(slug='demo'))]))",
        )
    )
    alice.post(f"/p/{public_id}/instructions/", {f"check_{i}": a for i, a in enumerate(answers)})
    status, table_url, _ = alice.post(f"/p/{public_id}/play/")
    assert "/tables/" in table_url, table_url
    table_id = int(table_url.rstrip("/").split("/")[-1])
    answer = shell(
        served,
        f"from studyapp.tables.models import Table; "
        f"print(Table.objects.get(pk={table_id}).config['answer'])",
    )
    key = alice.cookie("sessionid")

    # the seat's own socket: frames never name the word before the game ends
    ws_url = served.url.replace("http", "ws") + f"/ws/tables/{table_id}/"
    headers = {"Cookie": f"sessionid={key}", "Origin": served.url}
    frames = []
    with connect(ws_url, additional_headers=headers, open_timeout=10) as ws:
        frames.append(ws.recv(timeout=10))
        ws.send(json.dumps({"type": "question", "text": "Is it alive?"}))
        frames += [ws.recv(timeout=10), ws.recv(timeout=10)]
        ws.send("[" * 50_000)
        frames.append(ws.recv(timeout=10))
        ws.send(json.dumps({"type": "question", "text": "Is it\u0000 odd?"}))
        frames.append(ws.recv(timeout=10))
    assert "could not be read" in frames[-2] and "U+0000" in frames[-1]
    for frame in frames:
        assert not names(outside_the_word_list(frame), answer)

    # the attacker: the same Prolific ID without the submission, a guessed seat, guessed codes
    mallory = Browser(served.url)
    status, _, text = mallory.post(f"/s/demo/?PROLIFIC_PID={pid}&STUDY_ID=st")
    assert status == 409 and "already taking part" in text
    for path in (f"/p/{public_id}/play/", f"/p/{public_id}/done/", table_url[len(served.url) :]):
        status, _, text = mallory.get(path)
        assert status == 404 and not names(outside_the_word_list(text), answer)
    # no seat, no staff login: refused at the handshake
    with (
        pytest.raises(Exception),  # noqa: B017 - the client's error type is not the point
        connect(ws_url, additional_headers={"Origin": served.url}, open_timeout=10) as ws,
    ):
        ws.recv(timeout=5)
    codes = json.loads(
        shell(
            served,
            "import json; from studyapp.participants.models import "
            "Study; s = Study.objects.get(slug='demo'); print(json.dumps("
            "[s.code_finished, s.code_dropped]))",
        )
    )
    pages = [mallory.get(f"/s/demo/complete/?cc={c}")[2] for c in [*codes, "NOTACODE"]]
    token = re.compile(r'"X-CSRFToken": "\w+"')
    shapes = {
        token.sub("", p.replace(c, "CODE"))
        for p, c in zip(pages, [*codes, "NOTACODE"], strict=True)
    }
    assert len(shapes) == 1  # every guess gets the same page

    # thirty new participants in a second from one address: refused after a few, with a page
    # (the limit counts in fixed 10-second windows: thirty posts that straddle a window's end on
    # a slow machine may get two bursts of 10 through, never more)
    results = [Browser(served.url).post("/s/demo/")[0] for _ in range(30)]
    assert results.count(429) >= 10 and results[0] == 200

    # nothing secret in the server's log (access log and warnings at INFO); the attacker's own
    # guesses at /complete/?cc= are theirs, not a leak
    time.sleep(0.5)
    log = served.log_path.read_text(errors="replace")
    assert key not in log and not names(log, answer)
    ours = "\n".join(line for line in log.splitlines() if "cc=" not in line)
    for code in codes:
        assert code not in ours, code


def test_check_deploy_is_clean_with_the_documented_production_settings(tmp_path):
    env = {
        "PATH": "/usr/bin:/bin",
        "VAR_DIR": str(tmp_path),
        "SECRET_KEY": "k" * 20 + "-production-key-of-more-than-fifty-characters-9f3a",
        "ALLOWED_HOSTS": "games.example.org",
        "HTTPS": "true",
        "SECURE_PROXY_SSL_HEADER": "X-Forwarded-Proto",
        "CSRF_TRUSTED_ORIGINS": "https://games.example.org",
    }
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout
    docs = (ROOT / "docs/production.md").read_text()
    for name in ("HTTPS=true", "SECURE_PROXY_SSL_HEADER=X-Forwarded-Proto", "check --deploy"):
        assert name in docs


def test_debug_is_off_and_a_secret_key_is_made_once_when_none_is_given(tmp_path):
    code = "from django.conf import settings; print(settings.DEBUG, settings.SECRET_KEY)"
    env = {
        "PATH": "/usr/bin:/bin",
        "VAR_DIR": str(tmp_path),
        "DJANGO_SETTINGS_MODULE": "studyapp.settings",
    }
    runs = [
        subprocess.run(
            [sys.executable, "-c", f"import django; django.setup(); {code}"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        ).stdout.split()
        for _ in range(2)
    ]
    assert runs[0][0] == "False" and runs[0] == runs[1] and len(runs[0][1]) >= 50
    assert (tmp_path / "secret_key").stat().st_mode & 0o077 == 0
    with_debug = subprocess.run(
        [sys.executable, "-c", f"import django; django.setup(); {code}"],
        cwd=ROOT,
        env={**env, "DEBUG": "1"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert with_debug.stdout.split()[0] == "True"
