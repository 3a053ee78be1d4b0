"""The client's address behind a reverse proxy (studyapp.proxy): believed from trusted proxies
only, read from the right of X-Forwarded-For; and, through a real loopback proxy in front of a
real daphne, the new-participant limit counts people, not the proxy, while a forged header
counts as whoever sent it."""

from __future__ import annotations

import http.client
import re
from pathlib import Path

import pytest

from studyapp.proxy import client_address, parse_networks
from tests.e2e.site import LiveSite
from tests.fakes.reverse_proxy import ReverseProxy
from tests.ratelimits import at_window_start

LOOPBACK = parse_networks("127.0.0.1, ::1")


def test_a_trusted_proxys_forwarded_address_is_the_client():
    assert client_address("127.0.0.1", ["203.0.113.9"], LOOPBACK) == "203.0.113.9"


def test_what_the_client_wrote_left_of_the_proxys_entry_is_ignored():
    assert client_address("127.0.0.1", ["6.6.6.6, 203.0.113.9"], LOOPBACK) == "203.0.113.9"


def test_a_chain_of_trusted_proxies_is_walked_from_the_right():
    chain = parse_networks("127.0.0.1, 10.0.0.0/8")
    assert client_address("127.0.0.1", ["6.6.6.6", "198.51.100.4, 10.1.2.3"], chain) == (
        "198.51.100.4"
    )


def test_a_client_that_is_not_a_proxy_keeps_its_own_address():
    assert client_address("198.51.100.7", ["203.0.113.9"], LOOPBACK) == "198.51.100.7"
    assert client_address("127.0.0.1", ["203.0.113.9"], ()) == "127.0.0.1"


def test_junk_in_the_header_stops_the_walk_at_the_proxy():
    assert client_address("127.0.0.1", ["<script>"], LOOPBACK) == "127.0.0.1"
    assert client_address("127.0.0.1", ["[2001:db8::1]:443"], LOOPBACK) == "2001:db8::1"


def test_a_bad_trusted_proxies_setting_is_named():
    with pytest.raises(ValueError, match="'nonsense' is not an address"):
        parse_networks("127.0.0.1, nonsense")


CSRF = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')


def start(port: int, source: str, n: int, forged: str | None = None) -> int:
    """One person from ``source`` (a loopback address of their own) presses Start on the demo
    study's link; the status of that POST."""
    path = f"/s/demo/?PROLIFIC_PID={n:024x}&STUDY_ID=proxy&SESSION_ID=s{n}"
    extra = {"X-Forwarded-For": forged} if forged else {}

    def call(method: str, body: str | None, cookies: str) -> http.client.HTTPResponse:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30, source_address=(source, 0))
        headers = {"Host": f"127.0.0.1:{port}", **extra}
        if cookies:
            headers["Cookie"] = cookies
        if body is not None:
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        conn.request(method, path, body=body, headers=headers)
        answer = conn.getresponse()
        answer.text = answer.read().decode()  # type: ignore[attr-defined]
        conn.close()
        return answer

    page = call("GET", None, "")
    assert page.status == 200, page.status
    cookies = "; ".join(
        v.split(";", 1)[0] for k, v in page.getheaders() if k.lower() == "set-cookie"
    )
    token = CSRF.search(page.text)  # type: ignore[attr-defined]
    assert token is not None
    return call("POST", f"csrfmiddlewaretoken={token[1]}", cookies).status


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory):
    live = LiveSite(
        Path(tmp_path_factory.mktemp("proxy-site")),
        DATABASE_URL="",
        REDIS_URL="",
        TRUSTED_PROXIES="127.0.0.1",
        PARTICIPANT_RATE_BURST="3",
        PARTICIPANT_RATE_PER_MINUTE="100",
    )
    live.start()
    live.manage("seed_demo")
    yield live
    live.stop()


def test_people_behind_the_proxy_are_counted_apart(site):
    with ReverseProxy(site.port) as proxy:
        statuses = [start(proxy.port, f"127.0.0.{10 + i}", 100 + i) for i in range(8)]
    assert statuses == [302] * 8  # 8 people > the burst of 3: the proxy was not the one counted
    assert proxy.forwarded[-1] == "127.0.0.17"


def test_a_forged_header_through_the_proxy_counts_as_its_sender(site):
    with ReverseProxy(site.port) as proxy:
        at_window_start()
        statuses = [
            start(proxy.port, "127.0.0.40", 200 + i, forged=f"203.0.113.{i}") for i in range(5)
        ]
    assert statuses == [302, 302, 302, 429, 429]


def test_a_forged_header_straight_to_daphne_is_not_believed(site):
    at_window_start()
    statuses = [start(site.port, "127.0.0.50", 300 + i, forged=f"198.51.100.{i}") for i in range(5)]
    assert statuses == [302, 302, 302, 429, 429]
