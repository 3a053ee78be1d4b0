"""The stage 2 majority vote on literal completions: the plurality is over meanings, not spellings.

Each row is one question's completions, the task kind and the rewards TTRA must give them. The
rows include every case of issue 15: equal values written differently, units and percentages as
math-verify decides them, option letters in their usual spellings, unboxed answers, and ties.
"""

import pytest

from studyapp.pipelines.ttra.rewards import majority_vote_reward, plurality, vote

pytest.importorskip("math_verify")


def boxed(*answers):
    return [rf"Let me work it out. \boxed{{{a}}}" for a in answers]


CASES = [
    # (name, completions, kind, rewards)
    (
        "a half three ways",
        boxed("0.5", r"\frac{1}{2}", "1/2", "0.7", "0.7"),
        "math",
        [1, 1, 1, 0, 0],
    ),
    (
        "dfrac is frac",
        boxed(r"\dfrac{3}{4}", r"\frac{3}{4}", "0.75", "0.7", "0.7"),
        "math",
        [1, 1, 1, 0, 0],
    ),
    (
        "dfrac and frac outvote 0.7 together",
        boxed(r"\dfrac{3}{4}", r"\frac{3}{4}", "0.7"),
        "math",
        [1, 1, 0],
    ),
    ("percent sign", boxed(r"50\%", "50", "40"), "math", [1, 1, 0]),
    ("percent sign unescaped", boxed("50%", "50", "40"), "math", [1, 1, 0]),
    ("unit", boxed("5 cm", "5", "6"), "math", [1, 1, 0]),
    ("unit in text", boxed(r"5\text{ cm}", "5", "6"), "math", [1, 1, 0]),
    ("thousands separator", boxed("1,000", "1000", "100"), "math", [1, 1, 0]),
    ("an equation's value", boxed("x = 3", "3", "4"), "math", [1, 1, 0]),
    ("trailing zero", boxed("2", "2.0", "3"), "math", [1, 1, 0]),
    ("a root two ways", boxed(r"\sqrt{2}", "2^{1/2}", "1.41"), "math", [1, 1, 0]),
    ("a sign matters", boxed("-1", "1", "1"), "math", [0, 1, 1]),
    ("pi is not 3.14", boxed(r"\pi", "3.14", "3.14"), "math", [0, 1, 1]),
    ("order matters in a tuple", boxed("(1,2)", "(2,1)", "(1,2)"), "math", [1, 0, 1]),
    (
        "unboxed reasoning ends on the answer",
        ["Reasoning: 6 times 7, so the answer is 42", r"\boxed{42}", r"\boxed{41}"],
        "math",
        [1, 1, 0],
    ),
    (
        "the last box counts",
        [r"\boxed{3} no, \boxed{4}", r"\boxed{4}", r"\boxed{3}"],
        "math",
        [1, 1, 0],
    ),
    ("empty answers never vote", ["", "no idea", r"\boxed{}", r"\boxed{9}"], "math", [0, 0, 0, 1]),
    ("only the letter itself", boxed("(A)", "A", "a", "B", "B"), "choice", [0, 0, 0, 1, 1]),
    ("a letter with its option is none", boxed("B. 42", "B", "C", "B"), "choice", [0, 1, 0, 1]),
    (
        "a first line that starts with a letter",
        ["A train travels 60 km", "A train goes", "C", r"\boxed{C}"],
        "choice",
        [0, 0, 1, 1],
    ),
    (
        "the first line for MathQA",
        ["B\nbecause 42 is B", r"\boxed{B}", "Hmm.\nB"],
        "choice",
        [1, 1, 0],
    ),
    ("no maths for letters", boxed("0.5", r"\frac{1}{2}", "0.5"), "choice", [0, 0, 0]),
    ("text by its normal form", boxed(r"\text{Apple}", "apple", "Pear"), "word", [1, 1, 0]),
    (
        "text after the answer is",
        ["So the secret word is apple.", r"\boxed{Apple}", r"\boxed{pear}"],
        "word",
        [1, 1, 0],
    ),
    ("a tie goes to the first seen", boxed("4", "5"), "math", [1, 0]),
    ("a tie between meanings", boxed("5", "0.5", r"\frac{1}{2}", "5.0"), "math", [1, 0, 0, 1]),
]


@pytest.mark.parametrize(
    ("completions", "kind", "rewards"),
    [pytest.param(c, k, r, id=name) for name, c, k, r in CASES],
)
def test_the_vote_rewards_the_plurality_meaning(completions, kind, rewards):
    n = len(completions)
    got = majority_vote_reward(completions, task_id=["q"] * n, kind=[kind] * n)
    assert got == [float(r) for r in rewards]


def test_without_a_kind_column_answers_are_read_as_math():
    assert majority_vote_reward(boxed("0.5", "1/2", "3"), task_id=["q"] * 3) == [1.0, 1.0, 0.0]


def test_ties_can_give_no_pseudo_label():
    completions = boxed("4", "4", "5", "5")
    assert majority_vote_reward(completions, task_id=["q"] * 4, ties="none") == [0.0] * 4
    assert majority_vote_reward(completions, task_id=["q"] * 4) == [1.0, 1.0, 0.0, 0.0]
    with pytest.raises(ValueError, match="ties"):
        vote(["4"], ties="random")


def test_each_class_is_named_by_its_first_answer():
    result = vote(["1/2", "0.5", r"\frac{1}{2}", "7"])
    assert result.representatives == ["1/2", "7"]
    assert result.sizes == [3, 1]
    assert result.label == "1/2"
    assert plurality([r"\dfrac{3}{4}", "0.75", "0.7"]) == r"\dfrac{3}{4}"


def test_a_percentage_joins_the_first_class_it_matches():
    """math-verify finds 50% equal to both 50 and 0.5, which differ; the first class wins it."""
    assert vote(["50%", "0.5", "50"]).sizes == [3]
    assert vote(["50", "0.5", "50%"]).sizes == [2, 1]


def test_the_winners_reach_the_collapse_monitor_by_meaning():
    seen = []
    majority_vote_reward(
        boxed("0.5", "1/2", "3", "(A)", "a", "B"),
        task_id=["m", "m", "m", "c", "c", "c"],
        kind=["math"] * 3 + ["choice"] * 3,
        on_majorities=seen.append,
    )
    assert seen == [{"m": "0.5", "c": "B"}]
