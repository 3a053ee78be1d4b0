"""games.runner: each move judged once, and the engine's count of a game stalled by a dead model."""

from __future__ import annotations

from collections import Counter

from games.base import NoMove
from games.runner import play_game
from games.twenty_questions.agents import make_offline_agent as tq_agent
from games.twenty_questions.engine import ORACLE, QUESTIONER, TwentyQuestionsEngine
from games.undercover.agents import make_offline_agent as undercover_agent
from games.undercover.engine import UndercoverEngine


class Counted:
    """Counts how often the engine judges each type of event (calls of ``apply``)."""

    def __init__(self) -> None:
        self.judged: Counter[str] = Counter()

    def apply(self, state, event):
        self.judged[event.get("type")] += 1
        return super().apply(state, event)


class CountedTwentyQuestions(Counted, TwentyQuestionsEngine):
    pass


class CountedUndercover(Counted, UndercoverEngine):
    pass


class DeadModel:
    async def act(self, observation):
        raise NoMove("the model is down")


async def test_a_twenty_questions_game_judges_each_move_once():
    engine = CountedTwentyQuestions()
    agents = {
        QUESTIONER: tq_agent("infogain", role="questioner", seed=3),
        ORACLE: tq_agent("kb", role="oracle", seed=3),
    }
    state, events = await play_game(engine, engine.new_config(3, answer="Violin"), agents)
    assert engine.is_over(state) and len(events) > 4
    assert engine.judged == Counter(event["type"] for event in events)


async def test_stand_in_moves_and_the_abort_are_judged_once_too():
    engine = CountedTwentyQuestions()
    agents = {QUESTIONER: tq_agent("infogain", role="questioner", seed=0), ORACLE: DeadModel()}
    state, events = await play_game(engine, engine.new_config(0, answer="Apple"), agents)
    assert [event["type"] for event in events] == ["question", "void"] * 3 + ["abort"]
    assert engine.judged == Counter(question=3, void=3, abort=1)


async def test_undercover_clues_are_judged_once():
    engine = CountedUndercover()
    config = engine.new_config(5, players=4)
    agents = {seat: undercover_agent("descriptor", seed=seat) for seat in range(4)}
    state, events = await play_game(engine, config, agents)
    counts = Counter(event["type"] for event in events)
    assert engine.is_over(state) and counts["clue"] >= 4
    assert engine.judged["clue"] == counts["clue"]
    # Votes are chosen together against one state: the first is committed as judged, the others
    # are judged again against the state the earlier ones made.
    assert counts["vote"] <= engine.judged["vote"] < 2 * counts["vote"]


async def test_a_dead_questioner_ends_the_game_after_three_failures_in_a_row():
    """A model that cannot move at any seat voids its game (an abort naming the seat), so a dead
    model's game is not scored as that model's loss; every failure is listed with its reason."""
    engine = TwentyQuestionsEngine()
    agents = {QUESTIONER: DeadModel(), ORACLE: tq_agent("kb", role="oracle")}
    failures: list = []
    state, events = await play_game(
        engine, engine.new_config(0, answer="Apple"), agents, failures=failures
    )
    assert engine.outcome(state)[QUESTIONER]["aborted"]
    assert events[-1]["type"] == "abort" and events[-1]["failed_seat"] == QUESTIONER
    assert len(failures) == 3 and failures[0]["error"] == "the model is down"


def test_the_engine_counts_questions_withdrawn_since_the_oracle_last_answered_or_a_resume():
    engine = TwentyQuestionsEngine()
    question = {"type": "question", "seat": QUESTIONER, "text": "Is it red?"}
    void = {"type": "void", "seat": ORACLE, "reason": "down"}
    answer = {"type": "answer", "seat": ORACLE, "answer": "No"}
    resume = {"type": "resume", "by": "staff"}
    assert engine.failures_in_a_row([]) == 0
    assert engine.failures_in_a_row([question, void, question, void]) == 2
    assert engine.failures_in_a_row([question, void, question, answer]) == 0
    assert engine.failures_in_a_row([question, void, question, answer, question, void]) == 1
    assert engine.failures_in_a_row([question, void, resume, question, void]) == 1
    assert UndercoverEngine().failures_in_a_row([{"type": "clue", "seat": 0, "text": None}]) == 0
