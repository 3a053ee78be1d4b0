"""One checker for every engine, in the spirit of PettingZoo's api_test: seeded random play through
the shared interface only, so a new game is checked the moment ``games.get_engine`` knows it.

Per game the checker needs just two things: how to fill in an action shape from ``legal_actions``
with random content, and which strings a seat must never read.
"""

from __future__ import annotations

import json
import random
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from games import GAME_NAMES, get_engine
from games.base import IllegalMove

MAX_STEPS = 400
NEUTRAL = ("bright", "heavy", "round", "quiet", "useful", "old", "small", "warm", "soft", "fast")
GARBAGE = [
    {"type": "dance", "seat": 0},
    {"type": "clue", "seat": 99, "text": "far away"},
    {"type": "vote", "seat": 0, "target": 0},
    {"type": "question", "seat": 1, "text": "Is it alive?"},
    {"type": "answer", "seat": 0, "answer": "Maybe"},
    {"seat": 0},
]


def new_config(game, seed):
    engine = get_engine(game)
    if game == "undercover":
        return engine.new_config(seed, players=4 + seed % 5)
    return engine.new_config(seed)


def random_action(rng, shape, step):
    """A concrete action for one shape of ``legal_actions``, with random content."""
    kind = shape["type"]
    if "targets" in shape:
        options = list(shape["targets"]) + ([None] if shape.get("abstain") else [])
        return {"type": kind, "target": rng.choice(options)}
    if "answers" in shape:
        return {"type": kind, "answer": rng.choice(shape["answers"])}
    if kind == "question":
        from games.twenty_questions import CANDIDATES

        if rng.random() < 0.3:
            return {"type": kind, "text": f"Is it a {rng.choice(CANDIDATES).lower()}?"}
        return {"type": kind, "text": f"Is it {rng.choice(NEUTRAL)}, question {step}?"}
    if kind == "clue":
        if rng.random() < 0.1:
            return {"type": kind, "text": None}
        return {"type": kind, "text": f"{rng.choice(NEUTRAL)} and {rng.choice(NEUTRAL)}, {step}"}
    raise AssertionError(f"the checker cannot fill in an action of shape {shape}")


def play_randomly(game, seed, on_step=None):
    """Random legal play (with some illegal tries) until the end; return config, state, events."""
    engine = get_engine(game)
    rng = random.Random(seed)
    config = new_config(game, seed)
    state = engine.initial(config)
    events = []
    for step in range(MAX_STEPS):
        if on_step is not None:
            on_step(engine, config, state)
        if engine.is_over(state):
            return config, state, events
        seat = rng.choice(engine.to_move(state))
        if rng.random() < 0.1:
            event = rng.choice(GARBAGE)
            before = json.dumps(engine.state_to_json(state))
            try:
                engine.apply(state, event)
            except IllegalMove:
                assert json.dumps(engine.state_to_json(state)) == before
                continue
        shape = rng.choice(engine.legal_actions(state, seat))
        event = {**random_action(rng, shape, step), "seat": seat}
        try:
            state = engine.apply(state, event)
        except IllegalMove:
            event = engine.fallback(state, seat)
            state = engine.apply(state, event)
        events.append(event)
    raise AssertionError(f"{game} seed {seed} did not end within {MAX_STEPS} steps")


def check_interface(engine, config, state):
    seats = range(len(engine.seats(config)))
    waiting = engine.to_move(state)
    assert bool(waiting) != engine.is_over(state)
    for seat in seats:
        legal = engine.legal_actions(state, seat)
        assert bool(legal) == (seat in waiting)
        json.dumps(engine.observe(state, seat))
    for seat in waiting:
        before = json.dumps(engine.state_to_json(state))
        engine.apply(state, engine.fallback(state, seat))
        assert json.dumps(engine.state_to_json(state)) == before, "apply changed the old state"
    data = json.loads(json.dumps(engine.state_to_json(state)))
    assert engine.state_from_json(data) == state


@pytest.mark.parametrize("game", GAME_NAMES)
@pytest.mark.parametrize("seed", range(15))
def test_seeded_random_play_keeps_to_the_interface(game, seed):
    engine = get_engine(game)
    config, state, events = play_randomly(game, seed, on_step=check_interface)
    outcome = engine.outcome(state)
    assert set(outcome) == set(range(len(engine.seats(config))))
    for result in outcome.values():
        assert isinstance(result["reward"], float)
        assert result["win"] in (True, False, None)
    json.dumps(outcome)
    assert engine.is_over(engine.replay(config, events))


