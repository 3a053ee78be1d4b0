"""A study's language covers its words and its agents (games.languages): German word pairs and
candidate names ship as data beside English, a case is the same word in either language, the
Twenty Questions engine reads guesses by their German names, a model seat is told the table's
language (the prompt reaches a real HTTP server), and an offline agent is refused with the
reason."""

from __future__ import annotations

import asyncio

import pytest

from games import get_engine, languages
from games.cases import case_config
from games.llm.agents import make_llm_agent
from games.llm.providers import ProviderConfig
from games.twenty_questions import CANDIDATES
from games.undercover.words import PAIRS
from tests.fakes.llm_server import FakeLLMServer


def test_every_pair_and_candidate_has_its_german_words():
    german = languages.undercover_pairs("de")
    assert len(german) == len(PAIRS) and german[0] == ("Milch", "Sojamilch")
    assert all(a.strip() and b.strip() and a != b for a, b in german)
    names = languages.candidate_names("de")
    assert list(names) == list(CANDIDATES) and names["Apple"] == "Apfel"
    assert len(set(names.values())) == len(CANDIDATES)  # one name for one candidate
    with pytest.raises(ValueError, match="no words for language 'xx'"):
        languages.candidate_names("xx")


@pytest.mark.parametrize("case", [0, 5, 140])
def test_a_case_is_the_same_word_in_either_language(case):
    english = case_config("undercover", 7, case, players=5)
    german = case_config("undercover", 7, case, language="de", players=5)
    english_pair = {english["normal_word"], english["difference_word"]}
    index = next(i for i, pair in enumerate(PAIRS) if set(pair) == english_pair)
    translated = dict(zip(PAIRS[index], languages.undercover_pairs("de")[index], strict=True))
    # The same pair, the same word for the difference, the same seat.
    assert german["difference_word"] == translated[english["difference_word"]]
    assert german["normal_word"] == translated[english["normal_word"]]
    assert german["difference_seat"] == english["difference_seat"]
    tq = case_config("twenty-questions", 7, case, language="de")
    assert tq["answer"] == case_config("twenty-questions", 7, case)["answer"]
    assert tq["language"] == "de" and "language" not in case_config("twenty-questions", 7, case)


def test_twenty_questions_reads_a_guess_by_its_german_name():
    engine = get_engine("twenty-questions")
    config = engine.new_config(0, answer="Apple", language="de")
    state = engine.initial(config)
    assert "Apfel" in engine.observe(state, 0)["candidates"]
    wrong = engine.apply(state, {"type": "question", "seat": 0, "text": "Ist es eine Banane?"})
    assert wrong.turns[-1].guess == "Banana" and not wrong.over
    right = engine.apply(wrong, {"type": "question", "seat": 0, "text": "Ist es ein Apfel?"})
    assert right.found_at == 2
    picked = engine.apply(state, {"type": "question", "seat": 0, "guess": "apfel"})
    assert picked.found_at == 1 and picked.turns[-1].question == "Ist das Wort Apfel?"
    assert engine.observe(state, 1)["answer"] == "Apfel"  # a model oracle reads the German word
    plain = engine.apply(state, {"type": "question", "seat": 0, "text": "Ist es lebendig?"})
    assert plain.pending  # a question, for the oracle


def test_a_model_seat_is_told_the_tables_language():
    with FakeLLMServer(
        lambda body: "<answer>Ein rundes Obst, das am Baum wächst.</answer>"
    ) as server:
        config = ProviderConfig(api_key="test", base_url=server.openai_base_url, max_retries=0)
        engine = get_engine("undercover")
        game = case_config("undercover", 1, 0, language="de", players=5)
        state = engine.initial(game)
        for language in ("de", "en"):
            agent = make_llm_agent(
                "openai:test-model",
                game="undercover",
                role="player",
                language=language,
                provider_config=config,
            )
            seat = engine.to_move(state)[0]
            asyncio.run(agent.act(engine.observe(state, seat)))
        german, english = (str(r.body["messages"]) for r in server.requests[-2:])
    assert "This table plays in German (Deutsch)" in german
    assert "German" not in english


def test_an_offline_agent_is_refused_for_another_language_with_the_reason():
    why = languages.offline_problem("offline:kb", "de")
    assert "offline:kb plays in English only" in why and "choose a language model" in why
    assert languages.offline_problem("offline:kb", "en") == ""
    assert languages.offline_problem("openai:gpt-4o-mini", "de") == ""


def test_the_offline_stand_in_speaks_german_at_a_german_table():
    """A failed model seat's stand-in at a table in German (agent_turns.kept_in_form): the
    offline agent gives only the German sentences of games/languages (its descriptors are
    English), each a valid clue, never one said before at the table (nor one said again after a
    lead-in, issue 42), for as many clues as it has sentences."""
    from games.undercover.agents import DescriptorAgent, vague_sentences
    from games.undercover.engine import UndercoverEngine, clue_problem, normalise

    sentences = languages.undercover_sentences("de")
    german = vague_sentences("de")
    assert german == sentences and len({normalise(s) for s in german}) == len(german) >= 30
    assert not set(german) & set(vague_sentences("en"))
    plain = {normalise(s) for s in german}
    engine = UndercoverEngine()
    config = case_config("undercover", 4, 0, language="de", players=5)
    observation = engine.observe(engine.replay(config, []), 0)
    word = engine.word(config, 0)
    assert word in {w for pair in languages.undercover_pairs("de") for w in pair}
    said: list[str] = []
    for turn in range(len(german)):
        observation["clues"] = [{"seat": 1, "text": text} for text in said]
        agent = DescriptorAgent(seed=turn, sentences=True, language="de")
        text = asyncio.run(agent.act(observation))["text"]
        assert normalise(text) in plain and normalise(text) not in {normalise(s) for s in said}
        assert clue_problem(text, word, frozenset()) is None
        said.append(text)
