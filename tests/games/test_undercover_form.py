"""Blinding in the words: an outside reader given a blinded table's clue log cannot tell the
offline agents' clues from people's by their form, and no clue is said twice at a table.

The reader is a classifier trained on form alone (the opening words, length, capitals and
punctuation, and whether a clue repeats an earlier one at its table) with a held-out split. The
people's clues are ``data/undercover_people_clues.txt``, written by hand as people type at such
tables; the agents' are the offline agent's at tables with people (``sentences=True``), and at a
German table its stand-in's. The same reader, given the agents' clues as they were worded before
(a fixed lead-in before a fragment), picks them out almost every time: the test can fail.
"""

from __future__ import annotations

import asyncio
import random
import re
from pathlib import Path

import numpy as np
import pytest

from games.cases import case_config
from games.runner import choose
from games.undercover.agents import DescriptorAgent
from games.undercover.engine import UndercoverEngine, normalise
from games.undercover.repeats import stems

DATA = Path(__file__).parent / "data" / "undercover_people_clues.txt"
CHANCE_MARGIN = 0.1  # the reader may do at most this much better than a coin, on average
SPLITS = 10
# The lead-ins the agents opened 26 of 27 clues with before (issue 42): the reader's control.
OLD_FRAMES = (
    "I would say: {}.",
    "My clue is this: {}.",
    "Here is my clue: {}.",
    "Something I would say about it: {}.",
    "Think of this: {}.",
    "For me it is like this: {}.",
)


def people_tables() -> list[list[str]]:
    tables: list[list[str]] = []
    for line in DATA.read_text(encoding="utf-8").splitlines():
        if line.startswith("# word:"):
            tables.append([])
        elif line.strip() and not line.startswith("#"):
            tables[-1].append(line.strip())
    return tables


def agent_tables(games: int, language: str = "en", seed: int = 0) -> list[list[str]]:
    """The clue logs of ``games`` blinded games whose every seat is the offline agent as it
    plays next to people (a seat's seed per table, seat and turn, as agent_turns draws it)."""
    engine = UndercoverEngine()
    logs = []
    for game in range(games):
        config = case_config("undercover", seed + game, 0, language=language, players=5)
        state = engine.replay(config, [])
        while not engine.is_over(state):
            seat = engine.to_move(state)[0]
            draw = random.Random(f"{seed}:{game}:{seat}:{len(state.clues)}").randrange(2**31)
            agent = DescriptorAgent(seed=draw, sentences=True, language=language)
            state = asyncio.run(choose(engine, state, seat, agent)).state
        logs.append([text for _, _, text in state.clues if text is not None])
    return logs


# ---- the outside reader -------------------------------------------------------------------------

_TOKEN = re.compile(r"[\w']+")


def opening(text: str, words: int) -> str:
    return " ".join(_TOKEN.findall(text.lower())[:words])


def numbers(text: str, earlier: list[str]) -> list[float]:
    """The form of one clue: length, capitals, punctuation, and whether it repeats an earlier
    clue at its table (the same words, or one said inside it)."""
    plain = normalise(text)
    said = [normalise(clue) for clue in earlier]
    own = stems(text, frozenset())
    repeat = any(
        plain == old or f" {old} " in f" {plain} " or (own and own <= stems(clue, frozenset()))
        for old, clue in zip(said, earlier, strict=True)
    )
    words = len(text.split())
    return [
        words,
        np.log1p(len(text)),
        float(text[:1].isupper()),
        float(text.rstrip().endswith(".")),
        float(bool(re.search(r"[!?]$", text.rstrip()))),
        float("," in text),
        float(":" in text),
        float(";" in text or "-" in text),
        float(text == text.lower()),
        float(repeat),
        float(words <= 2),
        float(words >= 6),
    ]


def featurise(samples: list[tuple[str, list[str]]], vocabulary: list[str]) -> np.ndarray:
    rows = []
    for text, earlier in samples:
        openings = {opening(text, 1), opening(text, 2)}
        rows.append(numbers(text, earlier) + [float(w in openings) for w in vocabulary])
    return np.array(rows, dtype=float)


def lead_in_vocabulary(samples: list[tuple[str, list[str]]]) -> list[str]:
    """The opening words (one or two) that start at least three training clues."""
    counts: dict[str, int] = {}
    for text, _ in samples:
        for key in {opening(text, 1), opening(text, 2)}:
            counts[key] = counts.get(key, 0) + 1
    return sorted(key for key, n in counts.items() if n >= 3)


def logistic(x: np.ndarray, y: np.ndarray, steps: int = 800, l2: float = 0.01) -> np.ndarray:
    """A logistic regression fitted by gradient descent (weights, bias last)."""
    x = np.hstack([x, np.ones((len(x), 1))])
    w = np.zeros(x.shape[1])
    for _ in range(steps):
        p = 1 / (1 + np.exp(-(x @ w)))
        w -= 0.5 * (x.T @ (p - y) / len(y) + l2 * np.r_[w[:-1], 0])
    return w


