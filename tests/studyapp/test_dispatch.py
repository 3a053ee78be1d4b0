"""The one dispatcher (studyapp/dispatch.py) in the embedded mode: what runs inline with no
server, and the periodic tasks starting with the first request a server handles. Its Celery side
is tested where the work is (tests/studyapp/tables/test_tables_eager_and_celery.py, on a real
worker, and tests/production/)."""

from __future__ import annotations

import asyncio

import pytest
from celery import shared_task
from channels.testing import HttpCommunicator

from studyapp import dispatch
from studyapp.asgi import application

RAN: list[tuple[str, int]] = []


@shared_task(name="tests.dispatch.record")
def record(label: str, depth: int = 0) -> None:
    """Records that it ran; at depth 0 it sends a second task, which must run after it ends."""
    RAN.append((label, depth))
    if depth == 0:
        dispatch.send(record, (f"{label}-child", 1))
        RAN.append((f"{label} done", depth))


@pytest.fixture(autouse=True)
def eager(settings) -> None:
    settings.CELERY_TASK_ALWAYS_EAGER = True
    RAN.clear()


def test_with_no_server_a_task_runs_inline_and_one_it_sends_runs_after_it() -> None:
    assert dispatch.send(record, ("first",))
    assert RAN == [("first", 0), ("first done", 0), ("first-child", 1)]


def test_with_no_server_work_that_may_not_run_now_is_not_run() -> None:
    assert not dispatch.send(record, ("later",), delay=30, may_run_now=False)
    assert RAN == []


@pytest.mark.django_db(transaction=True)
async def test_the_first_request_a_server_handles_starts_its_periodic_tasks() -> None:
    loop = asyncio.get_running_loop()
    assert loop not in dispatch._beating
    communicator = HttpCommunicator(application, "GET", "/", headers=[(b"host", b"localhost")])
    response = await communicator.get_response(timeout=10)
    assert response["status"] == 200
    assert loop in dispatch._beating


async def test_on_a_server_a_task_runs_in_a_thread_and_the_caller_does_not_wait() -> None:
    assert dispatch.send(record, ("threaded",), delay=0.2)
    assert RAN == []  # sent, not run: the timer is on this loop
    for _ in range(50):
        await asyncio.sleep(0.1)
        # both: the parent records "done" after its send returns, the child may land first
        if ("threaded-child", 1) in RAN and ("threaded done", 0) in RAN:
            break
    # the child is sent with no delay: it starts in another thread at once, beside its parent
    assert RAN[0] == ("threaded", 0)
    assert sorted(RAN[1:]) == [("threaded done", 0), ("threaded-child", 1)]


def test_on_redis_a_task_is_sent_without_declaring_its_queue_again(settings) -> None:
    """On Redis a task is pushed onto its queue's list by name, which needs no declaring (the
    Celery side, with a real worker, is tested in tests/studyapp/tables/ and tests/production/);
    other brokers keep Celery's declaring."""
    settings.CELERY_BROKER_URL = "redis://127.0.0.1:6379/0"
    assert dispatch.declared() == {"declare": []}
    settings.CELERY_BROKER_URL = "amqp://guest@127.0.0.1//"
    assert dispatch.declared() == {}
