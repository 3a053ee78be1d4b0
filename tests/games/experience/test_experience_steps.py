"""Reflection, policy writing and the curator, as model calls against the fake server."""

from games.experience import steps
from games.experience.context import Experience
from games.llm.providers import ProviderConfig, get_provider
from games.llm.usage import Usage
from tests.fakes.llm_server import last_user_text


def provider(server, **options):
    config = ProviderConfig(api_key="test", base_url=server.openai_base_url, **options)
    return get_provider("openai-compatible:fake-model", config)


async def test_the_curator_returns_the_whole_new_memory_from_its_tag(llm_server):
    llm_server.responder = lambda body: "Updating. <answer>NEW MEMORY</answer>"
    usage = Usage()
    memory = await steps.curate(provider(llm_server), "RULES", "OLD", "GAME", 0.5, usage=usage)
    assert memory == "NEW MEMORY" and usage.calls == 1
    assert "OLD" in last_user_text(llm_server.requests[-1].body)


async def test_it_keeps_the_previous_memory_when_the_tag_is_missing(llm_server):
    llm_server.responder = lambda body: "I would keep everything as it is."
    assert await steps.curate(provider(llm_server), "RULES", "OLD", "GAME", 0.5) == "OLD"


async def test_it_keeps_the_previous_memory_when_the_curator_call_fails(llm_server):
    llm_server.server_error_share = 1.0
    usage = Usage()
    memory = await steps.curate(
        provider(llm_server, max_retries=1), "RULES", "OLD", "GAME", 0.5, usage=usage
    )
    assert memory == "OLD" and usage.calls == 1 and usage.retries == 1


async def test_a_reflection_is_packed_with_its_game_and_reward(llm_server):
    llm_server.responder = lambda body: "<answer>Ask broader questions.</answer>"
    experience = await steps.reflect(provider(llm_server), "RULES", "GAME", 0.25)
    assert experience == Experience("GAME", 0.25, "Ask broader questions.")


async def test_a_missing_reflection_is_marked_as_such(llm_server):
    llm_server.responder = lambda body: "no tags at all"
    experience = await steps.reflect(provider(llm_server), "RULES", "GAME", 0.0)
    assert experience.reflection == steps.NO_REFLECTION


async def test_the_policies_come_from_the_answer_tag_or_are_none(llm_server):
    llm_server.responder = lambda body: "<answer>Split evenly.</answer>"
    games = [Experience("G1", 0.0, "R1")]
    assert await steps.write_rule_policy(provider(llm_server), "RULES") == "Split evenly."
    assert (
        await steps.write_experience_policy(provider(llm_server), "RULES", games) == "Split evenly."
    )
    assert "G1" in last_user_text(llm_server.requests[-1].body)
    llm_server.responder = lambda body: "forgot the tag"
    assert await steps.write_rule_policy(provider(llm_server), "RULES") is None
