"""NDCG, Improve %, the Table 2 shape and its bold/underline marking, on literal numbers."""

import math

import pandas as pd
import pytest

from analysis.frames import games_frame
from analysis.metrics import (
    improve_percent,
    ndcg_reward,
    ndcg_rewards,
    perfect_binary_reward,
    reference_reward,
    settings_table,
    variance_groups,
    win_rates,
)
from analysis.report import table_html, table_latex, table_markdown


def test_it_scores_a_correct_guess_by_its_question_index():
    assert ndcg_reward(1) == 1.0
    assert ndcg_reward(3) == 0.5
    assert ndcg_reward(7) == pytest.approx(1 / 3)
    assert ndcg_reward(20) == pytest.approx(0.2276702)
    assert ndcg_reward(None) == 0.0


def test_it_scores_a_column_of_guess_indices_the_same_way():
    rewards = ndcg_rewards(pd.Series([1, 3, None, 21]))
    assert rewards.tolist() == pytest.approx([1.0, 0.5, 0.0, 0.0])


def test_it_puts_perfect_binary_questioning_near_a_third():
    assert perfect_binary_reward() == pytest.approx(0.3210, abs=1e-4)
    assert perfect_binary_reward(candidates=2) == pytest.approx(
        0.5 * 1.0 + 0.5 * (1 / math.log2(3))
    )


def test_it_computes_improve_percent_against_the_baseline():
    assert improve_percent(0.2199, 0.2422) == pytest.approx(-9.2073, abs=1e-4)
    assert improve_percent(2 / 30, 1 / 30) == pytest.approx(100.0)
    assert improve_percent(0.2563, 0.2422) == pytest.approx(5.8216, abs=1e-4)


def test_it_says_na_when_the_baseline_is_zero():
    assert math.isnan(improve_percent(0.0667, 0.0))


def table_records(record):
    """Model a: none 0.2, rule 0.1, exp 0.3, human 0.4. Model b: none 0.0, exp 0.5, human 0.5."""
    means = {
        "openai:a": {
            "none": 0.2,
            "rule-policy": 0.1,
            "experience-policy": 0.3,
            "human-policy": 0.4,
        },
        "openai:b": {"none": 0.0, "experience-policy": 0.5, "human-policy": 0.5},
    }
    return [
        record(model=model, setting=setting, reward=reward, sample=sample)
        for model, settings in means.items()
        for setting, reward in settings.items()
        for sample in range(2)
    ]


def test_it_interleaves_improve_rows_after_each_setting(record):
    table = settings_table(games_frame(table_records(record)))
    assert [key[1:] for key in table.index] == [
        ("none", "mean"),
        ("rule-policy", "mean"),
        ("rule-policy", "improve"),
        ("experience-policy", "mean"),
        ("experience-policy", "improve"),
        ("human-policy", "mean"),
        ("human-policy", "improve"),
    ]
    improve = table.xs("improve", level="row")["openai:a"].tolist()
    assert improve == pytest.approx([-50.0, 50.0, 100.0])
    assert math.isnan(table.loc[("twenty-questions", "experience-policy", "improve"), "openai:b"])


def test_it_bolds_the_best_and_underlines_the_second_per_column(record):
    markdown = table_markdown(settings_table(games_frame(table_records(record))))
    lines = {line.split("|")[2].strip(): line for line in markdown.splitlines()[2:]}
    assert "| **0.4000** |" in lines["w/ Human Policy"]
    assert "| <u>0.3000</u> |" in lines["w/ Exp. Policy"]
    assert "| 0.2000 |" in lines["w/o Policy"]
    # Model b ties for best: both bold, and the next value down is the second.
    assert lines["w/ Exp. Policy"].endswith("| **0.5000** |")
    assert lines["w/ Human Policy"].endswith("| **0.5000** |")
    assert lines["w/o Policy"].endswith("| <u>0.0000</u> |")


