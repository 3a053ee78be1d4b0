"""An oracle that cannot answer withdraws the question (``void``): it costs the questioner nothing."""

import pytest

from games.base import IllegalMove, NoMove
from games.llm.agents import make_llm_agent
from games.llm.providers import ProviderConfig
from games.runner import choose, play_game
from games.twenty_questions.agents import make_offline_agent
from games.twenty_questions.engine import ENGINE, ORACLE, QUESTIONER


def asked(text="Is it alive?"):
    state = ENGINE.initial(ENGINE.new_config(0, answer="Apple"))
    return ENGINE.apply(state, {"type": "question", "seat": QUESTIONER, "text": text})


def void(state, reason="the model is down"):
    return ENGINE.apply(state, {"type": "void", "seat": ORACLE, "reason": reason})


def test_a_void_withdraws_the_pending_question_and_the_questioner_asks_again():
    state = void(asked())
    assert state.turns == () and ENGINE.to_move(state) == [QUESTIONER]
    observation = ENGINE.observe(state, QUESTIONER)
    assert observation["questions_asked"] == 0 and observation["voided"] is True
    again = ENGINE.apply(state, {"type": "question", "seat": QUESTIONER, "text": "Is it red?"})
    assert ENGINE.observe(again, QUESTIONER)["voided"] is False


def test_voided_questions_never_count_towards_the_twenty():
    state = ENGINE.initial(ENGINE.new_config(0, answer="Apple"))
    for k in range(19):
        state = ENGINE.apply(state, {"type": "question", "seat": 0, "text": f"Question {k}?"})
        state = ENGINE.apply(state, {"type": "answer", "seat": 1, "answer": "No"})
    for _ in range(5):
        state = void(ENGINE.apply(state, {"type": "question", "seat": 0, "text": "Is it red?"}))
    assert not ENGINE.is_over(state) and len(state.turns) == 19
    state = ENGINE.apply(state, {"type": "question", "seat": 0, "text": "Is it an apple?"})
    outcome = ENGINE.outcome(state)[QUESTIONER]
    assert outcome["found"] and outcome["questions"] == 20 and outcome["voids"] == 5


def test_the_void_streak_ends_when_the_oracle_answers():
    state = void(asked())
    state = void(ENGINE.apply(state, {"type": "question", "seat": 0, "text": "Is it red?"}))
    assert (state.voids, state.void_streak) == (2, 2)
    state = ENGINE.apply(state, {"type": "question", "seat": 0, "text": "Is it red?"})
    state = ENGINE.apply(state, {"type": "answer", "seat": 1, "answer": "Yes"})
    assert (state.voids, state.void_streak) == (2, 0)
    assert ENGINE.state_from_json(ENGINE.state_to_json(state)) == state


@pytest.mark.parametrize(
    "event, reason",
    [
        ({"type": "void", "seat": QUESTIONER, "reason": "x"}, "only the oracle"),
        ({"type": "void", "seat": ORACLE}, "needs the reason"),
    ],
)
def test_a_void_from_the_wrong_seat_or_without_a_reason_is_refused(event, reason):
    with pytest.raises(IllegalMove, match=reason):
        ENGINE.apply(asked(), event)


def test_there_is_nothing_to_void_without_a_pending_question():
    with pytest.raises(IllegalMove, match="no question waiting"):
        void(ENGINE.initial(ENGINE.new_config(0, answer="Apple")))


def test_failed_is_a_void_for_the_oracle_and_the_fallback_for_the_questioner():
    assert ENGINE.failed(asked(), ORACLE, "down") == {"type": "void", "seat": 1, "reason": "down"}
    fresh = ENGINE.initial(ENGINE.new_config(0, answer="Apple"))
    assert ENGINE.failed(fresh, QUESTIONER, "down") == ENGINE.fallback(fresh, QUESTIONER)


class DeadOracle:
    async def act(self, observation):
        raise NoMove("no key configured for the answering model")


async def test_the_runner_voids_for_a_dead_oracle_and_says_why():
    move = await choose(ENGINE, asked(), ORACLE, DeadOracle())
    assert move.event == {
        "type": "void",
        "seat": ORACLE,
        "reason": "no key configured for the answering model",
    }
    assert move.error == "no key configured for the answering model"


async def test_a_game_whose_oracle_keeps_failing_ends_aborted_after_three_voids(llm_server):
    llm_server.server_error_share = 1.0
    config = ProviderConfig(api_key="test", base_url=llm_server.openai_base_url, max_retries=0)
    oracle = make_llm_agent(
        "openai-compatible:fake", game="twenty-questions", role="oracle", provider_config=config
    )
    questioner = make_offline_agent("infogain", role="questioner", seed=0)
    failures = []
    state, events = await play_game(
        ENGINE, ENGINE.new_config(0, answer="Apple"), {0: questioner, 1: oracle}, failures=failures
    )
    assert [event["type"] for event in events] == ["question", "void"] * 3 + ["abort"]
    assert ENGINE.outcome(state)[QUESTIONER]["aborted"] and state.voids == 3
    assert len(failures) == 3 and all("500" in failure["error"] for failure in failures)


def test_a_resume_has_no_rule_effect():
    state = void(asked())
    assert ENGINE.apply(state, {"type": "resume", "by": "staff"}) == state
