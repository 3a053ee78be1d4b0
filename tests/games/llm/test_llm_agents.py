"""LLM seats of both games, played through the SDKs against the fake server."""

import pytest

from games import get_engine
from games.base import NoMove
from games.llm.agents import make_llm_agent
from games.llm.providers import Completion, ProviderConfig
from games.runner import choose, play_game
from games.twenty_questions.engine import NO_QUESTION
from tests.fakes.game_responder import GameResponder

TQ = get_engine("twenty-questions")
UC = get_engine("undercover")


def agent(server, *, game="twenty-questions", role="questioner", anthropic=False, **options):
    if anthropic:
        config = ProviderConfig(api_key="test", base_url=server.anthropic_base_url, max_retries=6)
        spec = "anthropic:fake-claude"
    else:
        config = ProviderConfig(api_key="test", base_url=server.openai_base_url, max_retries=6)
        spec = "openai-compatible:fake-model"
    return make_llm_agent(spec, game=game, role=role, provider_config=config, **options)


def questioner_view(questions=()):
    state = TQ.initial(TQ.new_config(0, answer="Apple"))
    for question in questions:
        state = TQ.apply(state, {"type": "question", "seat": 0, "text": question})
        if TQ.to_move(state) == [1]:
            state = TQ.apply(state, {"type": "answer", "seat": 1, "answer": "No"})
    return state


def oracle_view():
    state = TQ.initial(TQ.new_config(0, answer="Apple"))
    state = TQ.apply(state, {"type": "question", "seat": 0, "text": "Is it a fruit?"})
    return TQ.observe(state, 1)


def vote_state():
    state = UC.initial(UC.new_config(0))
    for clue in range(15):
        seat = UC.to_move(state)[0]
        state = UC.apply(state, {"type": "clue", "seat": seat, "text": f"clue number {clue}"})
    return state


def vote_view():
    return UC.observe(vote_state(), 0)


async def test_the_questioner_asks_the_question_in_its_answer_tag(llm_server):
    llm_server.responder = lambda body: "Split food. <answer>Is it a kind of food?</answer>"
    seat = agent(llm_server)
    action = await seat.act(TQ.observe(questioner_view(["Is it alive?"]), 0))
    assert action == {"type": "question", "text": "Is it a kind of food?"}
    body = llm_server.requests[-1].body
    system, user = body["messages"][0]["content"], body["messages"][1]["content"]
    assert system.index("Game: Twenty Questions") < system.index("You ask the questions")
    assert "1. Is it alive? -> No" in user and "question 2 of 20" in user


async def test_a_reply_without_a_tag_gets_one_corrective_follow_up(llm_server):
    llm_server.responder = lambda body: "<answer>Is it round?</answer>"
    llm_server.script = ["no-tag"]
    seat = agent(llm_server)
    action = await seat.act(TQ.observe(questioner_view(), 0))
    assert action == {"type": "question", "text": "Is it round?"}
    messages = llm_server.requests[-1].body["messages"]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user"]
    assert messages[2]["content"] == "Is it round?"  # the tagless reply, shown back
    assert "could not find a usable answer" in messages[3]["content"]
    assert seat.usage.calls == 2


async def test_two_unusable_replies_give_no_move_with_the_reason_and_the_reply(llm_server):
    llm_server.responder = lambda body: "I am not sure what to ask."
    seat = agent(llm_server)
    with pytest.raises(NoMove) as failure:
        await seat.act(TQ.observe(questioner_view(), 0))
    assert "no answer inside <answer> tags" in failure.value.reason
    assert failure.value.reply == "I am not sure what to ask."
    assert len(llm_server.requests) == 2 and seat.usage.calls == 2


async def test_the_runner_plays_an_explained_invalid_question_for_them(llm_server):
    llm_server.responder = lambda body: "I am not sure what to ask."
    move = await choose(TQ, questioner_view(), 0, agent(llm_server))
    assert move.event == {"type": "question", "seat": 0, "text": NO_QUESTION}
    assert "corrective" in move.error and move.reply == "I am not sure what to ask."


@pytest.mark.parametrize(
    "reply, expected",
    [
        ("<answer>yes.</answer>", "Yes"),
        ("<answer>No, it is not</answer>", "No"),
        ("<answer>INVALID</answer>", "Invalid"),
    ],
)
async def test_the_oracle_reads_yes_no_or_invalid_from_its_answer(llm_server, reply, expected):
    llm_server.responder = lambda body: reply
    seat = agent(llm_server, role="oracle")
    assert await seat.act(oracle_view()) == {"type": "answer", "answer": expected}
    user = llm_server.requests[-1].body["messages"][-1]["content"]
    assert 'The secret word is "Apple"' in user and "Is it a fruit?" in user


async def test_an_oracle_that_never_says_yes_or_no_voids_the_question(llm_server):
    llm_server.responder = lambda body: "<answer>Maybe</answer>"
    seat = agent(llm_server, role="oracle", anthropic=True)
    state = TQ.apply(questioner_view(), {"type": "question", "seat": 0, "text": "Is it a fruit?"})
    move = await choose(TQ, state, 1, seat)
    assert move.event["type"] == "void" and "'Maybe' is not usable" in move.event["reason"]
    assert move.reply == "<answer>Maybe</answer>" and len(llm_server.requests) == 2
    assert TQ.apply(state, move.event).turns == ()  # the question is not counted


