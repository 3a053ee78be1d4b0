"""Every rule of Who is Undercover, driven through the engine with literal games."""

from __future__ import annotations

import json

import pytest

from games.base import IllegalMove
from games.undercover.engine import ENGINE

# Five seats; seat 2 is the difference.
CONFIG = {
    "players": 5,
    "normal_word": "milk",
    "difference_word": "soy milk",
    "difference_seat": 2,
    "max_vote_rounds": 6,
}


def config(**changes):
    return {**CONFIG, **changes}


def speak(state, label="clue"):
    """One speaking round: every seat still in gives a fresh clue, in seat order."""
    for seat in list(state.alive):
        text = f"{label} {state.speaking_round} from seat {seat}"
        state = ENGINE.apply(state, {"type": "clue", "seat": seat, "text": text})
    return state


def vote(state, targets):
    """One vote; ``targets`` maps voter to target (None abstains)."""
    for seat, target in targets.items():
        state = ENGINE.apply(state, {"type": "vote", "seat": seat, "target": target})
    return state


def at_first_vote(cfg=CONFIG):
    state = ENGINE.initial(cfg)
    for _ in range(3):
        state = speak(state)
    return state


def everyone_votes_for(state, target, fallback):
    """Every seat in votes for ``target``; ``target`` itself votes for ``fallback``."""
    return vote(state, {seat: fallback if seat == target else target for seat in state.alive})


# ---- phases ---------------------------------------------------------------------------------


def test_it_waits_for_three_speaking_rounds_before_the_first_vote():
    state = ENGINE.initial(CONFIG)
    for round_number in (1, 2, 3):
        assert state.phase == "speak"
        assert state.speaking_round == round_number
        with pytest.raises(IllegalMove, match="time to give a clue"):
            ENGINE.apply(state, {"type": "vote", "seat": 0, "target": 1})
        state = speak(state)
    assert state.phase == "vote"
    assert ENGINE.to_move(state) == [0, 1, 2, 3, 4]


def test_speakers_go_in_seat_order():
    state = ENGINE.initial(CONFIG)
    order = []
    for seat in range(5):
        order.extend(ENGINE.to_move(state))
        state = ENGINE.apply(state, {"type": "clue", "seat": seat, "text": f"hint {seat}"})
    assert order == [0, 1, 2, 3, 4]


def test_it_rejects_a_clue_out_of_turn():
    state = ENGINE.initial(CONFIG)
    with pytest.raises(IllegalMove, match="seat 0's turn"):
        ENGINE.apply(state, {"type": "clue", "seat": 1, "text": "cold and white"})


def test_after_the_first_vote_one_speaking_round_and_one_vote_alternate():
    state = everyone_votes_for(at_first_vote(config(players=7)), target=0, fallback=1)
    assert state.alive == (1, 2, 3, 4, 5, 6)
    assert state.phase == "speak"
    state = speak(state)
    assert state.phase == "vote"
    state = everyone_votes_for(state, target=1, fallback=3)
    assert state.phase == "speak"
    assert ENGINE.to_move(state) == [2]
    state = speak(state)
    assert state.phase == "vote"


def test_a_seat_that_is_out_no_longer_speaks():
    state = everyone_votes_for(at_first_vote(config(players=6)), target=1, fallback=0)
    assert ENGINE.to_move(state) == [0]
    state = ENGINE.apply(state, {"type": "clue", "seat": 0, "text": "from a cow"})
    assert ENGINE.to_move(state) == [2]
    with pytest.raises(IllegalMove, match="out of the game"):
        ENGINE.apply(state, {"type": "clue", "seat": 1, "text": "from a cow, again"})


# ---- votes ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ballot", "reason"),
    [
        ({"seat": 0, "target": 0}, "cannot vote for yourself"),
        ({"seat": 0, "target": 9}, "no seat 9"),
        ({"seat": 0, "target": "1"}, "no seat '1'"),
        ({"seat": 0, "target": True}, "no seat True"),
        ({"seat": 7, "target": 1}, "no seat 7"),
    ],
)
def test_it_rejects_an_impossible_vote(ballot, reason):
    with pytest.raises(IllegalMove, match=reason):
        ENGINE.apply(at_first_vote(), {"type": "vote", **ballot})


