"""``/healthz``: whether this site can serve, for a load balancer, supervisord's neighbours or a
monitor. It checks what a move needs: the database (one ``SELECT 1``), Redis where configured (a
``PING``) and, where background work goes to Celery, that a worker answers (Celery's own remote
control ping; a worker that answers is alive and consuming from the broker). In the embedded mode
there is no worker to ask, and the answer says so.

The answer is JSON: ``{"status": "ok", "checks": {"database": "ok", ...}}`` with 200, or
``"status": "failing"``, ``"failed": [the names]`` and 503. A staff login's browser also gets
``"staff"``: launch settings that explain a problem (a proxy sending ``X-Forwarded-For`` that is
not in ``TRUSTED_PROXIES``, with its address). No login is asked for and nothing is
shown but each check's name and a short verdict (never a URL, a host or an exception's text,
which may carry either: the cause goes to the log). It is not rate limited, and a study's pages'
limits (studyapp.ratelimit) do not count it.

A small view rather than django-health-check: three checks, each a few lines, and the answer's
every word chosen here (the embedded mode named, no error text shown), with no app, settings or
templates added to the site.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from django.conf import settings
from django.db import DatabaseError, connections
from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache

from studyapp.participants import budget

log = logging.getLogger(__name__)

# How long each service may take to answer (seconds); a monitor probes every few seconds.
TIMEOUT = 2.0


def check_database() -> str:
    for alias in connections:
        with connections[alias].cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    return "ok"


def check_redis() -> str:
    if not settings.REDIS_URL:
        return "not configured (the embedded mode: the site's own memory)"
    import redis

    client = redis.Redis.from_url(
        settings.REDIS_URL, socket_timeout=TIMEOUT, socket_connect_timeout=TIMEOUT
    )
    try:
        client.ping()
    finally:
        client.close()
    return "ok"


def check_celery() -> str:
    from studyapp.dispatch import celery_mode

    if not celery_mode():
        return "embedded (background work runs in the web process; no worker to ask)"
    from studyapp.celery import app

    with app.connection_for_write(settings.CELERY_BROKER_URL) as connection:
        connection.ensure_connection(max_retries=1, interval_start=0, timeout=TIMEOUT)
        answers = app.control.ping(timeout=TIMEOUT, limit=1, connection=connection)
    if not answers:
        raise NoWorker("no worker answered")
    return f"ok ({len(answers)} worker answered)"


def check_steps() -> str:
    from studyapp import steps

    if not steps.stream_mode():
        return "embedded (the tables' steps run on the web process's loop)"
    alive = steps.status()
    if not alive["executors"]:
        raise NoWorker("no steps executor is running (manage.py run_steps)")
    return f"ok ({alive['executors']} executor(s), {alive['working']} step(s) working)"


class NoWorker(Exception):
    pass


CHECKS: dict[str, Callable[[], str]] = {
    "database": check_database,
    "redis": check_redis,
    "celery": check_celery,
    "steps": check_steps,
}


class Failing:
    """The checks failing in this process: a monitor probes every second or two, so a failure
    is written when it begins (or its cause changes) and when it ends, never once per probe.
    The beginning carries its error, so the site's one-line-per-fault filter
    (:class:`studyapp.logs.OncePerFault`) counts it with the rest of a Redis or database fault."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.since: dict[str, tuple[str, float, int]] = {}  # name: (cause, began, probes)

    def failed(self, name: str, cause: str, detail: str, error: Exception) -> None:
        with self.lock:
            known = self.since.get(name)
            if known is not None and known[0] == cause:
                self.since[name] = (cause, known[1], known[2] + 1)
                return
            self.since[name] = (cause, time.monotonic(), 1)
        log.warning("healthz: %s failing: %s", name, detail, extra={"fault_error": error})

    def passed(self, name: str) -> None:
        with self.lock:
            known = self.since.pop(name, None)
        if known is not None:
            log.warning(
                "healthz: %s passing again after %.1f s (%d failed probe(s))",
                name,
                time.monotonic() - known[1],
                known[2],
            )


FAILING = Failing()


def run_checks() -> dict[str, tuple[bool, str]]:
    """Each check's name: (passed, its verdict as shown)."""
    results = {}
    for name, check in CHECKS.items():
        try:
            results[name] = (True, check())
        except NoWorker as err:
            FAILING.failed(name, str(err), str(err), err)
            results[name] = (False, f"failed: {err}")
        except Exception as err:  # any failure of the service is the answer, not a 500
            first = (str(err).strip().splitlines() or [""])[0]
            FAILING.failed(name, type(err).__name__, f"{type(err).__name__}: {first}", err)
            results[name] = (False, f"failed ({type(err).__name__})")
        else:
            FAILING.passed(name)
    return results


@never_cache
def healthz(request: HttpRequest) -> JsonResponse:
    results = run_checks()
    failed = [name for name, (passed, _) in results.items() if not passed]
    body: dict = {
        "status": "failing" if failed else "ok",
        "checks": {name: verdict for name, (_, verdict) in results.items()},
    }
    if failed:
        body["failed"] = failed
    if is_staff(request):
        body["staff"] = staff_details()
    return JsonResponse(body, status=503 if failed else 200)


def is_staff(request: HttpRequest) -> bool:
    """A staff login's browser (its session read only when it sends one): never an error."""
    if settings.SESSION_COOKIE_NAME not in request.COOKIES:
        return False
    try:
        return bool(request.user.is_staff)
    except Exception:  # the database away: the checks above already say so
        return False


def staff_details() -> dict[str, str]:
    """What only staff are shown: launch settings that explain a problem (studyapp.proxy)."""
    from studyapp.proxy import UNTRUSTED

    seen = UNTRUSTED.report()
    try:
        notes = budget.staff_notes()  # studies whose model budget was reached
    except DatabaseError:  # the database away: the checks already say so
        notes = {}
    if not seen:
        return {"proxy": "no X-Forwarded-For from an untrusted address", **notes}
    peers = ", ".join(f"{peer} (since {when})" for peer, when in sorted(seen.items()))
    return {
        **notes,
        "proxy": f"X-Forwarded-For ignored from {peers}: not in TRUSTED_PROXIES, so everyone "
        "behind it counts as one address against the new-participant limit; if it is your "
        "proxy, add it to TRUSTED_PROXIES (docs/production.md, Reverse proxies)",
    }