def test_it_never_marks_improve_rows_and_writes_na(record):
    markdown = table_markdown(settings_table(games_frame(table_records(record))))
    improve = [line for line in markdown.splitlines() if "Improve (%)" in line]
    assert improve[1] == "|  | Improve (%) | 50.00 | NA |"
    assert not any("**" in line or "<u>" in line for line in improve)


def test_it_marks_the_html_table_the_same_way(record):
    html = table_html(settings_table(games_frame(table_records(record))))
    assert "<td><strong>0.4000</strong></td>" in html
    assert "<td><u>0.3000</u></td>" in html
    assert "<th>w/o Policy</th><td>0.2000</td>" in html


def test_it_marks_the_latex_table_the_same_way_and_escapes_labels(record):
    latex = table_latex(settings_table(games_frame(table_records(record))))
    assert latex.startswith("\\begin{tabular}") and latex.rstrip().endswith("\\end{tabular}")
    assert "\\textbf{0.4000}" in latex and "\\underline{0.3000}" in latex
    improve = [line for line in latex.splitlines() if "Improve" in line]
    assert improve[1] == " & Improve (\\%) & 50.00 & NA \\\\"


def test_the_latex_table_names_the_math_block_and_escapes_model_specs(record):
    rows = [
        {"game": "math", "model": "openai:gpt_4o", "setting": setting, "reward": reward,
         "round": r, "sample": 0}
        for setting, rewards in (("none", [0, 1]), ("experience-policy", [1, 1]))
        for r, reward in enumerate(rewards)
    ]  # fmt: skip
    latex = table_latex(settings_table(games_frame(rows)))
    assert (
        "openai:gpt\\_4o" in latex
        and "Single-Turn Math & w/o Policy & \\underline{0.5000}" in latex
    )
    assert "& Improve (\\%) & 100.00 \\\\" in latex


def test_it_splits_participants_into_steady_and_variable_halves(record):
    sequences = {"P-a": [0.5, 0.5, 0.5], "P-b": [0.0, 1.0, 0.0], "P-c": [0.4, 0.6, 0.5]}
    records = [
        record(player=p, player_kind="human", round=t, reward=r)
        for p, rewards in sequences.items()
        for t, r in enumerate(rewards)
    ]
    groups = variance_groups(games_frame(records)).set_index("player")
    assert groups["group"].to_dict() == {"P-a": "steady", "P-c": "steady", "P-b": "variable"}
    assert groups.loc["P-c", "variance"] == pytest.approx(0.02 / 3)


def test_it_draws_one_computed_reference_whatever_infogain_games_the_frame_holds(record):
    games = games_frame([record(model="offline:infogain", reward=r) for r in (0.3, 0.4)])
    expected = (pytest.approx(0.3210, abs=1e-4), "perfect binary questioning, computed optimum")
    assert reference_reward(games) == expected
    assert reference_reward(games[:0]) == expected


def test_it_counts_win_rates_per_role_and_overall(record):
    outcomes = [("normal", True), ("normal", False), ("difference", True), ("normal", True)]
    records = [
        record(game="undercover", role=role, win=win, reward=float(win)) for role, win in outcomes
    ]
    rates = win_rates(games_frame(records)).set_index("role")
    assert rates.loc["normal", "win_rate"] == pytest.approx(2 / 3)
    assert rates.loc["difference", "win_rate"] == 1.0
    assert rates.loc["all", "win_rate"] == 0.75
    assert rates.loc["all", "games"] == 4


def test_it_shows_a_dash_for_a_setting_a_model_never_ran(record):
    markdown = table_markdown(settings_table(games_frame(table_records(record))))
    rule = [line for line in markdown.splitlines() if "w/ Rule Policy" in line]
    assert rule == ["|  | w/ Rule Policy | 0.1000 | – |"]


def test_only_twenty_questions_has_a_reference_line():
    assert reference_reward(None, "undercover") is None
    value, label = reference_reward(None, "twenty-questions")
    assert round(value, 4) == 0.3210
    assert "binary" in label
