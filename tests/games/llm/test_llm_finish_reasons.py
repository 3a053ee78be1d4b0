"""A reply the output limit cut is marked cut, with the provider's own finish reason, through the
real SDKs against the loopback server (which stops a reply at the request's limit)."""

import pytest

from games.llm.cache import ResponseCache
from games.llm.providers import ProviderConfig, get_provider

USER = [{"role": "user", "content": "Write at length."}]


def openai_provider(server, cache=None):
    config = ProviderConfig(api_key="test", base_url=server.openai_base_url, max_retries=0)
    return get_provider("openai-compatible:fake-model", config, cache=cache)


def anthropic_provider(server, cache=None):
    config = ProviderConfig(api_key="test", base_url=server.anthropic_base_url, max_retries=0)
    return get_provider("anthropic:fake-claude", config, cache=cache)


@pytest.mark.parametrize(
    ("make", "reason", "whole"),
    [(openai_provider, "length", "stop"), (anthropic_provider, "max_tokens", "end_turn")],
    ids=["openai", "anthropic"],
)
async def test_a_reply_cut_by_the_limit_says_so_with_the_providers_reason(
    llm_server, make, reason, whole
):
    llm_server.responder = lambda body: "word " * 400  # 2,000 characters, about 500 tokens
    cut = await make(llm_server).complete(USER, max_tokens=100)
    assert cut.cut and cut.finish_reason == reason and len(cut.text) == 400
    kept = await make(llm_server).complete(USER, max_tokens=1000)
    assert not kept.cut and kept.finish_reason == whole and len(kept.text) == 2000


async def test_a_cached_cut_reply_is_still_marked_cut(llm_server, tmp_path):
    llm_server.responder = lambda body: "word " * 400
    cache = ResponseCache(tmp_path / "cache.sqlite")
    try:
        first = await openai_provider(llm_server, cache).complete(USER, max_tokens=100)
        again = await openai_provider(llm_server, cache).complete(USER, max_tokens=100)
    finally:
        cache.close()
    assert again.cached and again.cut and again.finish_reason == "length"
    assert again.text == first.text and len(llm_server.requests) == 1


async def test_a_model_the_provider_says_thinks_is_named_once_when_its_name_did_not_say_so(
    llm_server, caplog
):
    llm_server.reasoning_tokens = 900
    provider = openai_provider(llm_server)
    with caplog.at_level("WARNING", logger="games.llm.providers.base"):
        first = await provider.complete(USER, max_tokens=1024)
        await provider.complete([{"role": "user", "content": "Again."}], max_tokens=1024)
    assert first.reasoning_tokens == 900
    warned = [r.getMessage() for r in caplog.records if "reasoning" in r.getMessage()]
    assert len(warned) == 1 and "openai-compatible:fake-model spent 900" in warned[0]
    assert "--max-tokens-for openai-compatible:fake-model=16384" in warned[0]


async def test_a_recognised_reasoning_model_is_not_warned_about(llm_server, caplog):
    llm_server.reasoning_tokens = 900
    config = ProviderConfig(api_key="test", base_url=llm_server.openai_base_url, max_retries=0)
    provider = get_provider("openai-compatible:deepseek-r1", config)
    with caplog.at_level("WARNING", logger="games.llm.providers.base"):
        await provider.complete(USER, max_tokens=1024)
    assert not [r for r in caplog.records if "reasoning" in r.getMessage()]