async def test_the_voter_votes_for_the_seat_in_its_answer(llm_server):
    llm_server.responder = lambda body: "Player 3 stands out. <answer>Player 3</answer>"
    seat = agent(llm_server, game="undercover", role="player")
    assert await seat.act(vote_view()) == {"type": "vote", "target": 3}
    user = llm_server.requests[-1].body["messages"][-1]["content"]
    assert "It is time to vote" in user and "player 4: clue number 4" in user


async def test_a_vote_for_oneself_or_no_one_becomes_an_explained_abstention(llm_server):
    llm_server.responder = lambda body: "<answer>0</answer>"  # the voter is seat 0
    seat = agent(llm_server, game="undercover", role="player")
    state = UC.state_from_json(UC.state_to_json(vote_state()))
    move = await choose(UC, state, 0, seat)
    assert move.event == {"type": "vote", "seat": 0, "target": None}
    assert "'0' is not usable" in move.error and move.reply == "<answer>0</answer>"
    assert "[1, 2, 3, 4]" in llm_server.requests[-1].body["messages"][-1]["content"]


async def test_the_speaker_gives_the_sentence_in_its_answer(llm_server):
    llm_server.responder = lambda body: '<answer>"You can find it in most homes."</answer>'
    seat = agent(llm_server, game="undercover", role="player", anthropic=True)
    observation = UC.observe(UC.initial(UC.new_config(0)), 0)
    assert await seat.act(observation) == {"type": "clue", "text": "You can find it in most homes."}
    user = llm_server.requests[-1].body["messages"][-1]["content"]
    assert (
        f'Your secret word is "{observation["word"]}"' in user
        and "No clues have been given yet." in user
    )


async def test_a_speaker_without_a_usable_clue_passes_and_says_why(llm_server):
    llm_server.responder = lambda body: "<answer></answer>"
    seat = agent(llm_server, game="undercover", role="player")
    move = await choose(UC, UC.initial(UC.new_config(0)), 0, seat)
    assert move.event == {"type": "clue", "seat": 0, "text": None}
    assert "no answer inside" in move.error and move.reply == "<answer></answer>"


async def test_a_call_that_fails_after_the_sdk_retries_gives_no_move(llm_server):
    llm_server.server_error_share = 1.0
    seat = agent(llm_server, role="oracle")
    with pytest.raises(NoMove) as failure:
        await seat.act(oracle_view())
    assert failure.value.reason.startswith("the model call failed") and "500" in str(failure.value)
    assert seat.usage.calls == 1 and seat.usage.retries == 6


async def test_a_rejected_move_is_explained_in_the_next_prompt(llm_server):
    observation = {
        **TQ.observe(questioner_view(), 0),
        "rejected": {
            "action": {"type": "question", "text": "x" * 400},
            "reason": "the question is too long",
        },
    }
    await agent(llm_server).act(observation)
    user = llm_server.requests[-1].body["messages"][-1]["content"]
    assert user.startswith("Your previous move") and "the question is too long" in user


async def test_a_policy_is_shown_between_the_rules_and_the_instructions(llm_server):
    seat = agent(llm_server, setting="human-policy", policy="Ask about size first.")
    await seat.act(TQ.observe(questioner_view(), 0))
    system = llm_server.requests[-1].body["messages"][0]["content"]
    assert (
        system.index("Candidates:")
        < system.index("Ask about size first.")
        < system.index("You ask the questions")
    )


async def test_any_object_with_complete_can_be_the_provider():
    class LocalModel:
        async def complete(
            self, messages, *, system=None, temperature=1.0, max_tokens=1024, sample=0
        ):
            return Completion(text="<answer>Is it a Mango?</answer>", input_chars=1, output_chars=2)

    seat = make_llm_agent(
        "local:tiny", game="twenty-questions", role="questioner", provider=LocalModel()
    )
    assert await seat.act(TQ.observe(questioner_view(), 0)) == {
        "type": "question",
        "text": "Is it a Mango?",
    }


@pytest.mark.parametrize("anthropic", [False, True], ids=["openai", "anthropic"])
async def test_whole_games_of_both_kinds_finish_with_llm_seats_and_faults(llm_server, anthropic):
    llm_server.responder = GameResponder()
    llm_server.rate_limit_share = 0.1
    llm_server.no_tag_share = 0.1
    config = TQ.new_config(0, answer="Banana")
    seats = {
        0: agent(llm_server, anthropic=anthropic),
        1: agent(llm_server, role="oracle", anthropic=anthropic),
    }
    state, events = await play_game(TQ, config, seats)
    assert TQ.is_over(state) and TQ.outcome(state)[0]["found"]
    config = UC.new_config(1)
    seats = {
        i: agent(llm_server, game="undercover", role="player", anthropic=anthropic)
        for i in range(5)
    }
    state, events = await play_game(UC, config, seats)
    assert UC.is_over(state)
    assert any(e["type"] == "vote" and e["target"] is not None for e in events)