def test_it_rejects_a_vote_for_oneself():
    with pytest.raises(IllegalMove, match="cannot vote for yourself"):
        ENGINE.apply(at_first_vote(), {"type": "vote", "seat": 3, "target": 3})


def test_it_rejects_a_vote_for_a_seat_that_is_out():
    state = everyone_votes_for(at_first_vote(config(players=6)), target=1, fallback=0)
    state = speak(state)
    with pytest.raises(IllegalMove, match="seat 1 is already out"):
        ENGINE.apply(state, {"type": "vote", "seat": 0, "target": 1})
    with pytest.raises(IllegalMove, match="seat 1 is out"):
        ENGINE.apply(state, {"type": "vote", "seat": 1, "target": 0})


def test_it_rejects_a_second_vote_in_the_same_round():
    state = vote(at_first_vote(), {0: 1})
    with pytest.raises(IllegalMove, match="already voted"):
        ENGINE.apply(state, {"type": "vote", "seat": 0, "target": 3})


def test_votes_are_simultaneous():
    state = vote(at_first_vote(), {3: 1, 0: 1})
    assert ENGINE.to_move(state) == [1, 2, 4]


@pytest.mark.parametrize(
    "ballots",
    [
        {0: 1, 1: 0, 2: 1, 3: 0, 4: None},  # two seats with two votes each
        {0: None, 1: None, 2: None, 3: None, 4: None},  # everyone abstains
        {0: 1, 1: 2, 2: 3, 3: 4, 4: 0},  # one vote each
    ],
)
def test_a_tie_eliminates_no_one(ballots):
    state = vote(at_first_vote(), ballots)
    assert state.alive == (0, 1, 2, 3, 4)
    assert state.vote_rounds[-1][1] is None
    assert state.phase == "speak"


def test_the_most_voted_seat_is_out_even_without_a_majority():
    state = vote(at_first_vote(), {0: 1, 1: 0, 2: 1, 3: 4, 4: None})
    assert state.alive == (0, 2, 3, 4)


# ---- the end --------------------------------------------------------------------------------


def test_normal_players_win_when_the_difference_is_voted_out():
    state = everyone_votes_for(at_first_vote(), target=2, fallback=0)
    assert ENGINE.is_over(state)
    outcome = ENGINE.outcome(state)
    assert outcome[2] == {
        "reward": 0.0,
        "win": False,
        "role": "difference",
        "word": "soy milk",
        "alive": False,
        "winner": "normal",
        "end": "voted_out",
        "vote_rounds": 1,
    }
    assert [outcome[seat]["reward"] for seat in (0, 1, 3, 4)] == [1.0] * 4
    assert all(outcome[seat]["role"] == "normal" for seat in (0, 1, 3, 4))


def test_the_difference_wins_when_three_players_remain():
    state = everyone_votes_for(at_first_vote(config(players=4)), target=0, fallback=1)
    assert ENGINE.is_over(state)
    outcome = ENGINE.outcome(state)
    assert outcome[2]["win"] is True
    assert outcome[2]["reward"] == 1.0
    assert outcome[2]["end"] == "three_left"
    assert [outcome[seat]["win"] for seat in (0, 1, 3)] == [False] * 3


def test_the_game_goes_on_while_more_than_three_remain():
    state = everyone_votes_for(at_first_vote(), target=0, fallback=1)
    assert not ENGINE.is_over(state)
    state = everyone_votes_for(speak(state), target=1, fallback=3)
    assert ENGINE.is_over(state)
    assert state.end == "three_left"
    assert state.alive == (2, 3, 4)


def test_the_vote_cap_ends_the_game_and_the_difference_survives():
    state = at_first_vote(config(max_vote_rounds=2))
    tie = {0: None, 1: None, 2: None, 3: None, 4: None}
    state = vote(state, tie)
    assert not ENGINE.is_over(state)
    state = vote(speak(state), tie)
    assert ENGINE.is_over(state)
    assert state.end == "vote_cap"
    assert ENGINE.outcome(state)[2]["win"] is True
    assert ENGINE.outcome(state)[0]["win"] is False


