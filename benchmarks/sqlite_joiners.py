"""A classroom pilot on a laptop: N people open the demo study link at the same moment and go
through Start, consent and the first round, against `make run`'s embedded defaults (SQLite,
in-memory channel layer, in-process tasks) on a served daphne.

Prints JSON: how many joiners reached their first round, the HTTP status counts (a "database is
locked" error shows as 500s) and the slowest request. The per-address rate limit is raised for the
run (every joiner comes from 127.0.0.1 here, unlike a real classroom).

    .venv/bin/python benchmarks/sqlite_joiners.py --joiners 100
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import aiohttp

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.e2e.site import LiveSite  # noqa: E402


async def join(base: str, slug: str, statuses: Counter, slowest: list[float]) -> bool:
    jar = aiohttp.CookieJar(unsafe=True)  # cookies from an IP address (127.0.0.1)
    async with aiohttp.ClientSession(base_url=base, cookie_jar=jar) as http:

        async def step(method: str, url: str, data: dict | None = None) -> str:
            started = time.perf_counter()
            async with http.request(method, url, data=data, allow_redirects=True) as response:
                text = await response.text()
                statuses[response.status] += 1
                slowest.append(time.perf_counter() - started)
                if response.status >= 400:
                    raise RuntimeError(response.status)
                return str(response.url.path), text

        def token(page: str) -> str:
            return re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)

        try:
            _, page = await step("GET", f"/s/{slug}/")
            where, page = await step("POST", f"/s/{slug}/", {"csrfmiddlewaretoken": token(page)})
            version = re.search(r'name="version" value="([^"]+)"', page).group(1)
            form = {"csrfmiddlewaretoken": token(page), "version": version, "agree": "on"}
            where, page = await step("POST", where, form)
            answers = re.findall(r'name="(check_\d+)" value="([^"]+)"', page)
            form = {"csrfmiddlewaretoken": token(page)}
            for name, value in answers:  # the demo study's check: the oracle's three answers
                if value == "Yes, No or Invalid" or name not in form:
                    form[name] = value
            where, page = await step("POST", where, form)
            return "/play/" in where or "Round 1" in page
        except (RuntimeError, AttributeError):
            return False


async def run(base: str, slug: str, joiners: int) -> dict:
    statuses: Counter = Counter()
    slowest: list[float] = []
    started = time.perf_counter()
    reached = await asyncio.gather(*(join(base, slug, statuses, slowest) for _ in range(joiners)))
    return {
        "joiners": joiners,
        "reached_a_page_past_the_checks": sum(reached),
        "status_counts": {str(k): v for k, v in sorted(statuses.items())},
        "http_500": statuses.get(500, 0),
        "slowest_request_s": round(max(slowest or [0]), 3),
        "wall_s": round(time.perf_counter() - started, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--joiners", type=int, default=100)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as var:
        site = LiveSite(
            Path(var),
            DATABASE_URL="",
            REDIS_URL="",
            DEBUG="false",
            PARTICIPANT_RATE_BURST="100000",
            PARTICIPANT_RATE_PER_MINUTE="100000",
        )
        site.start()
        try:
            site.manage("seed_demo")
            figures = asyncio.run(run(site.url, "demo", args.joiners))
        finally:
            site.stop()
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
