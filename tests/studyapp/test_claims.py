"""Claims and liveness (studyapp.claims): a lease in the cache, on the embedded mode's locmem
cache and on Redis (redis-py's Lock; skipped without REDIS_URL), with the same answers; and the
claims on database rows (a pipeline job's heartbeat and staleness)."""

from __future__ import annotations

import os
import threading
import time
import uuid
from datetime import timedelta

import pytest
from django.utils import timezone

from studyapp import claims
from studyapp.tables.scheduling import under_lease

REDIS_URL = os.environ.get("REDIS_URL", "")


@pytest.fixture(
    params=[
        "locmem",
        pytest.param(
            "redis", marks=pytest.mark.skipif(not REDIS_URL, reason="needs Redis (REDIS_URL)")
        ),
    ]
)
def store(request, settings) -> str:
    """The default cache, as the embedded mode (locmem) or a site with Redis has it."""
    prefix = f"test-claims-{uuid.uuid4().hex}"
    if request.param == "redis":
        backend = {"BACKEND": "studyapp.cache.RedisCache", "LOCATION": REDIS_URL}
    else:
        backend = {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": prefix}
    settings.CACHES = {"default": {**backend, "KEY_PREFIX": prefix}}
    return request.param


def lease(seconds: float = 5) -> claims.Lease:
    return claims.Lease("job", seconds)


def held(key: str = "job") -> object:
    from django.core.cache import caches

    cache = caches["default"]
    client = claims.redis_client(cache)
    if client is None:
        return cache.get(key)
    value = client.get(cache.make_and_validate_key(key))
    return value.decode() if value is not None else None


def test_a_job_is_queued_once_and_claimed_once(store: str) -> None:
    assert lease().queue(1) is True
    assert lease().queue(1) is False  # another tick: already queued, not sent again
    first, second = lease(), lease()
    assert first.claim() is True  # queued: this delivery runs it
    assert held() == first.token and first.token.startswith("running:")
    assert second.claim() is False  # the same job delivered twice: the copy does nothing
    assert lease().queue(1) is False  # running: not sent again either
    assert first.renew() is True
    assert first.release() is True
    assert held() is None
    assert lease().claim() is True  # free: a job run by hand, or a late copy, may run


@pytest.mark.skipif(not REDIS_URL, reason="needs Redis (REDIS_URL)")
@pytest.mark.parametrize("queued", [True, False])
def test_a_claim_on_a_redis_that_lost_its_scripts_still_takes_the_lease(
    settings, queued: bool
) -> None:
    """A claim sends the Lock's release script by its hash; a Redis restarted since (or new) has
    no script by that hash, and the claim falls back on the Lock's calls, which load it."""
    settings.CACHES = {
        "default": {
            "BACKEND": "studyapp.cache.RedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": f"test-claims-{uuid.uuid4().hex}",
        }
    }
    if queued:
        assert lease().queue(1) is True
    from django.core.cache import caches

    claims.redis_client(caches["default"]).script_flush()
    first = lease()
    assert first.claim() is True
    assert held() == first.token
    assert lease().claim() is False  # running: a second copy does nothing
    assert first.renew() is True and first.release() is True
    assert held() is None


def test_a_lapsed_claim_can_be_taken_again(store: str) -> None:
    gone = lease(0.3)
    assert gone.claim()
    time.sleep(0.5)  # its worker died: nobody renewed it
    assert held() is None
    again = lease()
    assert again.claim() is True
    assert gone.renew() is False  # the old run cannot take it back
    assert gone.release() is False
    assert held() == again.token


def test_a_queued_lease_lapses_too(store: str) -> None:
    assert claims.Lease("job", 0.3).queue(0) is True
    time.sleep(1.2)  # whole seconds: the queued lease lives delay + lease, rounded up
    assert lease().queue(0) is True  # the sweep may send it again


def test_a_job_that_queues_itself_again_keeps_its_new_lease(store: str) -> None:
    running = lease()
    assert running.claim()
    assert lease().queue(1, again=True) is True  # a deadline checked early: sent for later
    assert running.release() is False  # its own claim is gone, the queued one stays
    assert held() == claims.QUEUED
    assert lease().claim() is True  # the next delivery runs


def test_unqueue_gives_back_only_a_queued_lease(store: str) -> None:
    assert lease().queue(1)
    assert lease().unqueue() is True
    assert held() is None
    running = lease()
    assert running.claim()
    assert lease().unqueue() is False
    assert held() == running.token


def test_no_key_is_no_lease(store: str) -> None:
    nothing = claims.Lease("", 5)
    assert nothing.queue(1) and nothing.claim() and nothing.renew()
    assert held("") is None


def test_a_job_delivered_twice_at_once_runs_once(store: str) -> None:
    """Two deliveries of one queued job in two threads: one runs it, the other finds it held."""
    ran: list[int] = []
    inside = threading.Event()
    go_on = threading.Event()
    answers: list[str] = []

    def job() -> str:
        ran.append(1)
        inside.set()
        go_on.wait(5)
        return "done"

    assert lease().queue(0)
    thread = threading.Thread(target=lambda: answers.append(under_lease(lease(), job)))
    thread.start()
    assert inside.wait(5)
    answers.append(under_lease(lease(), job))  # the second delivery
    go_on.set()
    thread.join(5)
    assert sorted(answers) == ["done", "running elsewhere"]
    assert ran == [1]
    assert held() is None  # released at the end


async def test_a_held_lease_is_renewed_while_the_work_runs(store: str) -> None:
    import asyncio

    from asgiref.sync import sync_to_async

    running = lease(0.6)
    assert await sync_to_async(running.claim)()

    async def work() -> str:
        await asyncio.sleep(1.0)  # longer than the lease: only renewing keeps it
        return "moved"

    assert await running.hold(work()) == "moved"
    assert await sync_to_async(held)() == running.token


# --- claims on rows -------------------------------------------------------------------------


def test_is_stale() -> None:
    now = timezone.now()
    assert not claims.is_stale(now, 60)
    assert claims.is_stale(now - timedelta(seconds=61), 60)
    assert claims.is_stale(None, 60)


@pytest.mark.django_db
def test_a_pipeline_job_whose_heart_stopped_is_stale(settings) -> None:
    from studyapp.pipelines.jobs import create_job
    from studyapp.pipelines.models import Job, fail_stale_jobs

    settings.JOB_STALE_SECONDS = 60
    job = create_job("policy", {"model": "offline:kb", "mode": "rule"})
    assert job.claim("celery@host")
    assert not job.claim("celery@other")  # claimed once
    assert not Job.objects.filter(claims.silent("heartbeat_at", 60)).exists()
    assert fail_stale_jobs() == []  # its heart beats
    Job.objects.filter(pk=job.pk).update(heartbeat_at=timezone.now() - timedelta(minutes=5))
    assert list(Job.objects.filter(claims.silent("heartbeat_at", 60)).values_list("pk", flat=True))
    assert fail_stale_jobs() == [job.pk]
    job.refresh_from_db()
    assert job.status == Job.Status.FAILED and job.resumable


@pytest.mark.django_db(transaction=True)
def test_a_heartbeat_beats_while_the_block_runs() -> None:
    beats: list[float] = []
    with claims.Heartbeat(lambda: beats.append(time.monotonic()), 0.05, name="test-heartbeat"):
        time.sleep(0.3)
    count = len(beats)
    assert count >= 3
    time.sleep(0.15)
    assert len(beats) == count  # stopped with the block
