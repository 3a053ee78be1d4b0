"""Redis out of reach (a site with REDIS_URL and the Celery broker on a port where nothing
listens, as while Redis restarts): a new participant at the study link gets no 500, pages answer,
and a table's socket handshake is accepted with its board (a real daphne, real HTTP and
WebSocket clients)."""

from __future__ import annotations

import asyncio
import re
import shutil
import subprocess
from pathlib import Path

import aiohttp
import pytest

from tests.e2e.site import LiveSite, free_port

CSRF = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')


REDIS_PORT = free_port()


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory):
    dead = f"redis://127.0.0.1:{REDIS_PORT}/0"
    live = LiveSite(
        Path(tmp_path_factory.mktemp("redis-down")),
        DATABASE_URL="",
        REDIS_URL=dead,
        CELERY_BROKER_URL=dead,
        CELERY_TASK_ALWAYS_EAGER="false",
        DEBUG="false",
        ALLOWED_HOSTS="127.0.0.1",
        PARTICIPANT_RATE_BURST="2",
    )
    live.start()
    live.manage("seed_demo")
    yield live
    live.stop()


async def _form(http: aiohttp.ClientSession, url: str) -> dict[str, str]:
    async with http.get(url) as page:
        assert page.status == 200, page.status
        token = CSRF.search(await page.text())
    assert token is not None
    return {"csrfmiddlewaretoken": token[1]}


async def _new_participants(base: str, n: int) -> list[tuple[int, int, str]]:
    out = []
    for i in range(n):
        url = f"{base}/s/demo/?PROLIFIC_PID={i + 1:024x}&STUDY_ID=redis&SESSION_ID=r{i}"
        async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as http:
            form = await _form(http, url)
            async with http.post(url, data=form, allow_redirects=False) as started:
                status, where = started.status, started.headers.get("Location", "")
            async with http.get(base + where) as landed:
                out.append((status, landed.status, where))
    return out


def test_new_participants_get_no_500_while_redis_is_unreachable(site):
    started = asyncio.run(_new_participants(site.url, 4))
    # The limit cannot be counted without Redis: it lets people through (and logs it) rather
    # than turn everyone away, so 4 people over a burst of 2 all reach the consent page.
    assert [(s, landed) for s, landed, _ in started] == [(302, 200)] * 4, started
    assert all(where.endswith("/consent/") for _, _, where in started)
    log = site.log_path.read_text()
    assert "rate limit participants not counted (let through)" in log
    assert '" 500 ' not in log


async def _play_and_connect(base: str, then_start_redis: bool = False) -> tuple[int, str]:
    async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as http:
        form = await _form(http, base + "/")
        async with http.post(
            base + "/play/twenty-questions/", data=form, headers={"Referer": base + "/"}
        ) as table_page:
            assert table_page.status == 200, table_page.status
            table_id = int(str(table_page.url).rstrip("/").rsplit("/", 1)[1])
        ws_url = base.replace("http", "ws") + f"/ws/tables/{table_id}/"
        async with http.ws_connect(ws_url, headers={"Origin": base}) as ws:
            first = await ws.receive(timeout=20)
            if not then_start_redis:
                return first.type.value, str(first.data)
            server = subprocess.Popen(
                ["redis-server", "--port", str(REDIS_PORT), "--save", "", "--appendonly", "no"],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            try:
                # No heartbeat from this client: the socket finds Redis back by itself, sends
                # its board, and hears the table's broadcasts from then on (its own move's).
                await ws.receive(timeout=30)
                move = {"type": "question", "text": "Is it a fruit?", "HEADERS": {}}
                await ws.send_json(move)
                again = await ws.receive(timeout=15)
            finally:
                server.terminate()
                server.wait(timeout=10)
            return again.type.value, str(again.data)


def test_a_table_socket_is_accepted_with_its_board_while_redis_is_unreachable(site):
    kind, data = asyncio.run(_play_and_connect(site.url))
    assert kind == aiohttp.WSMsgType.TEXT.value, (kind, data)
    assert 'id="board"' in data or "board" in data
    log = site.log_path.read_text()
    assert "without broadcasts, redis unavailable" in log
    assert '" 500 ' not in log and "WSREJECT" not in log


@pytest.mark.skipif(shutil.which("redis-server") is None, reason="redis-server is not installed")
def test_a_socket_opened_without_redis_listens_once_redis_is_back(site):
    kind, data = asyncio.run(_play_and_connect(site.url, then_start_redis=True))
    assert kind == aiohttp.WSMsgType.TEXT.value, (kind, data)
    assert "Is it a fruit?" in data


async def _many_sockets_at_once(base: str, n: int) -> list[str]:
    """``n`` people, each at a table of their own, open their table sockets at the same moment
    (as after a restart, or pages reconnecting together); what each first receives."""
    sessions, urls = [], []
    try:
        for _ in range(n):
            http = aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True))
            sessions.append(http)
            form = await _form(http, base + "/")
            async with http.post(
                base + "/play/twenty-questions/", data=form, headers={"Referer": base + "/"}
            ) as table_page:
                assert table_page.status == 200, table_page.status
                table_id = int(str(table_page.url).rstrip("/").rsplit("/", 1)[1])
            urls.append(base.replace("http", "ws") + f"/ws/tables/{table_id}/")

        async def first(http: aiohttp.ClientSession, url: str) -> str:
            try:
                async with http.ws_connect(url, headers={"Origin": base}) as ws:
                    message = await ws.receive(timeout=20)
                    return "board" if 'id="board"' in str(message.data) else str(message.type)
            except aiohttp.ClientError as err:
                return f"{type(err).__name__}: {err}"

        return list(
            await asyncio.gather(*(first(h, u) for h, u in zip(sessions, urls, strict=True)))
        )
    finally:
        for http in sessions:
            await http.close()


def test_many_sockets_connecting_at_once_are_all_accepted_while_redis_is_unreachable(site):
    """channels-redis subscribes a process's sockets one at a time, and with Redis away each try
    took most of a second: the later handshakes outlasted daphne's 5 s handshake timeout and had
    their connections reset ('Connection reset by peer'). Now a handshake waits a bounded time
    for the layer, and after a failure the layer is left alone for a few seconds."""
    got = asyncio.run(_many_sockets_at_once(site.url, 12))
    assert got == ["board"] * 12, got