def test_every_game_name_has_an_engine():
    assert [get_engine(game).name for game in GAME_NAMES] == list(GAME_NAMES)


@pytest.mark.parametrize("game", GAME_NAMES)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(min_value=0, max_value=2**31 - 1))
def test_replay_of_the_log_equals_the_live_game(game, seed):
    engine = get_engine(game)
    config, state, events = play_randomly(game, seed)
    logged = json.loads(json.dumps({"config": config, "events": events}))
    assert logged == {"config": config, "events": events}
    assert engine.replay(logged["config"], logged["events"]) == state
    assert engine.state_from_json(json.loads(json.dumps(engine.state_to_json(state)))) == state
    for cut in range(0, len(events), max(1, len(events) // 5)):
        partial = engine.replay(config, events[:cut])
        restored = engine.state_from_json(json.loads(json.dumps(engine.state_to_json(partial))))
        assert engine.replay(config, []) == engine.initial(config)
        assert restored == partial


# ---- secrecy ----------------------------------------------------------------------------------


def undercover_secrets(engine, config, state, seat):
    """Another seat's word and any role label that is not this seat's own."""
    is_difference = seat == config["difference_seat"]
    own = config["difference_word"] if is_difference else config["normal_word"]
    other = config["normal_word"] if is_difference else config["difference_word"]
    labels = {"difference", "normal", "undercover", "civilian"}
    return [other, *(labels - {"difference" if is_difference else "normal"})], [own]


def twenty_questions_secrets(engine, config, state, seat):
    """The questioner must not read the answer before naming it itself."""
    if engine.seats(config)[seat] != "questioner":
        return [], []
    if engine.is_over(state) and engine.outcome(state)[seat].get("found"):
        return [], []
    return [config["answer"]], []


SECRETS = {"undercover": undercover_secrets, "twenty-questions": twenty_questions_secrets}


def visible_text(observation):
    """The observation as lower-case text, without what the seat wrote itself (its questions) or
    what everyone may read (the candidate list)."""
    shown = dict(observation)
    shown.pop("candidates", None)
    text = json.dumps(shown).lower()
    for turn in shown.get("history", []):
        text = text.replace(json.dumps(turn["question"]).lower(), "")
    return text


def leaks(text, secret, own_words):
    """Whole-word mentions of ``secret`` that are not part of a mention of the seat's own word
    (the other word of "milk" / "soy milk" sits inside "soy milk")."""
    if secret.lower() not in text:
        return []
    inside = [
        m.span() for word in own_words for m in re.finditer(rf"\b{re.escape(word.lower())}\b", text)
    ]
    return [
        m.group()
        for m in re.finditer(rf"\b{re.escape(secret.lower())}\b", text)
        if not any(start <= m.start() and m.end() <= end for start, end in inside)
    ]


def check_secrecy(engine, config, state):
    for seat in range(len(engine.seats(config))):
        hidden, own = SECRETS[engine.name](engine, config, state, seat)
        text = visible_text(engine.observe(state, seat))
        for secret in hidden:
            assert not leaks(text, secret, own), (seat, secret, text)


@pytest.mark.parametrize("game", GAME_NAMES)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(min_value=0, max_value=2**31 - 1))
def test_no_seat_ever_reads_another_seats_secret(game, seed):
    play_randomly(game, seed, on_step=check_secrecy)


@pytest.mark.parametrize(
    ("text", "found"),
    [('"soy milk" is mine', False), ('"milk" is theirs', True), ("soy milk, then milk", True)],
)
def test_the_secrecy_check_tells_a_leak_from_ones_own_word(text, found):
    assert bool(leaks(text, "milk", ["soy milk"])) == found


def test_the_secrecy_check_catches_a_leaked_word():
    engine = get_engine("undercover")
    config = new_config("undercover", 3)
    state = engine.initial(config)
    seat = (config["difference_seat"] + 1) % config["players"]
    leaked = {**engine.observe(state, seat), "note": config["difference_word"]}
    with pytest.raises(AssertionError):
        hidden, own = undercover_secrets(engine, config, state, seat)
        assert not any(leaks(visible_text(leaked), secret, own) for secret in hidden)
