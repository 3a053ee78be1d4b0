"""Fixtures shared by every test package."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fakes.llm_server import FakeLLMServer


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Browser tests run last: Playwright's sync API keeps an event loop running in the main
    thread while its browser is open, which would break every asyncio test collected after it."""
    items.sort(key=lambda item: item.nodeid.startswith("tests/e2e/"))


@pytest.fixture(scope="session")
def django_db_modify_db_settings(django_db_modify_db_settings_parallel_suffix: None) -> None:
    """The test process itself runs without the connection pool: its own threads (the
    sync_to_async calls of async tests, the in-process Celery worker's threads) each keep a
    connection for their life, as Django's connections always did, and over a whole run they
    would hold every pooled connection until a later test waits in vain. The pool is tested where
    it lives: in processes of their own (tests/studyapp/test_db.py) and the production topology
    (tests/production), which read DB_POOL_* from the environment as the site does."""
    from django.conf import settings

    settings.DATABASES["default"].get("OPTIONS", {}).pop("pool", None)


@pytest.fixture
def llm_server() -> Iterator[FakeLLMServer]:
    """A started fake LLM server on 127.0.0.1 (OpenAI and Anthropic wire formats); set its knobs
    (``responder``, ``latency``, ``rate_limit_share``, ...) in the test. See its module docstring."""
    with FakeLLMServer() as server:
        yield server
