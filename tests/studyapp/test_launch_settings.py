"""The launch settings that explain themselves (studyapp.proxy, studyapp.middleware, /healthz):
X-Forwarded-For from a peer that is not a trusted proxy is said once (log, and /healthz for staff
only); a trusted proxy's X-Forwarded-Proto makes the request HTTPS and the session and CSRF
cookies Secure; every page carries a Content-Security-Policy and no page has inline script or
style for it to refuse."""

from __future__ import annotations

import asyncio
import logging
import re
from pathlib import Path

import pytest
from channels.testing import HttpCommunicator
from django.contrib.auth import get_user_model
from django.test import Client

from studyapp import proxy
from studyapp.asgi import application
from studyapp.proxy import ForwardedFor, parse_networks

ROOT = Path(__file__).resolve().parents[2]
LOOPBACK = parse_networks("127.0.0.1, ::1")


def seen_scope(peer: str, headers: dict[str, str], kind: str = "http") -> dict:
    seen: dict = {}

    async def app(scope, receive, send) -> None:
        seen.update(scope)

    scope = {
        "type": kind,
        "scheme": "http" if kind == "http" else "ws",
        "client": [peer, 5000],
        "headers": [(k.lower().encode(), v.encode()) for k, v in headers.items()],
    }
    asyncio.run(ForwardedFor(app, LOOPBACK)(scope, None, None))
    return seen


@pytest.fixture
def fresh_untrusted(monkeypatch):
    monkeypatch.setattr(proxy, "UNTRUSTED", proxy.Untrusted())
    from django.core.cache import cache

    cache.delete(proxy.CACHE_KEY)
    yield proxy.UNTRUSTED
    cache.delete(proxy.CACHE_KEY)


def test_a_trusted_proxys_forwarded_proto_makes_the_request_https() -> None:
    https = {"X-Forwarded-For": "203.0.113.9", "X-Forwarded-Proto": "https"}
    assert seen_scope("127.0.0.1", https)["scheme"] == "https"
    assert seen_scope("127.0.0.1", https, "websocket")["scheme"] == "wss"
    assert seen_scope("127.0.0.1", {"X-Forwarded-Proto": "http"})["scheme"] == "http"


def test_an_untrusted_peers_headers_change_nothing_and_are_said_once(
    fresh_untrusted, caplog
) -> None:
    forged = {"X-Forwarded-For": "203.0.113.9", "X-Forwarded-Proto": "https"}
    with caplog.at_level(logging.WARNING, logger="studyapp.proxy"):
        for _ in range(5):
            scope = seen_scope("198.51.100.20", forged)
            assert scope["scheme"] == "http" and scope["client"][0] == "198.51.100.20"
        seen_scope("198.51.100.21", forged)
    lines = [r.getMessage() for r in caplog.records if r.name == "studyapp.proxy"]
    assert len(lines) == 1, lines
    assert lines[0].startswith("X-Forwarded-For received from 198.51.100.20, which is not in")
    assert "add it to TRUSTED_PROXIES" in lines[0]
    assert fresh_untrusted.peers == {"198.51.100.20": 5, "198.51.100.21": 1}
    assert set(fresh_untrusted.report()) == {"198.51.100.20", "198.51.100.21"}


def test_healthz_names_the_untrusted_proxy_to_staff_only(db, fresh_untrusted) -> None:
    seen_scope("198.51.100.30", {"X-Forwarded-For": "203.0.113.9"})
    anyone = Client().get("/healthz").json()
    assert "staff" not in anyone and "198.51.100.30" not in str(anyone)
    staff = Client()
    staff.force_login(get_user_model().objects.create_user("r", is_staff=True))
    detail = staff.get("/healthz").json()["staff"]["proxy"]
    assert detail.startswith("X-Forwarded-For ignored from 198.51.100.30 (since ")
    assert "TRUSTED_PROXIES" in detail


def test_healthz_tells_staff_when_no_proxy_is_ignored(db, fresh_untrusted) -> None:
    staff = Client()
    staff.force_login(get_user_model().objects.create_user("r", is_staff=True))
    assert staff.get("/healthz").json()["staff"] == {
        "proxy": "no X-Forwarded-For from an untrusted address"
    }


def test_the_cookies_are_secure_over_https_only(db, settings) -> None:
    settings.SESSION_COOKIE_SECURE = settings.CSRF_COOKIE_SECURE = False
    plain = Client().get("/")
    assert plain.cookies["csrftoken"]["secure"] == ""
    secure = Client().get("/", secure=True)
    assert secure.cookies["csrftoken"]["secure"] is True
    get_user_model().objects.create_user("s", is_staff=True)
    logged_in = Client()
    response = logged_in.post(
        "/admin/login/?next=/admin/", {"username": "s", "password": "x"}, secure=True
    )
    assert response.status_code == 200  # a wrong password; the form again
    user = get_user_model().objects.get(username="s")
    user.set_password("pw-for-test")
    user.save()
    response = logged_in.post(
        "/admin/login/?next=/admin/", {"username": "s", "password": "pw-for-test"}, secure=True
    )
    assert response.status_code == 302
    assert response.cookies["sessionid"]["secure"] is True
    response = Client().post(
        "/admin/login/?next=/admin/", {"username": "s", "password": "pw-for-test"}
    )
    assert response.cookies["sessionid"]["secure"] == ""


def test_every_page_has_a_content_security_policy(db, settings) -> None:
    for path in ("/", "/healthz", "/admin/login/", "/s/no-such-study/", "/static/js/table.js"):
        response = Client().get(path)
        if path.startswith("/static/"):
            continue  # files, not pages
        policy = response["Content-Security-Policy"]
        assert "script-src 'self'" in policy and "style-src 'self'" in policy, path
        assert "unsafe-inline" not in policy and "unsafe-eval" not in policy


async def test_static_files_carry_the_policy_too() -> None:
    """daphne serves /static/ outside the middleware (studyapp.asgi.StaticFiles): the same
    policy, and nosniff, on a script, a stylesheet and a missing file's 404."""
    for path in ("/static/js/table.js", "/static/css/site.css", "/static/js/no-such.js"):
        served = HttpCommunicator(application, "GET", path, headers=[(b"host", b"localhost")])
        await served.send_input({"type": "http.request", "body": b""})
        answer = await served.receive_output(5)  # the response's start: status and headers
        await served.wait(5)
        headers = {k.decode().lower(): v.decode() for k, v in answer["headers"]}
        assert answer["status"] in (200, 404), (path, answer["status"])
        assert "script-src 'self'" in headers.get("content-security-policy", ""), path
        assert headers.get("x-content-type-options") == "nosniff", path


INLINE = re.compile(r"<script(?![^>]*\bsrc=)[^>]*>|<style\b|\sstyle=\"|\son[a-z]+=\"", re.I)


def test_no_page_has_inline_script_or_style() -> None:
    """What the policy would refuse: a script without src, a <style>, a style or on... attribute
    (the site's templates and the apps')."""
    found = [
        f"{path.relative_to(ROOT)}: {match[0]}"
        for folder in (ROOT / "templates", ROOT / "studyapp")
        for path in folder.rglob("*.html")
        for match in INLINE.finditer(path.read_text())
    ]
    assert found == []


def test_peers_sending_the_header_directly_are_remembered_up_to_a_bound(fresh_untrusted) -> None:
    for n in range(proxy.Untrusted.MOST_PEERS + 20):
        seen_scope(f"198.51.{n // 250}.{n % 250}", {"X-Forwarded-For": "203.0.113.9"})
    assert len(fresh_untrusted.peers) == proxy.Untrusted.MOST_PEERS
