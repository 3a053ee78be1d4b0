"""Close the SDK clients a test opened on its event loop before pytest-asyncio closes the loop."""

import pytest

from games.llm.providers import close_clients


@pytest.fixture(autouse=True)
async def _close_llm_clients():
    yield
    await close_clients()
