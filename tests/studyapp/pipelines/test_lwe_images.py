"""The benchmarks are image-text: every judging request carries the case's image, in the wire format
of the provider (OpenAI image_url parts with a data URL, Anthropic image blocks with a base64
source), inspected on the loopback server; the cache tells images apart by their bytes."""

from __future__ import annotations

import struct
import zlib

import pytest

from games.llm.cache import ResponseCache
from games.llm.providers import ProviderConfig, get_provider, image_part, text_part
from studyapp.pipelines.lwe.algorithm import LweOptions, run_lwe
from studyapp.pipelines.lwe.baselines import run_vanilla
from studyapp.pipelines.lwe.data import PairCase
from tests.fakes.llm_server import images_in, prompt_text
from tests.studyapp.pipelines.synthetic import CASE_ID, SyntheticJudge, make_cases


def png(shade: int) -> bytes:
    """A real 1x1 grey PNG of this shade, so every image differs by its bytes."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 0, 0, 0, 0)
    pixels = zlib.compress(bytes([0, shade]))
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")
    )


def image_cases(tmp_path, labels: str) -> tuple[list[PairCase], dict[str, bytes]]:
    cases, images = [], {}
    for case in make_cases(labels):
        data = png(int(case.id.split("-")[1]) * 10)
        path = tmp_path / f"{case.id}.png"
        path.write_bytes(data)
        images[case.id] = data
        cases.append(
            PairCase(case.id, case.prompt, case.response_a, case.response_b, case.label, str(path))
        )
    return cases, images


def provider(kind: str, server, cache=None):
    if kind == "openai":
        config = ProviderConfig(api_key="t", base_url=server.openai_base_url, max_retries=0)
        return get_provider("openai-compatible:vision-judge", config, cache=cache)
    config = ProviderConfig(api_key="t", base_url=server.anthropic_base_url, max_retries=0)
    return get_provider("anthropic:vision-judge", config, cache=cache)


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
async def test_each_judgment_carries_its_cases_image_in_the_providers_format(
    kind, tmp_path, llm_server
):
    llm_server.responder = SyntheticJudge()
    cases, images = image_cases(tmp_path, "ABBA")
    run = await run_vanilla(cases, provider(kind, llm_server))
    assert len(run.results) == 4
    assert len(llm_server.requests) == 8  # both orders of each case
    for request in llm_server.requests:
        case_id = "case-" + CASE_ID.search(prompt_text(request.body)).group(1)
        assert images_in(request.body) == [("image/png", images[case_id])]
        parts = request.body["messages"][-1]["content"]
        kinds = [part["type"] for part in parts]
        if kind == "openai":
            assert kinds == ["image_url", "text"]
            assert parts[0]["image_url"]["url"].startswith("data:image/png;base64,")
        else:
            assert kinds == ["image", "text"]
            assert parts[0]["source"]["type"] == "base64"
            assert parts[0]["source"]["media_type"] == "image/png"


async def test_lwe_sends_the_image_with_every_step_and_the_batch_with_a_refinement(
    tmp_path, llm_server
):
    judge = SyntheticJudge()
    llm_server.responder = judge
    cases, images = image_cases(tmp_path, "ABAB")
    await run_lwe(cases, provider("openai", llm_server), options=LweOptions(batch_size=2))
    refines = 0
    for request in llm_server.requests:
        text = prompt_text(request.body)
        sent = [data for _, data in images_in(request.body)]
        if "# Revising the meta-prompt" in text:
            refines += 1
            numbers = [int(n) for n in CASE_ID.findall(text.split("## Batch case ", 1)[1])]
            batch = sorted(set(numbers), key=numbers.index)
            assert sent == [images[f"case-{n}"] for n in batch]
        elif "# Condensing the meta-prompt" not in text:
            case_id = "case-" + CASE_ID.findall(text)[-1]
            assert sent == [images[case_id]], text[:200]
    assert refines == 2


async def test_text_only_callers_send_plain_strings(llm_server):
    chosen = provider("openai", llm_server)
    await chosen.complete([{"role": "user", "content": "Is it an animal?"}])
    body = llm_server.requests[-1].body
    assert body["messages"][-1]["content"] == "Is it an animal?"
    assert images_in(body) == []


async def test_the_cache_tells_two_images_apart_by_their_bytes(tmp_path, llm_server):
    cache = ResponseCache(tmp_path / "cache.sqlite")
    chosen = provider("openai", llm_server, cache)

    def ask(data: bytes):
        return chosen.complete(
            [{"role": "user", "content": [image_part(data), text_part("Which?")]}]
        )

    first = await ask(png(1))
    assert len(llm_server.requests) == 1
    again = await ask(png(1))
    assert again.cached and again.text == first.text and len(llm_server.requests) == 1
    other = await ask(png(2))  # same text, other image: a new request
    assert not other.cached and len(llm_server.requests) == 2
    assert first.input_chars == len("Which?")  # an image costs no characters
    cache.close()


def test_a_file_that_is_not_an_image_is_refused():
    with pytest.raises(ValueError, match="not a PNG, JPEG, GIF or WebP"):
        image_part(b"%PDF-1.7")


async def test_a_prompt_directory_overrides_by_name_and_is_recorded(tmp_path, llm_server):
    import hashlib

    from studyapp.pipelines.lwe.evaluate import evaluate
    from studyapp.pipelines.lwe.judging import PROMPTS_DIR, PromptDirError, use_prompts

    llm_server.responder = SyntheticJudge()
    folder = tmp_path / "prompts"
    folder.mkdir()
    own = (PROMPTS_DIR / "vanilla.txt").read_text() + "\nOUR OWN WORDING.\n"
    (folder / "vanilla.txt").write_text(own)
    try:
        hashes = use_prompts(folder)
        assert hashes["vanilla"] == hashlib.sha256(own.strip().encode()).hexdigest()
        cases, _ = image_cases(tmp_path, "AB")
        result = await evaluate("vanilla", cases, provider("openai", llm_server))
        assert result["prompts"] == hashes
        assert all("OUR OWN WORDING." in prompt_text(r.body) for r in llm_server.requests)
        (folder / "vanila.txt").write_text("typo")
        with pytest.raises(PromptDirError, match=r"vanila\.txt"):
            use_prompts(folder)
        assert use_prompts(None)["vanilla"] != hashes["vanilla"]  # back to the built-in text
    finally:
        use_prompts(None)
    built_in = hashlib.sha256(
        (PROMPTS_DIR / "vanilla.txt").read_text().strip().encode()
    ).hexdigest()
    assert use_prompts(None)["vanilla"] == built_in
