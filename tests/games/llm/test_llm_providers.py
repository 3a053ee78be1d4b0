"""Providers drive the real OpenAI and Anthropic SDKs against the fake server on 127.0.0.1."""

import asyncio
import threading
import time

import pytest

from games.llm.cache import ResponseCache
from games.llm.providers import (
    OfflineProvider,
    ProviderConfig,
    ProviderError,
    config_from_env,
    get_provider,
    parse_servers,
    split_spec,
)
from tests.fakes.llm_server import FakeLLMServer

USER = [{"role": "user", "content": "Is it alive?"}]


def openai_provider(server, **options):
    config = ProviderConfig(api_key="test", base_url=server.openai_base_url, **options)
    return get_provider("openai-compatible:fake-model", config)


def anthropic_provider(server, **options):
    config = ProviderConfig(api_key="test", base_url=server.anthropic_base_url, **options)
    return get_provider("anthropic:fake-claude", config)


BOTH = pytest.mark.parametrize(
    "make", [openai_provider, anthropic_provider], ids=["openai", "anthropic"]
)


@BOTH
async def test_it_returns_the_reply_text_and_its_usage(llm_server, make):
    llm_server.responder = lambda body: "Thinking. <answer>Yes</answer>"
    completion = await make(llm_server).complete(USER, system="You are the host.")
    assert completion.text == "Thinking. <answer>Yes</answer>"
    assert completion.input_chars == len("You are the host.") + len("Is it alive?")
    assert completion.output_chars == len(completion.text)
    assert completion.input_tokens > 0 and completion.output_tokens > 0
    assert completion.retries == 0 and not completion.cached
    assert completion.latency_s > 0


async def test_openai_gets_the_system_text_as_the_first_message(llm_server):
    await openai_provider(llm_server).complete(
        USER, system="Rules here.", temperature=0.5, max_tokens=77
    )
    body = llm_server.requests[-1].body
    assert llm_server.requests[-1].path == "/v1/chat/completions"
    assert body["messages"] == [{"role": "system", "content": "Rules here."}, *USER]
    assert body["model"] == "fake-model" and body["temperature"] == 0.5 and body["max_tokens"] == 77


async def test_anthropic_gets_the_system_text_as_the_system_field(llm_server):
    await anthropic_provider(llm_server).complete(
        USER, system="Rules here.", temperature=0.5, max_tokens=77
    )
    body = llm_server.requests[-1].body
    assert llm_server.requests[-1].path == "/v1/messages"
    assert body["system"] == "Rules here." and body["messages"] == USER
    assert (
        body["model"] == "fake-claude" and body["temperature"] == 0.5 and body["max_tokens"] == 77
    )


@BOTH
async def test_it_counts_the_retries_the_sdk_makes_on_429_and_500(llm_server, make):
    llm_server.rate_limit_share = 0.3
    llm_server.server_error_share = 0.2
    provider = make(llm_server, max_retries=8)
    completions = await asyncio.gather(*(provider.complete(USER) for _ in range(20)))
    faults = llm_server.faults()
    assert faults["429"] + faults["500"] > 0
    assert sum(c.retries for c in completions) == faults["429"] + faults["500"]
    assert len(llm_server.requests) == 20 + faults["429"] + faults["500"]


@BOTH
async def test_it_retries_a_call_that_times_out(llm_server, make):
    llm_server.script = ["timeout"]
    llm_server.hang_s = 0.5
    completion = await make(llm_server, timeout=0.3, max_retries=2).complete(USER)
    assert completion.retries == 1
    assert [r.fault for r in llm_server.requests] == ["timeout", None]


@BOTH
async def test_it_raises_one_error_with_the_retries_when_the_sdk_gives_up(llm_server, make):
    llm_server.server_error_share = 1.0
    with pytest.raises(ProviderError) as caught:
        await make(llm_server, max_retries=2).complete(USER)
    assert caught.value.retries == 2
    assert len(llm_server.requests) == 3


