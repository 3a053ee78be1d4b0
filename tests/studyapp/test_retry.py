"""The one retry helper (studyapp/retry.py), used by the pages' middleware and the sockets'
reads when the database is away for a moment (their behaviour under a real PostgreSQL outage:
tests/studyapp/test_db.py)."""

from __future__ import annotations

import pytest
from django.db import OperationalError

from studyapp.retry import retry, retry_async


class Flaky:
    """Fails ``failures`` times with an OperationalError, then answers."""

    def __init__(self, failures: int) -> None:
        self.failures, self.calls = failures, 0

    def __call__(self) -> str:
        self.calls += 1
        if self.calls <= self.failures:
            raise OperationalError(f"away, try {self.calls}")
        return "answer"


def test_a_passing_failure_is_tried_again_after_each_pause():
    flaky, cleaned = Flaky(2), []
    found = retry(
        flaky,
        retry_on=OperationalError,
        pauses=(0, 0),
        before_retry=lambda: cleaned.append(1),
    )
    assert found == "answer" and flaky.calls == 3 and len(cleaned) == 2


def test_the_error_after_the_last_pause_is_raised():
    flaky = Flaky(5)
    with pytest.raises(OperationalError, match="try 3"):
        retry(flaky, retry_on=OperationalError, pauses=(0, 0))
    assert flaky.calls == 3


def test_a_final_error_and_an_unlisted_one_are_not_tried_again():
    flaky = Flaky(1)
    with pytest.raises(OperationalError):
        retry(flaky, retry_on=OperationalError, pauses=(0, 0), give_up=lambda err: True)
    assert flaky.calls == 1
    other = Flaky(1)
    with pytest.raises(OperationalError):
        retry(other, retry_on=KeyError, pauses=(0, 0))
    assert other.calls == 1
    none = Flaky(1)
    with pytest.raises(OperationalError):
        retry(none, retry_on=OperationalError, pauses=())  # a POST: no second try
    assert none.calls == 1


async def test_the_async_helper_tries_again_the_same_way():
    flaky = Flaky(2)

    async def call() -> str:
        return flaky()

    assert await retry_async(call, retry_on=OperationalError, pauses=(0, 0)) == "answer"
    assert flaky.calls == 3
    worse = Flaky(3)

    async def failing() -> str:
        return worse()

    with pytest.raises(OperationalError):
        await retry_async(failing, retry_on=OperationalError, pauses=(0, 0))
