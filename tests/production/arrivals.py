"""People opening a study link at once, as their browsers do: each with a cookie jar of its own
reads the welcome page, presses Start (the form posts back with its CSRF token) and follows the
redirect to the consent page. Used by the production tests and benchmarks/db_connections.py."""

from __future__ import annotations

import asyncio
import random
import re
import secrets
import time
from collections import Counter
from dataclasses import dataclass
from typing import Any

import aiohttp

CSRF = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')
CONSENT = re.compile(r"/p/[^/]+/consent/$")


@dataclass
class Arrival:
    """What one person met: the status of each page and where they ended up."""

    statuses: list[int]
    landed: str = ""
    error: str = ""
    seconds: float = 0.0

    @property
    def consented_page(self) -> bool:
        """Reached the consent page (a 200 at /p/<id>/consent/) with no error on the way."""
        return not self.error and self.statuses[-1:] == [200] and bool(CONSENT.search(self.landed))


async def arrive(
    base: str,
    slug: str,
    delay: float = 0.0,
    timeout: float = 60.0,
    headers: dict[str, str] | None = None,
) -> Arrival:
    await asyncio.sleep(delay)
    pid = secrets.token_hex(12)  # a Prolific ID: 24 characters, 0-9 and a-f
    url = f"{base}/s/{slug}/?PROLIFIC_PID={pid}&STUDY_ID=load&SESSION_ID=s{pid[:8]}"
    arrival = Arrival(statuses=[])
    started = time.monotonic()
    jar = aiohttp.CookieJar(unsafe=True)  # cookies for 127.0.0.1
    try:
        async with aiohttp.ClientSession(
            cookie_jar=jar, timeout=aiohttp.ClientTimeout(total=timeout), headers=headers
        ) as http:
            async with http.get(url) as response:
                arrival.statuses.append(response.status)
                page = await response.text()
            token = CSRF.search(page)
            if response.status != 200 or token is None:
                arrival.error = f"welcome page answered {response.status} without its form"
                return arrival
            form = {"csrfmiddlewaretoken": token[1]}
            async with http.post(url, data=form, headers={"Referer": url}) as response:
                arrival.statuses.append(response.status)
                arrival.landed = str(response.url.with_query(None))
                await response.read()
    except (aiohttp.ClientError, TimeoutError) as err:
        arrival.error = f"{type(err).__name__}: {err}"
    finally:
        arrival.seconds = time.monotonic() - started
    return arrival


async def crowd(bases: list[str], slug: str, people: int, spread: float) -> list[Arrival]:
    """``people`` arrivals spread at random over ``spread`` seconds, shared out over the
    ``bases`` (one per daphne process, as a proxy would)."""
    return await asyncio.gather(
        *(arrive(bases[i % len(bases)], slug, random.uniform(0, spread)) for i in range(people))
    )


def summary(arrivals: list[Arrival]) -> dict[str, Any]:
    seconds = sorted(a.seconds for a in arrivals)
    return {
        "people": len(arrivals),
        "reached_consent": sum(a.consented_page for a in arrivals),
        "statuses": dict(Counter(s for a in arrivals for s in a.statuses)),
        "errors": sorted({a.error for a in arrivals if a.error})[:5],
        "p50_s": round(seconds[len(seconds) // 2], 2) if seconds else None,
        "max_s": round(seconds[-1], 2) if seconds else None,
    }