async def test_it_waits_as_long_as_retry_after_asks(llm_server):
    llm_server.script = ["429"]
    llm_server.retry_after = 0.3
    started = time.perf_counter()
    completion = await openai_provider(llm_server, max_retries=3).complete(USER)
    assert completion.retries == 1
    assert time.perf_counter() - started >= 0.3


async def test_it_keeps_calls_in_flight_under_the_concurrency_limit(llm_server):
    in_flight, peak, lock = [0], [0], threading.Lock()

    def responder(body):
        with lock:
            in_flight[0] += 1
            peak[0] = max(peak[0], in_flight[0])
        time.sleep(0.05)
        with lock:
            in_flight[0] -= 1
        return "<answer>ok</answer>"

    llm_server.responder = responder
    provider = openai_provider(llm_server, concurrency=3)
    await asyncio.gather(*(provider.complete(USER) for _ in range(12)))
    assert peak[0] == 3


async def test_it_reuses_one_sdk_client_per_event_loop(llm_server):
    provider = openai_provider(llm_server)
    await provider.complete(USER)
    first = provider._loop_state()[0]
    await provider.complete(USER)
    assert provider._loop_state()[0] is first


def test_it_returns_the_same_provider_for_the_same_spec_and_config(llm_server):
    assert openai_provider(llm_server) is openai_provider(llm_server)
    assert openai_provider(llm_server) is not openai_provider(llm_server, max_retries=1)


def test_an_openai_compatible_spec_needs_a_base_url():
    with pytest.raises(ValueError, match="base_url"):
        get_provider("openai-compatible:llama", ProviderConfig())


def test_it_rejects_an_unknown_provider_kind():
    with pytest.raises(ValueError, match="unknown provider"):
        get_provider("mystery:model")


def test_config_from_env_reads_only_the_mapping_it_is_given():
    environ = {
        "OPENAI_API_KEY": "sk-1",
        "OPENAI_BASE_URL": "http://127.0.0.1:9/v1",
        "ANTHROPIC_API_KEY": "ak",
    }
    assert config_from_env("openai-compatible:llama", environ) == ProviderConfig(
        api_key="none", base_url="http://127.0.0.1:9/v1"
    )
    assert config_from_env("openai:gpt-4o", environ) == ProviderConfig(api_key="sk-1")
    assert config_from_env("anthropic:claude", environ).api_key == "ak"
    with pytest.raises(ValueError, match="OPENAI_BASE_URL"):
        config_from_env("openai-compatible:llama", {})
    environ |= {
        "OPENAI_COMPATIBLE_BASE_URL": "http://127.0.0.1:8/v1",
        "OPENAI_COMPATIBLE_API_KEY": "ck",
        "COMPATIBLE_SERVERS": "vllm=http://127.0.0.1:7/v1, ollama=http://127.0.0.1:6/v1",
        "OPENAI_COMPATIBLE_API_KEY_VLLM": "vk",
    }
    assert config_from_env("openai-compatible:llama", environ) == ProviderConfig(
        api_key="ck", base_url="http://127.0.0.1:8/v1"
    )
    assert config_from_env("openai-compatible@vllm:llama", environ) == ProviderConfig(
        api_key="vk", base_url="http://127.0.0.1:7/v1"
    )
    assert config_from_env("openai-compatible@ollama:llama", environ) == ProviderConfig(
        api_key="none", base_url="http://127.0.0.1:6/v1"
    )
    with pytest.raises(ValueError, match="does not list"):
        config_from_env("openai-compatible@lmstudio:llama", environ)


@pytest.mark.parametrize(
    "spec",
    [
        "openai@vllm:gpt-4o",
        "openai-compatible@:m",
        "openai-compatible@VLLM:m",
        "openai-compatible@a b:m",
    ],
)
def test_a_server_name_only_fits_an_openai_compatible_spec_and_a_simple_name(spec):
    with pytest.raises(ValueError):
        split_spec(spec)


