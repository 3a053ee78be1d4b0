"""The response cache: a rerun is free and identical, samples stay apart, and it can be off."""

import pytest

from games.llm.cache import ResponseCache, request_key
from games.llm.providers import ProviderConfig, ProviderError, get_provider

USER = [{"role": "user", "content": "Is it alive?"}]


def counting_responder():
    calls = []

    def responder(body):
        calls.append(body)
        return f"<answer>reply {len(calls)}</answer>"

    return responder


def provider(server, cache):
    config = ProviderConfig(api_key="test", base_url=server.openai_base_url)
    return get_provider("openai-compatible:cached-model", config, cache=cache)


async def test_a_repeated_request_is_answered_from_the_cache(llm_server, tmp_path):
    llm_server.responder = counting_responder()
    cached = provider(llm_server, ResponseCache(tmp_path / "c.sqlite"))
    first = await cached.complete(USER, system="s")
    second = await cached.complete(USER, system="s")
    assert len(llm_server.requests) == 1
    assert second.text == first.text and second.cached and not first.cached
    assert (second.input_tokens, second.output_tokens) == (first.input_tokens, first.output_tokens)
    assert second.retries == 0 and second.latency_s == 0


async def test_a_different_request_misses(llm_server, tmp_path):
    cached = provider(llm_server, ResponseCache(tmp_path / "c.sqlite"))
    await cached.complete(USER, system="s")
    await cached.complete(USER, system="other system")
    await cached.complete(USER, system="s", temperature=0.5)
    await cached.complete([{"role": "user", "content": "Is it red?"}], system="s")
    assert len(llm_server.requests) == 4


async def test_each_sample_index_has_its_own_entry(llm_server, tmp_path):
    llm_server.responder = counting_responder()
    cached = provider(llm_server, ResponseCache(tmp_path / "c.sqlite"))
    zero = await cached.complete(USER, sample=0)
    one = await cached.complete(USER, sample=1)
    assert zero.text != one.text and len(llm_server.requests) == 2
    assert (await cached.complete(USER, sample=1)).text == one.text


async def test_the_cache_survives_a_new_process(llm_server, tmp_path):
    llm_server.responder = counting_responder()
    first = await provider(llm_server, ResponseCache(tmp_path / "c.sqlite")).complete(USER)
    reopened = provider(llm_server, ResponseCache(tmp_path / "c.sqlite"))
    assert (await reopened.complete(USER)).text == first.text
    assert len(llm_server.requests) == 1


async def test_with_the_cache_off_every_call_reaches_the_server(llm_server):
    llm_server.responder = counting_responder()
    uncached = provider(llm_server, None)
    texts = {(await uncached.complete(USER)).text for _ in range(3)}
    assert len(llm_server.requests) == 3 and len(texts) == 3


async def test_a_failed_call_is_not_cached(llm_server, tmp_path):
    cache = ResponseCache(tmp_path / "c.sqlite")
    config = ProviderConfig(api_key="test", base_url=llm_server.openai_base_url, max_retries=0)
    flaky = get_provider("openai-compatible:cached-model", config, cache=cache)
    llm_server.script = ["500"]
    with pytest.raises(ProviderError):
        await flaky.complete(USER)
    assert len(cache) == 0
    await flaky.complete(USER)
    assert len(cache) == 1


def test_the_key_ignores_dict_order_but_not_content_or_sample():
    a = {"model": "m", "messages": USER, "temperature": 1.0}
    b = {"temperature": 1.0, "messages": USER, "model": "m"}
    assert request_key(a, 0) == request_key(b, 0)
    assert request_key(a, 0) != request_key(a, 1)
    assert request_key(a, 0) != request_key({**a, "temperature": 0.9}, 0)
