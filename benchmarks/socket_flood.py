"""What one flooding socket costs everyone else: other people's page p50 on one daphne, first
without the flood, then (same run, same server) while one table socket sends ``--rate`` frames a
second (junk, heartbeats and moves mixed), and the ratio. Issue 35 asks the ratio to stay under
2. Also the daphne's CPU seconds per phase, and how many of ``--sockets`` sockets opened on the
flooder's one seat were accepted (SOCKETS_PER_SEAT caps them).

    .venv/bin/python benchmarks/socket_flood.py --rate 1000 --seconds 8 --users 8
    DATABASE_URL=postgres://... REDIS_URL=redis://127.0.0.1:6379/14 .venv/bin/python \\
        benchmarks/socket_flood.py --sockets 20

Prints one JSON object. The site runs with its default limits (SOCKET_FRAME_BURST, ...)."""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
import tempfile
import time
from pathlib import Path

import aiohttp

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.ws_load import cpu_seconds, percentile  # noqa: E402
from tests.e2e.site import LiveSite  # noqa: E402

CSRF = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rate", type=int, default=1000, help="frames a second from the flooder")
    parser.add_argument("--seconds", type=float, default=8.0, help="length of each phase")
    parser.add_argument("--users", type=int, default=8, help="other people loading their pages")
    parser.add_argument("--sockets", type=int, default=1, help="flooding sockets on one seat")
    return parser.parse_args()


async def sit_down(base: str) -> tuple[aiohttp.ClientSession, str]:
    """A browser of its own that starts an open Twenty Questions game: (session, table URL)."""
    http = aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True))
    async with http.get(base + "/") as home:
        token = CSRF.search(await home.text())
    assert token is not None, "the home page has no form"
    async with http.post(
        base + "/play/twenty-questions/",
        data={"csrfmiddlewaretoken": token[1]},
        headers={"Referer": base + "/"},
    ) as table:
        assert table.status == 200, table.status
        return http, str(table.url)


async def load_pages(http: aiohttp.ClientSession, url: str, until: float) -> list[float]:
    times = []
    while time.monotonic() < until:
        started = time.perf_counter()
        async with http.get(url) as page:
            await page.read()
            assert page.status == 200, page.status
        times.append((time.perf_counter() - started) * 1000)
        await asyncio.sleep(0.05)  # a person reloading, not a benchmark tool
    return times


async def flood(
    http: aiohttp.ClientSession, ws_url: str, origin: str, rate: int, until: float, sent: list[int]
) -> bool:
    try:
        ws = await http.ws_connect(ws_url, headers={"Origin": origin})
    except aiohttp.WSServerHandshakeError:
        return False
    frames = [
        "junk",
        json.dumps({"type": "heartbeat"}),
        json.dumps({"type": "question", "text": "Is it a fruit?", "HEADERS": {}}),
    ]

    async def read() -> None:
        async for message in ws:
            if message.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.ERROR):
                return

    reader = asyncio.create_task(read())
    try:
        first = await ws.receive(timeout=10)
        if first.type != aiohttp.WSMsgType.TEXT:
            return False
        batch = max(1, rate // 100)
        n = 0
        while time.monotonic() < until and not ws.closed:
            for _ in range(batch):
                await ws.send_str(frames[n % len(frames)])
                n += 1
            sent[0] += batch
            await asyncio.sleep(batch / rate)
    finally:
        reader.cancel()
        await ws.close()
    return True


def p50(values: list[float]) -> float:
    return round(percentile(values, 0.5), 1)


async def run(args: argparse.Namespace, site: LiveSite) -> dict:
    base = site.url
    users = [await sit_down(base) for _ in range(args.users)]
    flooder, flooder_url = await sit_down(base)
    table_id = flooder_url.rstrip("/").rsplit("/", 1)[1]
    ws_url = base.replace("http", "ws") + f"/ws/tables/{table_id}/"
    pid = site.process.pid
    # Warm-up: every page once.
    await asyncio.gather(*(load_pages(h, u, time.monotonic() + 1) for h, u in users))

    cpu0 = cpu_seconds(pid)
    until = time.monotonic() + args.seconds
    baseline = await asyncio.gather(*(load_pages(h, u, until) for h, u in users))
    cpu1 = cpu_seconds(pid)

    sent = [0]
    until = time.monotonic() + args.seconds
    flooders = [
        flood(flooder, ws_url, base, args.rate // args.sockets, until, sent)
        for _ in range(args.sockets)
    ]
    results = await asyncio.gather(*(load_pages(h, u, until) for h, u in users), *flooders)
    cpu2 = cpu_seconds(pid)
    flooded = results[: len(users)]
    accepted = sum(bool(r) for r in results[len(users) :])
    for http, _ in [*users, (flooder, "")]:
        await http.close()
    base_p50 = p50([t for per in baseline for t in per])
    flood_p50 = p50([t for per in flooded for t in per])
    return {
        "users": args.users,
        "rate_asked": args.rate,
        "frames_sent": sent[0],
        "frames_per_second_sent": round(sent[0] / args.seconds),
        "sockets_asked": args.sockets,
        "sockets_accepted": accepted,
        "pages_baseline": sum(len(t) for t in baseline),
        "pages_flooded": sum(len(t) for t in flooded),
        "p50_ms_baseline": base_p50,
        "p50_ms_flooded": flood_p50,
        "p50_ratio": round(flood_p50 / base_p50, 2),
        "daphne_cpu_s_baseline": round(cpu1 - cpu0, 2),
        "daphne_cpu_s_flooded": round(cpu2 - cpu1, 2),
        "seconds_per_phase": args.seconds,
    }


def main() -> None:
    args = parse_args()
    site = LiveSite(
        Path(tempfile.mkdtemp(prefix="socket-flood-")),
        DEBUG="false",
        ALLOWED_HOSTS="127.0.0.1",
        # the site's own move limits, not the browser tests' raised ones
        SOCKET_MOVE_BURST="5",
        SOCKET_MOVES_PER_SECOND="2",
        PARTICIPANT_RATE_BURST="1000",
        PARTICIPANT_RATE_PER_MINUTE="1000",
    )
    site.start()
    try:
        print(json.dumps(asyncio.run(run(args, site)), indent=2))
    finally:
        site.stop()


if __name__ == "__main__":
    main()