def test_catching_the_difference_on_the_last_allowed_vote_still_counts():
    state = vote(at_first_vote(config(max_vote_rounds=1)), {0: 2, 1: 2, 2: 0, 3: 2, 4: 2})
    assert state.end == "voted_out"


def test_it_rejects_every_move_once_the_game_is_over():
    state = everyone_votes_for(at_first_vote(), target=2, fallback=0)
    with pytest.raises(IllegalMove, match="over"):
        ENGINE.apply(state, {"type": "clue", "seat": 0, "text": "more"})


def test_outcome_refuses_a_game_that_is_not_over():
    with pytest.raises(ValueError, match="not over"):
        ENGINE.outcome(ENGINE.initial(CONFIG))


def test_abort_ends_the_game_with_no_winner():
    state = ENGINE.apply(ENGINE.initial(CONFIG), {"type": "abort", "reason": "table closed"})
    assert ENGINE.is_over(state)
    assert ENGINE.to_move(state) == []
    outcome = ENGINE.outcome(state)
    assert {result["end"] for result in outcome.values()} == {"abort"}
    assert not any(result["win"] for result in outcome.values())


def test_a_takeover_changes_nothing_in_the_rules():
    state = speak(ENGINE.initial(CONFIG))
    after = ENGINE.apply(state, {"type": "takeover", "seat": 1, "by": "offline:kb"})
    assert after == state


# ---- clues ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("holder", "text", "reason"),
    [
        ("normal", "I pour milk on cereal", "own word"),
        ("normal", "MILK!", "own word"),
        ("normal", "two milks please", "own word"),
        ("normal", "the milk's gone sour", "own word"),
        ("difference", "a glass of soy milk", "own word"),
        ("difference", "Soy-Milk is nice", "own word"),
        ("difference", "soymilk lattes", "own word"),
        ("normal", "it starts with an m", "letters"),
        ("normal", "Begins with the same sound as moon", "letters"),
        ("normal", "the first letter is m", "letters"),
        ("normal", "it is spelled oddly", "letters"),
        ("normal", "it rhymes with silk", "letters"),
        ("normal", "four syllables or fewer", "letters"),
        ("normal", "think of 'm'", "letters"),
        ("normal", 'the "k" at the end', "letters"),
        ("normal", "", "must contain words"),
        ("normal", "?!", "must contain words"),
        ("normal", "word " * 100, "at most"),
        ("normal", 42, "must be text"),
    ],
)
def test_it_rejects_a_forbidden_clue_with_a_reason(holder, text, reason):
    # Seat 0 speaks first and holds "milk", or "soy milk" as the difference.
    state = ENGINE.initial(config(difference_seat=0) if holder == "difference" else CONFIG)
    with pytest.raises(IllegalMove, match=reason):
        ENGINE.apply(state, {"type": "clue", "seat": 0, "text": text})


@pytest.mark.parametrize("repeat", ["comes from cows", "Comes from cows!", "  comes   FROM cows "])
def test_it_rejects_a_clue_anyone_gave_before(repeat):
    state = ENGINE.apply(
        ENGINE.initial(CONFIG), {"type": "clue", "seat": 0, "text": "comes from cows"}
    )
    with pytest.raises(IllegalMove, match="already given"):
        ENGINE.apply(state, {"type": "clue", "seat": 1, "text": repeat})


def test_it_rejects_a_seat_repeating_its_own_earlier_clue():
    state = ENGINE.initial(CONFIG)
    for seat in range(5):
        state = ENGINE.apply(state, {"type": "clue", "seat": seat, "text": f"hint {seat}"})
    with pytest.raises(IllegalMove, match="already given"):
        ENGINE.apply(state, {"type": "clue", "seat": 0, "text": "hint 0"})


