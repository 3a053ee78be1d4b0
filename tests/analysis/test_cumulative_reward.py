"""Equations (1)-(2) of §3.2.2 and the per-participant curves, on numbers worked out by hand."""

import pytest

from analysis.frames import games_frame
from analysis.metrics import cumulative_curves, player_curves

# Two samples, three rounds. Round 0 pools base and exp: (0.2 + 0.4 + 0.6 + 0.2) / 4 = 0.35,
# where the separate means would be 0.3 and 0.4.
REWARDS = {
    "none": [[0.2, 0.4], [0.1, 0.3], [0.0, 0.6]],
    "cumulative": [[0.6, 0.2], [0.5, 0.7], [1.0, 0.4]],
}


def curve(curves, setting, column):
    return curves[curves["setting"] == setting][column].tolist()


def test_it_pools_base_and_experience_at_the_first_round(curves_from):
    curves = cumulative_curves(games_frame(curves_from("openai:m", REWARDS)))
    assert curve(curves, "none", "r")[0] == pytest.approx(0.35)
    assert curve(curves, "cumulative", "r")[0] == pytest.approx(0.35)
    assert curve(curves, "none", "samples")[0] == 4


def test_it_averages_over_samples_after_the_first_round(curves_from):
    curves = cumulative_curves(games_frame(curves_from("openai:m", REWARDS)))
    assert curve(curves, "none", "r") == pytest.approx([0.35, 0.2, 0.3])
    assert curve(curves, "cumulative", "r") == pytest.approx([0.35, 0.6, 0.7])


def test_it_takes_the_running_mean_of_per_round_rewards(curves_from):
    curves = cumulative_curves(games_frame(curves_from("openai:m", REWARDS)))
    assert curve(curves, "none", "t") == [1, 2, 3]
    assert curve(curves, "none", "R") == pytest.approx([0.35, 0.275, 0.85 / 3])
    assert curve(curves, "cumulative", "R") == pytest.approx([0.35, 0.475, 1.65 / 3])


def test_it_weights_the_pooled_first_round_by_sample_count(curves_from):
    rewards = {"none": [[0.0, 0.0, 0.0]], "cumulative": [[1.0]]}
    curves = cumulative_curves(games_frame(curves_from("openai:m", rewards)))
    assert curve(curves, "cumulative", "r") == pytest.approx([0.25])


def test_it_keeps_each_model_to_its_own_curves(curves_from):
    records = curves_from("openai:a", {"none": [[0.0]], "cumulative": [[1.0], [1.0]]})
    records += curves_from("openai:b", {"none": [[0.5]], "cumulative": [[0.5], [0.0]]})
    curves = cumulative_curves(games_frame(records))
    b = curves[curves["player"] == "openai:b"]
    assert curve(b, "cumulative", "R") == pytest.approx([0.5, 0.25])


def test_it_ignores_settings_other_than_base_and_experience(curves_from):
    records = curves_from(
        "openai:m", {"none": [[0.2]], "cumulative": [[0.4]], "rule-policy": [[1.0]]}
    )
    curves = cumulative_curves(games_frame(records))
    assert set(curves["setting"]) == {"none", "cumulative"}
    assert curve(curves, "none", "r") == pytest.approx([0.3])


def test_it_gives_each_participant_a_running_mean_without_pooling(record):
    rewards = [0.0, 1.0, 0.5, 0.5]
    records = [
        record(player="P-1", player_kind="human", setting="cumulative", round=t, reward=r)
        for t, r in enumerate(rewards)
    ]
    curves = player_curves(games_frame(records))
    assert curves["R"].tolist() == pytest.approx([0.0, 0.5, 0.5, 0.5])
    assert curves["t"].tolist() == [1, 2, 3, 4]
