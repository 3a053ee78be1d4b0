"""The w/o Policy baseline reads the rules and the answer format only: no baseline prompt shows a
question a policy uses (the paper's section 4.6 shows models copying the questions of their
examples), so every Improve % is measured against an uncoached model."""

import re

import pytest

from games.llm import prompts

# What a player reads in the `none` setting, in every game (system prompts, turns, follow-ups).
BASELINE = (
    "twenty_questions_rules",
    "twenty_questions_questioner",
    "twenty_questions_questioner_turn",
    "undercover_rules",
    "undercover_player",
    "undercover_speaker",
    "undercover_voter",
    "undercover_turn",
    "math_rules",
    "math_solver",
    "math_problem",
    "corrective",
    "rejected",
)
# Texts a policy is, or is made from: the shipped human policies and the policy prompts.
POLICIES = (
    "human_policy_twenty_questions",
    "human_policy_undercover",
    "policy_from_rules",
    "policy_from_experience",
    "curator",
)
# The questions of the paper's Appendix B policies (its human policy's openers and the models'),
# which a user's --prompts folder may bring in as human_policy_*.txt.
PAPER_POLICY_QUESTIONS = (
    "Is it a living thing?",
    "Does it use electricity?",
    "Is it commonly found indoors?",
    "Is it a man-made object?",
    "Is it living?",
    "Is it commonly found inside a house?",
    "Is it for cutting?",
    "Is it jewelry?",
)
QUESTION = re.compile(r"[A-Z][^.!?\"<>\n]*\?")
ANSWER_EXAMPLE = re.compile(r"<answer>([^<]+)</answer>")


def norm(text):
    return re.sub(r"\W+", " ", text).strip().lower()


def examples(text):
    """The questions and the answer examples a prompt shows."""
    return set(QUESTION.findall(text)) | set(ANSWER_EXAMPLE.findall(text))


def test_the_lists_cover_every_prompt_a_baseline_player_reads():
    assert set(BASELINE) | set(POLICIES) <= set(prompts.NAMES)


@pytest.mark.parametrize("name", BASELINE)
def test_no_baseline_prompt_shows_a_question_any_policy_uses(name):
    shipped = prompts.shipped().texts
    baseline = shipped[name]
    policy_texts = norm(" ".join(shipped[p] for p in POLICIES))
    for example in examples(baseline):
        if len(norm(example).split()) < 3:  # "3", "Yes": a format, not a question
            continue
        assert norm(example) not in policy_texts, (name, example)
    for question in PAPER_POLICY_QUESTIONS:
        assert norm(question) not in norm(baseline), (name, question)
    # and the other way round: no question of a shipped policy appears in the baseline
    for policy in POLICIES:
        for question in QUESTION.findall(shipped[policy]):
            assert norm(question) not in norm(baseline), (name, policy, question)


def test_the_questioner_format_example_is_a_placeholder():
    shown = ANSWER_EXAMPLE.findall(prompts.shipped().texts["twenty_questions_questioner"])
    assert shown and all("?" not in example for example in shown)
