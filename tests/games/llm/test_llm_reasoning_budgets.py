"""Reasoning models served through openai-compatible servers get a reasoning-sized budget."""

import pytest

from games.experiment.runner import Runner
from games.experiment.spec import ExperimentSpec
from games.llm.providers import ProviderConfig, needs_reasoning_budget


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("openai-compatible:deepseek-r1", True),
        ("openai-compatible:deepseek-ai/DeepSeek-R1-Distill-Qwen-7B", True),
        ("openai-compatible:deepseek-reasoner", True),
        ("openai-compatible:Qwen/QwQ-32B", True),
        ("openai-compatible:qwen2.5-7b", False),
        ("openai-compatible:deepseek-chat", False),
        ("openai:o1", True),
        ("openai:gpt-4o", False),
    ],
)
def test_which_models_need_a_reasoning_budget(spec, expected):
    assert needs_reasoning_budget(spec) is expected


async def test_the_budget_reaches_the_server_and_a_per_model_budget_wins(llm_server, tmp_path):
    config = ProviderConfig(api_key="test", base_url=llm_server.openai_base_url)
    runner = Runner(out=tmp_path / "out.jsonl", config_for=lambda spec: config, progress=False)
    r1 = "openai-compatible:deepseek-r1"
    plain = ExperimentSpec(game="undercover", model=r1)
    chosen = ExperimentSpec(game="undercover", model=r1, max_tokens_for=((r1, 32768),))
    for spec, budget in ((plain, 16384), (chosen, 32768)):
        provider = runner.provider_for(spec.model, spec.model_options)
        await provider.complete([{"role": "user", "content": f"budget {budget}"}], max_tokens=1024)
        assert llm_server.requests[-1].body["max_tokens"] == budget
        assert provider.config.timeout >= 300
    other = ExperimentSpec(game="undercover", model="openai-compatible:qwen2.5-7b")
    provider = runner.provider_for(other.model, other.model_options)
    await provider.complete([{"role": "user", "content": "move"}], max_tokens=1024)
    assert llm_server.requests[-1].body["max_tokens"] == 1024
