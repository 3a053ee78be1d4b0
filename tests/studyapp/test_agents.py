"""How a seat becomes an agent: provider settings, local model folders, policies and settings."""

from __future__ import annotations

import pytest

from games.llm.agents import LLMAgent
from games.llm.providers import ProviderConfig
from studyapp.providers import RecordingProvider, local_provider, provider_config
from studyapp.tables.models import PolicyRecord, Seat
from studyapp.tables.seat_agents import agent_for_seat, seat_policy, seat_setting, turn_usage


def test_api_keys_and_base_urls_come_from_settings(settings) -> None:
    settings.OPENAI_API_KEY = "sk-site"
    settings.OPENAI_BASE_URL = "http://127.0.0.1:9/v1"
    settings.ANTHROPIC_API_KEY = "ak-site"
    settings.ANTHROPIC_BASE_URL = "http://127.0.0.1:8"
    # OpenAI's key never goes to a compatible server: it gets its own key, or "none".
    assert provider_config("openai-compatible:llama") == ProviderConfig(
        api_key="none", base_url="http://127.0.0.1:9/v1"
    )
    settings.OPENAI_COMPATIBLE_API_KEY = "ck-site"
    settings.OPENAI_COMPATIBLE_BASE_URL = "http://127.0.0.1:7/v1"
    assert provider_config("openai-compatible:llama") == ProviderConfig(
        api_key="ck-site", base_url="http://127.0.0.1:7/v1"
    )
    settings.COMPATIBLE_SERVERS = {"vllm": "http://127.0.0.1:6/v1", "ollama": "http://[::1]:5/v1"}
    settings.COMPATIBLE_SERVER_KEYS = {"vllm": "vk", "ollama": ""}
    assert provider_config("openai-compatible@vllm:llama") == ProviderConfig(
        api_key="vk", base_url="http://127.0.0.1:6/v1"
    )
    assert provider_config("openai-compatible@ollama:llama") == ProviderConfig(
        api_key="none", base_url="http://[::1]:5/v1"
    )
    with pytest.raises(ValueError, match="does not list"):
        provider_config("openai-compatible@lmstudio:llama")
    assert provider_config("anthropic:claude") == ProviderConfig(
        api_key="ak-site", base_url="http://127.0.0.1:8"
    )
    # A local server's URL never answers for OpenAI's own models.
    assert provider_config("openai:gpt-4o") == ProviderConfig(api_key="sk-site")


def test_a_local_spec_needs_a_folder_with_a_saved_model(tmp_path) -> None:
    with pytest.raises(ValueError, match="local:<path>"):
        local_provider("local:")
    pytest.importorskip("transformers")
    with pytest.raises(ValueError, match="no saved model"):
        local_provider(f"local:{tmp_path}")


@pytest.mark.django_db
def test_a_seat_with_a_policy_plays_the_setting_the_policy_was_made_for(settings) -> None:
    settings.OPENAI_BASE_URL = "http://127.0.0.1:9/v1"
    record = PolicyRecord.add(
        name="tq", game="twenty-questions", kind="experience", text="Halve the candidates."
    )
    seat = Seat(index=0, kind=Seat.Kind.AGENT, agent_spec="openai-compatible:m", policy=record)
    assert seat_setting(seat) == "experience-policy"
    assert seat_policy(seat, "twenty-questions") == "Halve the candidates."
    with pytest.raises(ValueError, match="not undercover"):
        seat_policy(seat, "undercover")
    agent = agent_for_seat(seat, game="twenty-questions", role="questioner", seed=3)
    assert isinstance(agent, LLMAgent) and isinstance(agent.provider, RecordingProvider)
    assert agent.setting == "experience-policy" and agent.policy == "Halve the candidates."
    assert turn_usage(agent)["calls"] == 0


def test_human_policy_without_a_record_is_the_shipped_text() -> None:
    seat = Seat(index=0, kind=Seat.Kind.AGENT, agent_spec="openai:m", setting="human-policy")
    assert seat_setting(seat) == "human-policy"
    assert seat_policy(seat, "twenty-questions")
    assert (
        seat_policy(Seat(index=0, kind=Seat.Kind.AGENT, agent_spec="openai:m"), "undercover")
        is None
    )


def test_offline_seats_call_no_model_and_cost_nothing() -> None:
    seat = Seat(index=1, kind=Seat.Kind.AGENT, agent_spec="offline:kb")
    agent = agent_for_seat(seat, game="twenty-questions", role="oracle", seed=0)
    assert not isinstance(agent, LLMAgent)
    assert turn_usage(agent) == {}


def test_a_spec_naming_an_unknown_or_unset_server_is_refused_before_any_call(settings) -> None:
    from studyapp.participants.design import spec_problem
    from studyapp.pipelines.checks import missing_credentials

    settings.OPENAI_BASE_URL = ""
    settings.OPENAI_COMPATIBLE_BASE_URL = ""
    settings.COMPATIBLE_SERVERS = {"vllm": "http://127.0.0.1:6/v1"}
    settings.COMPATIBLE_SERVER_KEYS = {"vllm": ""}
    assert "does not list" in spec_problem("openai-compatible@ollama:m", "undercover", "player")
    assert "OPENAI_COMPATIBLE_BASE_URL" in spec_problem(
        "openai-compatible:m", "undercover", "player"
    )
    assert spec_problem("openai-compatible@vllm:m", "undercover", "player") == ""
    params = {"model": "openai-compatible@ollama:m"}
    assert "does not list" in missing_credentials("policy", params)
    assert missing_credentials("policy", {"model": "openai-compatible@vllm:m"}) is None