@pytest.mark.parametrize(
    "text",
    ["a milkshake is made with it", "white like snow", "it goes well with cookies", "rock 'n roll"],
)
def test_it_accepts_an_ordinary_clue(text):
    state = ENGINE.apply(ENGINE.initial(CONFIG), {"type": "clue", "seat": 0, "text": text})
    assert state.clues[-1] == (1, 0, text)


def test_a_passed_clue_is_recorded_and_the_turn_moves_on():
    state = ENGINE.apply(ENGINE.initial(CONFIG), {"type": "clue", "seat": 0, "text": None})
    assert state.clues == ((1, 0, None),)
    assert ENGINE.to_move(state) == [1]


# ---- rejected moves, purity, JSON ----------------------------------------------------------


@pytest.mark.parametrize(
    "event",
    [
        {"type": "clue", "seat": 1, "text": "out of turn"},
        {"type": "clue", "seat": 0, "text": "milk"},
        {"type": "vote", "seat": 0, "target": 1},
        {"type": "dance", "seat": 0},
        {"type": "clue", "text": "no seat"},
        {"type": "clue", "seat": -1, "text": "negative seat"},
    ],
)
def test_a_rejected_event_leaves_the_state_unchanged(event):
    state = ENGINE.apply(ENGINE.initial(CONFIG), {"type": "clue", "seat": 0, "text": None})
    state = ENGINE.apply(state, {"type": "clue", "seat": 1, "text": "kept cold"})
    before = json.dumps(ENGINE.state_to_json(state))
    with pytest.raises(IllegalMove):
        ENGINE.apply(state, event)
    assert json.dumps(ENGINE.state_to_json(state)) == before


def test_apply_returns_a_new_state_and_keeps_the_old_one():
    first = ENGINE.initial(CONFIG)
    second = ENGINE.apply(first, {"type": "clue", "seat": 0, "text": "kept cold"})
    assert first.clues == ()
    assert second.clues == ((1, 0, "kept cold"),)
    with pytest.raises(AttributeError):
        first.phase = "vote"


def test_a_state_survives_a_json_round_trip():
    state = vote(speak(everyone_votes_for(at_first_vote(), target=0, fallback=1)), {1: 3, 2: 3})
    restored = ENGINE.state_from_json(json.loads(json.dumps(ENGINE.state_to_json(state))))
    assert restored == state
    rest = {3: 1, 4: 3}
    assert vote(restored, rest) == vote(state, rest)


def test_a_restored_state_still_remembers_earlier_clues():
    state = speak(ENGINE.initial(CONFIG), label="old")
    restored = ENGINE.state_from_json(json.loads(json.dumps(ENGINE.state_to_json(state))))
    with pytest.raises(IllegalMove, match="already given"):
        ENGINE.apply(restored, {"type": "clue", "seat": 0, "text": "old 1 from seat 3"})


# ---- what a seat sees -----------------------------------------------------------------------


def test_votes_stay_hidden_until_the_vote_resolves():
    state = vote(at_first_vote(), {0: 2, 1: 2})
    for seat in (2, 3, 4):
        seen = ENGINE.observe(state, seat)
        assert seen["votes"] == []
        assert seen["my_vote"] is None
    assert ENGINE.observe(state, 0)["my_vote"] == 2
    state = vote(state, {2: 0, 3: 4, 4: 3})
    ballots = ENGINE.observe(state, 3)["votes"][0]["ballots"]
    assert {"seat": 0, "target": 2} in ballots


def test_a_seat_sees_its_own_word_and_no_role_until_the_end():
    state = speak(ENGINE.initial(CONFIG))
    seen = ENGINE.observe(state, 2)
    assert seen["word"] == "soy milk"
    text = json.dumps(seen)
    assert "difference" not in text and "normal" not in text
    assert '"milk"' not in text
    end = everyone_votes_for(at_first_vote(), target=2, fallback=0)
    assert ENGINE.observe(end, 2)["result"] == {
        "role": "difference",
        "win": False,
        "end": "voted_out",
    }
    assert ENGINE.observe(end, 0)["result"] == {"role": "normal", "win": True, "end": "voted_out"}