@pytest.mark.parametrize("text", ["vllm", "vllm=ftp://x", "Bad=http://x", "=http://x"])
def test_a_malformed_servers_list_is_refused(text):
    with pytest.raises(ValueError, match="COMPATIBLE_SERVERS"):
        parse_servers(text)


async def test_an_offline_spec_gets_a_free_deterministic_provider():
    provider = get_provider("offline:kb")
    assert isinstance(provider, OfflineProvider)
    first = await provider.complete(USER)
    assert first == await provider.complete(USER) and "<answer>" in first.text


def auth(request) -> str:
    return {name.lower(): value for name, value in request.headers.items()}["authorization"]


async def test_each_compatible_server_gets_its_own_key_never_openais_and_its_own_answers(
    tmp_path, monkeypatch
):
    # OpenAI's key in the process environment too, where the SDK would look for one.
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-secret")
    cache = ResponseCache(tmp_path / "cache.sqlite3")
    with (
        FakeLLMServer(lambda body: "<answer>from vllm</answer>") as vllm,
        FakeLLMServer(lambda body: "<answer>from ollama</answer>") as ollama,
    ):
        environ = {
            "OPENAI_API_KEY": "sk-openai-secret",
            "COMPATIBLE_SERVERS": f"vllm={vllm.openai_base_url},ollama={ollama.openai_base_url}",
            "OPENAI_COMPATIBLE_API_KEY_VLLM": "vllm-key",
            "OPENAI_COMPATIBLE_API_KEY_OLLAMA": "ollama-key",
        }
        replies = {}
        for name in ("vllm", "ollama"):
            spec = f"openai-compatible@{name}:same-model"
            provider = get_provider(spec, config_from_env(spec, environ), cache=cache)
            replies[name] = [(await provider.complete(USER)).text for _ in range(2)]
        # The same model name and prompt at two servers: each answered once, no shared answers.
        assert replies == {
            "vllm": ["<answer>from vllm</answer>"] * 2,
            "ollama": ["<answer>from ollama</answer>"] * 2,
        }
        assert len(vllm.requests) == len(ollama.requests) == 1
        assert auth(vllm.requests[0]) == "Bearer vllm-key"
        assert auth(ollama.requests[0]) == "Bearer ollama-key"
        assert vllm.requests[0].body["model"] == ollama.requests[0].body["model"] == "same-model"

        # The plain spec at two addresses, one cache: the server is in the key here too.
        plain = []
        for server in (vllm, ollama):
            environ = {
                "OPENAI_API_KEY": "sk-openai-secret",
                "OPENAI_BASE_URL": server.openai_base_url,
            }
            config = config_from_env("openai-compatible:same-model", environ)
            provider = get_provider("openai-compatible:same-model", config, cache=cache)
            plain.append((await provider.complete(USER)).text)
        assert plain == ["<answer>from vllm</answer>", "<answer>from ollama</answer>"]
        received = [*vllm.requests, *ollama.requests]
        assert len(received) == 4
        for request in received:
            assert "sk-openai-secret" not in str(request.headers)
            assert auth(request) in (
                "Bearer vllm-key",
                "Bearer ollama-key",
                "Bearer none",
            )
    cache.close()


async def test_openai_style_requests_carry_a_seed_drawn_from_the_request(llm_server):
    provider = openai_provider(llm_server)
    for sample in (0, 0, 1):
        await provider.complete(USER, sample=sample)
    await provider.complete([{"role": "user", "content": "Is it red?"}])
    seeds = [request.body["seed"] for request in llm_server.requests]
    assert all(isinstance(seed, int) and 0 <= seed < 2**31 for seed in seeds)
    assert seeds[0] == seeds[1] and len({seeds[0], seeds[2], seeds[3]}) == 3
    await anthropic_provider(llm_server).complete(USER)
    assert "seed" not in llm_server.requests[-1].body  # Anthropic's Messages API takes none
