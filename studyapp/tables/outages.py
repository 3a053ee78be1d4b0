"""The site's own outages, so that nobody's clock runs while the site could not hear them.

A person whose move could not be saved (the database or Redis away), or whose table's timers
could not run (beat or the workers cut off), did not leave their table: the turn deadline and the
study's idle limit do not count that time against them. Two things mark an outage, both kept in
the cache (Redis; best effort: with the cache away too, the sweep's gap below still shows it):

- **the sweep's gap**: the periodic sweep notes when it ran; one that finds its previous run
  longer ago than ``OUTAGE_GAP_SECONDS`` records the gap as an outage (no sweep means no beat,
  no broker, no worker or no database);
- **trouble seen**: a socket or page that meets a database or Redis error marks the moment
  (:func:`trouble`); each mark pauses the clocks for ``TROUBLE_SECONDS`` around it;
- **a seat cut off by the server**: a server process that goes away (a daphne restart or kill)
  takes its sockets with it without their close being heard, so their seats still read
  ``connected`` with a ``last_seen`` that stopped. When such a seat's page reconnects
  (:func:`reconnected`, from the socket's connect) the time since it was last heard from is an
  outage of that seat alone (:func:`seat_cut_off`); while it is still away (:func:`cut_off_now`)
  the driver does not judge its deadline, for at most ``CUT_OFF_WAIT_SECONDS``.

:func:`paused_seconds` is the length of the outages inside a waiting interval, which the deadline
and the idle limit add to their allowance (studyapp.tables.driver).
"""

from __future__ import annotations

import contextlib
import logging
import time
from datetime import datetime
from typing import Any

from django.conf import settings
from django.core.cache import cache

from studyapp.cache import UNREACHABLE

log = logging.getLogger(__name__)

LAST_SWEEP = "tables:outages:last-sweep"
OUTAGES = "tables:outages:list"
KEEP = 200  # outages remembered (a day's worth at the worst)
KEEP_SECONDS = 24 * 3600
TROUBLE_SECONDS = 10.0


def gap_seconds() -> float:
    return max(15.0, 3.0 * float(settings.TABLE_SWEEP_SECONDS))


def _add(start: float, end: float) -> None:
    outages = list(cache.get(OUTAGES) or [])
    if outages and start <= outages[-1][1] + 1:  # joins the last one
        outages[-1] = [min(outages[-1][0], start), max(outages[-1][1], end)]
    else:
        outages.append([start, end])
    cache.set(OUTAGES, outages[-KEEP:], KEEP_SECONDS)


def note_sweep(now: float | None = None) -> float:
    """Called by each sweep: records the gap since the previous one as an outage when it is too
    long; returns the gap in seconds (0 on the first sweep)."""
    now = time.time() if now is None else now
    try:
        last = cache.get(LAST_SWEEP)
        cache.set(LAST_SWEEP, now, KEEP_SECONDS)
        if last is None:
            return 0.0
        gap = now - float(last)
        if gap > gap_seconds():
            _add(float(last) + float(settings.TABLE_SWEEP_SECONDS), now)
            log.warning("no sweep for %.0f s: the tables' clocks are paused for that time", gap)
        return gap
    except UNREACHABLE:
        return 0.0


def trouble(now: float | None = None) -> None:
    """The site just failed to reach its database or Redis: pause the clocks around now."""
    now = time.time() if now is None else now
    with contextlib.suppress(*UNREACHABLE):  # both away: the sweep's gap covers it
        _add(now - TROUBLE_SECONDS / 2, now + TROUBLE_SECONDS / 2)


def silent_after() -> float:
    """How long a connected seat may go unheard before its socket counts as lost: two of the
    page's heartbeats (HEARTBEAT_SECONDS) missed. A page reloaded by its person reconnects well
    within it, so a reload never counts as the server's outage."""
    return 2.0 * float(settings.HEARTBEAT_SECONDS)


