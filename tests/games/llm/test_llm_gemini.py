"""Gemini with images through an OpenAI-compatible endpoint: the official openai SDK against a
loopback server that speaks as Google's endpoint does (path, bearer key, image parts checked on
the wire)."""

import base64
import struct
import zlib

import pytest

from games.llm.providers import (
    GEMINI_OPENAI_URL,
    ProviderError,
    compatible_config,
    config_from_env,
    get_provider,
    image_part,
    is_gemini_model,
    text_part,
)
from tests.fakes.llm_server import FakeLLMServer, images_in, last_user_text

SPEC = "openai-compatible@gemini:gemini-2.5-flash"


def png(width: int, height: int, shade: int) -> bytes:
    """A small grey PNG, built by hand so each test image differs in its bytes."""
    raw = b"".join(b"\x00" + bytes([shade]) * width for _ in range(height))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
        )

    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw))
        + chunk(b"IEND", b"")
    )


@pytest.fixture
def gemini():
    with FakeLLMServer.gemini_style(
        lambda body: "Response A is better. [[A]]", api_key="g-key"
    ) as server:
        yield server


def provider(server, key="g-key"):
    config = compatible_config(
        SPEC,
        base_url=None,
        servers={"gemini": server.openai_base_url},
        keys={"gemini": key},
        default_key=None,
    )
    return get_provider(SPEC, config)


async def test_images_reach_a_gemini_style_server_as_data_url_parts(gemini):
    first, second = png(3, 2, 10), png(2, 2, 200)
    messages = [
        {
            "role": "user",
            "content": [
                text_part("Which response describes the picture better?"),
                image_part(first),
                text_part("and this one"),
                image_part(second),
            ],
        }
    ]
    reply = await provider(gemini).complete(messages, system="You judge answers.", max_tokens=64)
    assert reply.text == "Response A is better. [[A]]"
    request = gemini.requests[-1]
    assert request.path == "/v1beta/openai/chat/completions" and request.fault is None
    assert request.headers.get("authorization") == "Bearer g-key"
    assert images_in(request.body) == [("image/png", first), ("image/png", second)]
    parts = request.body["messages"][1]["content"]
    assert [p["type"] for p in parts] == ["text", "image_url", "text", "image_url"]
    assert (
        parts[1]["image_url"]["url"] == "data:image/png;base64," + base64.b64encode(first).decode()
    )
    assert request.body["messages"][0] == {"role": "system", "content": "You judge answers."}
    assert request.body["model"] == "gemini-2.5-flash" and request.body["max_tokens"] == 64
    texts = [p["text"] for p in parts if p["type"] == "text"]
    assert texts == ["Which response describes the picture better?", "and this one"]
    assert "and this one" in last_user_text(request.body)


async def test_the_server_refuses_what_gemini_refuses_and_the_provider_reports_it(gemini):
    with pytest.raises(ProviderError, match="401"):
        await provider(gemini, key="wrong").complete([{"role": "user", "content": "hi"}])
    # A hand-made part in a form Gemini does not take (a plain URL) is refused on the wire.
    bad = [
        {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "http://x/a.png"}}]}
    ]
    from openai import AsyncOpenAI

    client = AsyncOpenAI(base_url=gemini.openai_base_url, api_key="g-key", max_retries=0)
    with pytest.raises(Exception, match="400"):
        await client.chat.completions.create(model="gemini-2.5-flash", messages=bad)
    await client.close()
    assert gemini.requests[-1].fault.startswith("not a base64 data URL")


async def test_a_gif_is_refused_before_any_call_to_a_gemini_model(gemini):
    gif = b"GIF89a" + b"\x00" * 20
    messages = [{"role": "user", "content": [text_part("Look"), image_part(gif)]}]
    with pytest.raises(ValueError, match="image/gif"):
        await provider(gemini).complete(messages)
    assert gemini.requests == []  # nothing was sent, nothing paid for
    # Another compatible model takes the same GIF: the rule is Gemini's alone.
    other = FakeLLMServer().start()
    try:
        config = compatible_config(
            "openai-compatible:qwen-vl", base_url=other.openai_base_url, servers={}, keys={},
            default_key="k",
        )  # fmt: skip
        await get_provider("openai-compatible:qwen-vl", config).complete(messages)
        assert images_in(other.requests[-1].body) == [("image/gif", gif)]
    finally:
        other.stop()


def test_a_gemini_server_is_configured_like_any_named_compatible_server():
    config = config_from_env(
        SPEC,
        {
            "COMPATIBLE_SERVERS": f"gemini={GEMINI_OPENAI_URL}",
            "OPENAI_COMPATIBLE_API_KEY_GEMINI": "g-key",
            "OPENAI_API_KEY": "never-sent",
        },
    )
    assert config.base_url == GEMINI_OPENAI_URL and config.api_key == "g-key"
    assert is_gemini_model(SPEC) and is_gemini_model("openai-compatible:google/gemini-2.0-flash")
    assert not is_gemini_model("openai-compatible@gemini:gemma-3-27b-it")
    assert not is_gemini_model("openai:gpt-4o")
