"""What the model is shown under each setting, and in which order."""

import pytest

from games.experience.context import (
    EMPTY_MEMORY,
    SETTINGS,
    Experience,
    curator_prompt,
    experience_block,
    experience_policy_prompt,
    human_policy,
    player_system,
    reflection_prompt,
    rule_policy_prompt,
)

RULES = "RULES-TEXT"
INSTRUCTIONS = "INSTRUCTIONS-TEXT"
GAMES = [Experience("GAME-ONE", 0.5, "LESSON-ONE"), Experience("GAME-TWO", 0.0, "LESSON-TWO")]


def positions(text, *parts):
    return [text.index(part) for part in parts]


def test_without_a_policy_the_model_reads_the_rules_then_its_instructions():
    system = player_system(RULES, INSTRUCTIONS, setting="none", policy="IGNORED")
    assert system == f"{RULES}\n\n{INSTRUCTIONS}"


@pytest.mark.parametrize(
    "setting", ["rule-policy", "experience-policy", "human-policy", "cumulative"]
)
def test_a_policy_sits_between_the_rules_and_the_instructions(setting):
    system = player_system(RULES, INSTRUCTIONS, setting=setting, policy="POLICY-TEXT")
    a, b, c = positions(system, RULES, "POLICY-TEXT", INSTRUCTIONS)
    assert a < b < c
    assert "Strategy to follow" in system[a : b + 1]


def test_a_cumulative_run_with_no_memory_yet_shows_no_policy_section():
    assert (
        player_system(RULES, INSTRUCTIONS, setting="cumulative", policy=None)
        == f"{RULES}\n\n{INSTRUCTIONS}"
    )


def test_full_experience_shows_the_earlier_games_in_order_with_rewards_and_reflections():
    system = player_system(
        RULES, INSTRUCTIONS, setting="full-experience", policy=experience_block(GAMES)
    )
    order = positions(
        system,
        RULES,
        "Earlier game 1",
        "GAME-ONE",
        "Reward: 0.5000",
        "LESSON-ONE",
        "Earlier game 2",
        "GAME-TWO",
        "Reward: 0.0000",
        "LESSON-TWO",
        INSTRUCTIONS,
    )
    assert order == sorted(order)
    assert "Strategy to follow" not in system


def test_an_unknown_setting_is_refused():
    with pytest.raises(ValueError, match="unknown setting"):
        player_system(RULES, INSTRUCTIONS, setting="oracle-peeking", policy=None)


def test_the_settings_are_the_papers_six():
    assert SETTINGS == (
        "none",
        "rule-policy",
        "experience-policy",
        "human-policy",
        "full-experience",
        "cumulative",
    )


def test_the_reflection_prompt_shows_rules_game_and_reward_in_that_order():
    prompt = reflection_prompt(RULES, "GAME-ONE", 0.25)
    order = positions(prompt, RULES, "GAME-ONE", "0.2500", "<answer></answer>")
    assert order == sorted(order)


def test_the_rule_policy_prompt_shows_only_the_rules():
    prompt = rule_policy_prompt(RULES)
    assert prompt.startswith(RULES) and "GAME" not in prompt and "<answer></answer>" in prompt


def test_the_experience_policy_prompt_shows_rules_then_every_game_with_reward_and_reflection():
    prompt = experience_policy_prompt(RULES, GAMES)
    order = positions(
        prompt, RULES, "2 games", "GAME-ONE", "LESSON-ONE", "GAME-TWO", "LESSON-TWO", "<answer>"
    )
    assert order == sorted(order)


def test_the_curator_sees_the_previous_memory_before_the_new_game():
    prompt = curator_prompt(RULES, "OLD-MEMORY", "GAME-TWO", 1.0)
    order = positions(
        prompt, RULES, "OLD-MEMORY", "GAME-TWO", "Reward: 1.0000", "complete new memory"
    )
    assert order == sorted(order)


def test_the_curator_is_told_when_the_memory_is_still_empty():
    assert EMPTY_MEMORY in curator_prompt(RULES, None, "GAME-ONE", 0.0)


@pytest.mark.parametrize("game", ["twenty-questions", "undercover"])
def test_a_human_policy_ships_for_each_game(game):
    text = human_policy(game)
    assert len(text) > 200 and "$" not in text


def test_each_policy_header_names_where_its_policy_came_from():
    headers = {
        setting: player_system(RULES, INSTRUCTIONS, setting=setting, policy="P").split("\n")[2]
        for setting in ("rule-policy", "experience-policy", "human-policy", "cumulative")
    }
    assert "rules alone" in headers["rule-policy"]
    assert "earlier play" in headers["experience-policy"]
    assert "people" in headers["human-policy"]
    assert "memory" in headers["cumulative"]
    assert len(set(headers.values())) == 4  # no two settings share a header