def test_legal_actions_name_the_seats_one_may_vote_for():
    state = everyone_votes_for(at_first_vote(config(players=6)), target=1, fallback=0)
    state = speak(state)
    assert ENGINE.legal_actions(state, 3) == [
        {"type": "vote", "targets": [0, 2, 4, 5], "abstain": True}
    ]
    assert ENGINE.legal_actions(state, 1) == []
    assert ENGINE.legal_actions(ENGINE.initial(CONFIG), 1) == []
    assert ENGINE.legal_actions(ENGINE.initial(CONFIG), 0)[0]["type"] == "clue"


def test_the_fallback_is_a_passed_clue_or_an_abstention():
    assert ENGINE.fallback(ENGINE.initial(CONFIG), 0) == {"type": "clue", "seat": 0, "text": None}
    state = at_first_vote()
    assert ENGINE.fallback(state, 4) == {"type": "vote", "seat": 4, "target": None}
    ENGINE.apply(state, ENGINE.fallback(state, 4))


# ---- configs --------------------------------------------------------------------------------


def test_new_config_is_fixed_by_the_seed():
    assert ENGINE.new_config(7) == ENGINE.new_config(7)
    configs = [ENGINE.new_config(seed, players=6) for seed in range(60)]
    assert {c["difference_seat"] for c in configs} == set(range(6))
    assert len({(c["normal_word"], c["difference_word"]) for c in configs}) > 30
    assert all(c["players"] == 6 and c["max_vote_rounds"] == 6 for c in configs)


def test_new_config_keeps_a_given_pair_and_picks_the_side_from_the_seed():
    sides = {
        ENGINE.new_config(seed, pair=("milk", "soy milk"))["difference_word"] for seed in range(20)
    }
    assert sides == {"milk", "soy milk"}


@pytest.mark.parametrize("players", [3, 9, "5"])
def test_new_config_rejects_a_table_size_outside_four_to_eight(players):
    with pytest.raises(ValueError, match="players must be 4 to 8"):
        ENGINE.new_config(1, players=players)


def test_new_config_rejects_a_pair_of_equal_words():
    with pytest.raises(ValueError, match="must differ"):
        ENGINE.new_config(1, pair=("Milk", "milk"))


def test_every_seat_is_labelled_player():
    assert ENGINE.seats(config(players=8)) == ["player"] * 8


@pytest.mark.parametrize(
    ("earlier", "again"),
    [
        ("poured over cereal", "You pour it over cereal."),
        ("comes from cows", "it comes from a cow"),
        ("white drink", "I think it's a drink, white"),
    ],
)
def test_rules_version_2_refuses_a_clue_said_again_in_other_words(earlier, again):
    """Issue 48: "no clue said twice at a table" holds for every seat in other words too (the
    same meaningful words by their stems); a log of rules version 1 (no ``rules_version``)
    replays as it was played."""
    v2 = config(rules_version="2")
    state = ENGINE.apply(ENGINE.initial(v2), {"type": "clue", "seat": 0, "text": earlier})
    with pytest.raises(IllegalMove, match="already given in other words"):
        ENGINE.apply(state, {"type": "clue", "seat": 1, "text": again})
    old = ENGINE.initial(config())  # CONFIG has no rules_version: version 1
    events = [
        {"type": "clue", "seat": 0, "text": earlier},
        {"type": "clue", "seat": 1, "text": again},
    ]
    assert len(ENGINE.replay(config(), events).clues) == 2
    assert old.config.get("rules_version") is None


def test_rules_version_2_keeps_new_words_and_numbers_apart():
    """A clue with one new meaningful word, or its numbers in another order, is a new clue."""
    state = ENGINE.initial(config(rules_version="2"))
    for seat, text in enumerate(["poured over cereal", "poured over hot cereal", "idea 1 of 2"]):
        state = ENGINE.apply(state, {"type": "clue", "seat": seat, "text": text})
    state = ENGINE.apply(state, {"type": "clue", "seat": 3, "text": "idea 2 of 1"})
    assert len(state.clues) == 4
    with pytest.raises(ValueError, match="unknown rules_version"):
        ENGINE.initial(config(rules_version="9"))
    assert ENGINE.new_config(3)["rules_version"] == "2"
