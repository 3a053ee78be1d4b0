"""Test cases without replacement, thinking-model options and the curator's word cap (issue 15)."""

import json

import pytest

from games.cases import case_config
from games.cases import case_seed as shared_case_seed
from games.experiment.cli import specs_from_args
from games.experiment.runner import case_seed, run_experiment
from games.experiment.spec import ExperimentSpec
from games.llm.providers import ModelOptions, ProviderConfig, get_provider, model_options
from games.twenty_questions import CANDIDATES
from tests.fakes.game_responder import GameResponder


def lines(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


async def test_test_cases_are_the_shared_sequence_drawn_without_replacement(tmp_path):
    out = tmp_path / "results.jsonl"
    spec = ExperimentSpec(game="twenty-questions", model="offline:infogain", cases=50, samples=1)
    await run_experiment([spec], out, progress=False)
    records = sorted(lines(out), key=lambda r: r["round"])
    words = [r["config"]["answer"] for r in records]
    assert len(set(words)) == 50 <= len(CANDIDATES)
    for record in records:
        shared = case_config("twenty-questions", 0, record["case"])
        assert record["config"] == shared
        assert record["seed"] == shared_case_seed(0, record["case"])
    assert case_seed is shared_case_seed


async def test_undercover_cases_use_the_shared_pairs_too(tmp_path):
    out = tmp_path / "uc.jsonl"
    spec = ExperimentSpec(game="undercover", model="offline:kb", cases=6, samples=1, seed=3)
    await run_experiment([spec], out, progress=False)
    for record in lines(out):
        assert record["config"] == case_config("undercover", 3, record["case"], players=5)


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("openai:o1", ModelOptions(16384, "medium", None)),
        ("openai:o3-mini", ModelOptions(16384, "medium", None)),
        ("openai:o4-mini-2025-04-16", ModelOptions(16384, "medium", None)),
        ("openai:gpt-5", ModelOptions(16384, "medium", None)),
        ("openai:gpt-5-mini", ModelOptions(16384, "medium", None)),
        ("openai:gpt-4o", ModelOptions()),
        ("openai:gpt-4.1", ModelOptions()),
        ("anthropic:claude-sonnet-4-5", ModelOptions()),
        ("openai-compatible:o3-local", ModelOptions()),
    ],
)
def test_reasoning_models_get_a_larger_budget_and_an_effort(spec, expected):
    assert model_options(spec) == expected


def test_given_options_win_over_the_defaults_and_bad_ones_are_refused():
    assert model_options("openai:o3", reasoning_effort="high").reasoning_effort == "high"
    assert model_options("openai:o3", max_tokens=4000).max_tokens == 4000
    with pytest.raises(ValueError, match="reasoning_effort"):
        model_options("openai:o3", reasoning_effort="extreme")
    with pytest.raises(ValueError, match="thinking_budget"):
        ExperimentSpec(game="twenty-questions", model="anthropic:c", thinking_budget=100)


async def test_an_openai_reasoning_model_gets_its_budget_and_effort_through_the_sdk(llm_server):
    llm_server.responder = lambda body: "<answer>Is it alive?</answer>"
    config = ProviderConfig(
        api_key="test", base_url=llm_server.openai_base_url, options=model_options("openai:o3")
    )
    provider = get_provider("openai:o3", config)
    await provider.complete([{"role": "user", "content": "Ask."}], max_tokens=1024)
    body = llm_server.requests[-1].body
    assert body["max_completion_tokens"] == 16384
    assert body["reasoning_effort"] == "medium"
    assert "temperature" not in body and "max_tokens" not in body


async def test_anthropic_thinking_gets_its_budget_on_top_of_the_answer(llm_server):
    llm_server.responder = lambda body: "<answer>Is it alive?</answer>"
    options = model_options("anthropic:claude-sonnet-4-5", thinking_budget=4096)
    config = ProviderConfig(api_key="test", base_url=llm_server.anthropic_base_url, options=options)
    provider = get_provider("anthropic:claude-sonnet-4-5", config)
    reply = await provider.complete(
        [{"role": "user", "content": "Ask."}], max_tokens=1024, temperature=0.5
    )
    body = llm_server.requests[-1].body
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 4096}
    assert body["max_tokens"] == 4096 + 1024
    assert "temperature" not in body  # thinking runs at the default temperature
    assert reply.text == "<answer>Is it alive?</answer>"


async def test_every_record_carries_the_model_options_and_the_memory_cap(llm_server, tmp_path):
    responder = GameResponder()
    llm_server.responder = responder
    out = tmp_path / "results.jsonl"
    config = ProviderConfig(api_key="test", base_url=llm_server.openai_base_url)
    spec = ExperimentSpec(
        game="twenty-questions",
        model="openai-compatible:fake-model",
        setting="cumulative",
        rounds=2,
        samples=1,
        max_tokens=3000,
        memory_word_cap=1500,
        oracle="offline:kb",
    )
    await run_experiment([spec], out, config_for=lambda s: config, progress=False)
    records = lines(out)
    assert all(
        r["model_options"]
        == {"max_tokens": 3000, "reasoning_effort": None, "thinking_budget": None}
        and r["memory_word_cap"] == 1500
        for r in records
    )
    moves = [r.body for r in llm_server.requests if "curator" not in json.dumps(r.body)]
    assert moves and all(body["max_tokens"] == 3000 for body in moves)
    curator = [r.body for r in llm_server.requests if "Stay under 1500 words" in json.dumps(r.body)]
    assert len(curator) == 1


def test_the_default_memory_cap_is_near_dynamic_cheatsheets():
    spec = ExperimentSpec(game="twenty-questions", model="offline:infogain")
    assert spec.memory_word_cap == 2000


def test_a_grid_sets_options_per_model(tmp_path):
    from games.__main__ import build_parser

    grid = tmp_path / "grid.toml"
    grid.write_text(
        'game = "twenty-questions"\nmodels = ["openai:o3", "openai:gpt-4o"]\nout = "x.jsonl"\n'
        '[options."openai:o3"]\nreasoning_effort = "high"\nmax_tokens = 32000\n'
    )
    args = build_parser().parse_args(["experiment", "--config", str(grid)])
    specs, _ = specs_from_args(args)
    by_model = {s.model: s.model_options for s in specs}
    assert by_model["openai:o3"] == ModelOptions(32000, "high", None)
    assert by_model["openai:gpt-4o"] == ModelOptions()