def reader_accuracy(people: list[list[str]], agents: list[list[str]], seed: int = 0) -> float:
    """The reader's mean held-out accuracy over :data:`SPLITS` random halves, on as many agent
    clues as people's (chance is 0.5)."""
    human = [(text, log[:i]) for log in people for i, text in enumerate(log)]
    machine = [(text, log[:i]) for log in agents for i, text in enumerate(log)]
    rng = random.Random(seed)
    machine = rng.sample(machine, len(human))
    samples = human + machine
    labels = np.array([0] * len(human) + [1] * len(machine), dtype=float)
    scores = []
    for _ in range(SPLITS):
        order = list(range(len(samples)))
        rng.shuffle(order)
        train, test = order[: len(order) // 2], order[len(order) // 2 :]
        vocabulary = lead_in_vocabulary([samples[i] for i in train])
        x_train = featurise([samples[i] for i in train], vocabulary)
        x_test = featurise([samples[i] for i in test], vocabulary)
        mean, scale = x_train.mean(axis=0), x_train.std(axis=0) + 1e-9
        x_train, x_test = (x_train - mean) / scale, (x_test - mean) / scale
        w = logistic(x_train, labels[train])
        guess = np.hstack([x_test, np.ones((len(x_test), 1))]) @ w > 0
        scores.append(float((guess == labels[test].astype(bool)).mean()))
    return float(np.mean(scores))


def repeated(log: list[str]) -> list[tuple[str, str]]:
    """Pairs of clues of one table where the later says the earlier again: the same text, the
    earlier inside it (a lead-in before it), or the same meaningful words."""
    found = []
    for i, text in enumerate(log):
        plain, own = normalise(text), stems(text, frozenset())
        for old in log[:i]:
            before = normalise(old)
            if (
                plain == before
                or f" {before} " in f" {plain} "
                or (own and own == stems(old, frozenset()))
            ):
                found.append((old, text))
    return found


# ---- the checks ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def agents() -> list[list[str]]:
    return agent_tables(80)


def test_people_clues_are_many_enough_to_judge_by() -> None:
    tables = people_tables()
    assert len(tables) >= 30 and sum(map(len, tables)) >= 200
    assert not any(repeated(log) for log in tables)


def test_an_outside_reader_cannot_tell_agents_clues_from_peoples_by_form(agents) -> None:
    people = people_tables()
    accuracy = reader_accuracy(people, agents)
    print(f"\nreader's held-out accuracy, people vs offline agents: {accuracy:.3f}")
    assert accuracy <= 0.5 + CHANCE_MARGIN, accuracy
    # The same reader picks out the clues as the agents wrote them before: the measure can fail.
    framed = [
        [random.Random(text).choice(OLD_FRAMES).format(text.rstrip(".")) for text in log]
        for log in agents
    ]
    control = reader_accuracy(people, framed)
    print(f"reader's held-out accuracy, with the old fixed lead-ins: {control:.3f}")
    assert control >= 0.9, control


def test_agents_clues_vary_in_length_and_form_as_peoples_do(agents) -> None:
    """Not one shape: lengths spread as people's do, and no opening word is the agents' habit."""
    people = [text for log in people_tables() for text in log]
    machine = [text for log in agents for text in log]
    for clues in (people, machine):
        lengths = [len(text.split()) for text in clues]
        assert np.percentile(lengths, 10) <= 2 and np.percentile(lengths, 90) >= 5
    firsts: dict[str, int] = {}
    for text in machine:
        firsts[opening(text, 1)] = firsts.get(opening(text, 1), 0) + 1
    assert max(firsts.values()) / len(machine) < 0.12, max(firsts.items(), key=lambda kv: kv[1])
    capitals = np.mean([text[:1].isupper() for text in machine])
    stops = np.mean([text.endswith(".") for text in machine])
    assert 0.15 <= capitals <= 0.6 and 0.1 <= stops <= 0.45, (capitals, stops)


@pytest.mark.parametrize("language", ["en", "de"])
def test_no_clue_is_said_twice_at_a_table(language: str) -> None:
    """In English and at a German table (where the stand-in has only its vague sentences), over
    long games: no clue repeats one said before at its table, by the seat or any other."""
    logs = agent_tables(40 if language == "en" else 12, language=language, seed=7)
    assert sum(map(len, logs)) >= (500 if language == "en" else 150)
    for log in logs:
        assert not repeated(log), repeated(log)[:3]


def test_a_seat_keeps_the_style_it_wrote_in() -> None:
    """A seat taken over (or a failed model's stand-in) writes as the seat wrote before: a person
    who wrote lower case without stops is not followed by capitals and full stops."""
    engine = UndercoverEngine()
    config = case_config("undercover", 11, 0, players=5)
    state = engine.replay(config, [])
    before = {0: ["white and cold", "you have it with cereal"], 1: ["Very bitter.", "Hot drink."]}
    for seat, style in before.items():
        observation = engine.observe(state, seat)
        observation["clues"] = [{"round": 1, "seat": seat, "text": text} for text in style]
        texts = [
            DescriptorAgent(seed=turn, sentences=True).clue(observation)["text"]
            for turn in range(20)
        ]
        if seat == 0:  # a name keeps its capital ("Italian"), nothing else has one
            assert not any(text.endswith(".") for text in texts), texts
            assert sum(text[:1].isupper() for text in texts) <= 3, texts
        else:
            assert all(text[:1].isupper() and text.endswith(".") for text in texts), texts
