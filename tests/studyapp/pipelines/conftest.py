"""Jobs reach the loopback LLM server through settings; SDK clients a test opened on its event
loop are closed before pytest-asyncio closes the loop."""

import pytest

from games.llm.providers import close_clients


@pytest.fixture(autouse=True)
async def _close_llm_clients():
    yield
    await close_clients()


@pytest.fixture
def configured(settings, tmp_path, llm_server):
    """Jobs reach the loopback server through settings, and write under a scratch MEDIA_ROOT."""
    settings.OPENAI_BASE_URL = llm_server.openai_base_url
    settings.OPENAI_API_KEY = "test"
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.LLM_CACHE_DIR = str(tmp_path / "cache")
    return llm_server


@pytest.fixture
def staff(django_user_model):
    return django_user_model.objects.create_user("researcher", password="x", is_staff=True)
