"""Fixtures shared by every test package."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fakes.llm_server import FakeLLMServer


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Browser tests run last: Playwright's sync API keeps an event loop running in the main
    thread while its browser is open, which would break every asyncio test collected after it."""
    items.sort(key=lambda item: item.nodeid.startswith("tests/e2e/"))


@pytest.fixture
def llm_server() -> Iterator[FakeLLMServer]:
    """A started fake LLM server on 127.0.0.1 (OpenAI and Anthropic wire formats); set its knobs
    (``responder``, ``latency``, ``rate_limit_share``, ...) in the test. See its module docstring."""
    with FakeLLMServer() as server:
        yield server
