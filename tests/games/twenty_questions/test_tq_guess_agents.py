"""Agents and the guess rule: a model's natural guess ends the game, its colour question goes to
the oracle, and the rules it reads say how to guess and nothing about rewards. The model is the
real loopback server reached through the OpenAI SDK."""

from __future__ import annotations

from games.agents import make_agent
from games.llm.agents import make_llm_agent
from games.llm.providers import ProviderConfig
from games.runner import play_game
from games.twenty_questions import CANDIDATES
from games.twenty_questions.engine import ENGINE
from tests.fakes.llm_server import last_user_text, prompt_text


def questioner(server):
    config = ProviderConfig(api_key="test", base_url=server.openai_base_url, max_retries=2)
    return make_llm_agent(
        "openai-compatible:fake-model",
        game="twenty-questions",
        role="questioner",
        provider_config=config,
    )


async def test_a_models_natural_guess_ends_the_game_and_its_colour_question_does_not(llm_server):
    def responder(body):
        if "Is it orange?" in last_user_text(body):
            return "It is orange, so the fruit. <answer>I think it's an orange!</answer>"
        return "Colour first. <answer>Is it orange?</answer>"

    llm_server.responder = responder
    oracle = make_agent("offline:kb", game="twenty-questions", role="oracle")
    config = ENGINE.new_config(0, answer="Orange")
    state, events = await play_game(ENGINE, config, {0: questioner(llm_server), 1: oracle})
    assert [event["type"] for event in events] == ["question", "answer", "question"]
    assert state.turns[0].by == "oracle" and state.turns[0].guess is None
    assert (state.turns[1].by, state.turns[1].guess) == ("engine", "Orange")
    assert ENGINE.outcome(state)[0]["found"] is True
    assert ENGINE.outcome(state)[0]["questions"] == 2

    rules = prompt_text(llm_server.requests[0].body)
    assert "To make a guess" in rules and ", ".join(CANDIDATES) in rules
    assert "log2" not in rules and "names exactly one candidate" not in rules


async def test_the_offline_questioners_find_every_word_with_guesses_the_engine_reads():
    oracle = make_agent("offline:kb", game="twenty-questions", role="oracle")
    for word in ("Orange", "Peach", "Watch", "Baseball bat"):
        seat = make_agent("offline:infogain", game="twenty-questions", role="questioner")
        state, _ = await play_game(ENGINE, ENGINE.new_config(0, answer=word), {0: seat, 1: oracle})
        assert ENGINE.outcome(state)[0]["found"] is True, word
        assert state.turns[-1].guess == word and state.turns[-1].by == "engine"