# The longest the driver waits for a seat cut off by the server to reconnect before it judges
# the seat's deadline as usual (a person who closed their laptop as the server restarted).
CUT_OFF_WAIT_SECONDS = 120.0


def table_key(table_id: int, created_at: datetime) -> str:
    """A table as the seat outages name it: its id and creation time (an id used again, in a
    test database made anew, is a new table), as its jobs' leases do."""
    return f"{table_id}:{int(created_at.timestamp() * 1_000_000)}"


def reconnected(
    table: str, seat: int, was_connected: bool, last_seen: datetime | None, now: float = 0.0
) -> float:
    """A seat's page connects again. If the seat still read connected (no close was heard: the
    server process holding its socket went away) and was last heard from longer than
    :func:`silent_after` ago, the time since is recorded as the seat's outage. Returns its
    length in seconds (0: none)."""
    if not was_connected or last_seen is None:
        return 0.0
    now = now or time.time()
    start = last_seen.timestamp()
    if now - start <= silent_after():
        return 0.0
    seat_cut_off(table, seat, start, now)
    return now - start


def cut_off_now(seat: Any, now: datetime) -> float:
    """Seconds a seat has been cut off by the server so far (0: not cut off): it reads
    connected but has not been heard from for longer than :func:`silent_after`."""
    if not getattr(seat, "connected", False) or seat.last_seen is None:
        return 0.0
    gap = (now - seat.last_seen).total_seconds()
    return gap if gap > silent_after() else 0.0


def seat_key(table: str, seat: int) -> str:
    return f"tables:outages:seat:{table}:{seat}"


def seat_cut_off(table: str, seat: int, start: float, end: float) -> None:
    """The server cut off the socket of seat ``seat`` from ``start`` to ``end`` (epoch seconds):
    its process went away (a daphne restart or kill) without the socket closing, and the page
    reconnected at ``end`` (:func:`reconnected`, from the socket's connect). That time is an
    outage of this seat alone: its deadline and idle limit do not count it. ``table``: its
    :func:`table_key`."""
    if end <= start:
        return
    key = seat_key(table, seat)
    with contextlib.suppress(*UNREACHABLE):
        kept = list(cache.get(key) or [])
        kept.append([start, end])
        cache.set(key, kept[-KEEP:], KEEP_SECONDS)
        log.info("table %s seat %s: cut off by the server for %.0f s", table, seat, end - start)


def merged(spans: list[list[float]]) -> list[list[float]]:
    """Intervals joined where they overlap, so that no second is counted twice."""
    out: list[list[float]] = []
    for a, b in sorted(spans):
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return out


# Redis away: the boards' countdowns and the deadlines read no outages for a few seconds after a
# failed read (counting none), rather than each waiting out the pools' retries again (every board
# a socket renders on connect reads them, and a burst of connects outlasted the handshake).
AWAY_SECONDS = 5.0
_away_until = 0.0


def paused_seconds(
    since: datetime | None,
    until: datetime,
    *,
    table: str | None = None,
    seat: int | None = None,
) -> float:
    """Seconds between ``since`` and ``until`` during which the site was out (see the module),
    or, given a table (its :func:`table_key`) and seat, the site or that seat's socket
    (:func:`seat_cut_off`)."""
    if since is None:
        return 0.0
    start, end = since.timestamp(), until.timestamp()
    global _away_until
    if time.monotonic() < _away_until:
        return 0.0
    keys = [OUTAGES] if table is None or seat is None else [OUTAGES, seat_key(table, seat)]
    try:
        found = cache.get_many(keys)  # one round trip for the site's and the seat's
    except UNREACHABLE:
        _away_until = time.monotonic() + AWAY_SECONDS
        return 0.0
    spans = [span for key in keys for span in found.get(key) or []]
    return sum(max(0.0, min(end, b) - max(start, a)) for a, b in merged(spans))
