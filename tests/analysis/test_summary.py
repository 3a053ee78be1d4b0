"""The one summary: bands, noise marks, offline agents, failed oracles, comparability, Table 4."""

import pytest

from analysis import metrics
from analysis.frames import games_frame
from analysis.metrics import t95
from analysis.report import table_markdown
from analysis.summary import summarize
from games.experiment import summary as games_summary


def test_the_wilson_interval_is_one_function_with_the_published_values():
    assert metrics.wilson is games_summary.wilson  # the analysis's win rates use the same
    low, high = games_summary.wilson(5, 10)
    assert (low, high) == (pytest.approx(0.2366, abs=1e-4), pytest.approx(0.7634, abs=1e-4))
    low, high = games_summary.wilson(0, 20)
    assert low == 0 and high == pytest.approx(0.1611, abs=1e-4)
    assert games_summary.wilson(20, 20)[1] == 1


def test_the_t_quantiles_match_the_tables():
    # scipy's quantiles against the printed tables' three decimals
    assert t95(1) == pytest.approx(12.706, abs=5e-4)
    assert t95(30) == pytest.approx(2.042, abs=5e-4)
    assert t95(60) == pytest.approx(2.000, abs=1e-3)
    assert t95(10_000) == pytest.approx(1.960, abs=1e-3)


def test_model_curves_have_a_band_across_samples_within_zero_and_one(curves_from):
    rewards = {"none": [[0.2, 0.4, 0.3], [0.1, 0.3, 0.2]], "cumulative": [[0.6, 0.2, 0.4]] * 2}
    summary = summarize(games_frame(curves_from("openai:m", rewards)))
    curve = summary.curves[summary.curves["setting"] == "none"]
    assert curve["t"].tolist() == [1, 2]  # rounds, not rounds x samples
    assert (curve["low"] <= curve["R"]).all() and (curve["R"] <= curve["high"]).all()
    assert (curve["low"] >= 0).all() and (curve["high"] <= 1).all()
    assert curve["n"].tolist() == [3, 3]


def test_an_improvement_within_noise_is_marked_and_an_offline_agent_has_no_gain(curves_from):
    noisy = {"none": [[0.2, 0.6, 0.4]], "rule-policy": [[0.3, 0.7, 0.2]]}
    records = curves_from("openai:m", noisy) + curves_from("offline:infogain", noisy)
    records = [{**r, "player_kind": "offline"} if r["model"].startswith("offline") else r
               for r in records]  # fmt: skip
    summary = summarize(games_frame(records))
    text = table_markdown(summary.table, summary.differences)
    assert "(within noise)" in text
    assert "NA (reads no policy)" in text
    offline = summary.differences[summary.differences["player"] == "offline:infogain"]
    assert offline["reads_policy"].tolist() == [False]


def test_games_whose_oracle_failed_are_not_scored(record):
    records = [record(reward=1.0), record(reward=0.0, round=0, sample=1, oracle_failed=True)]
    summary = summarize(games_frame(records))
    assert summary.games == 2 and summary.scored == 1
    assert summary.curves["R"].tolist() == [1.0]


def test_people_and_models_under_different_rules_are_not_comparable(record):
    person = record(player="P-1", player_kind="human", setting="cumulative",
                    config={"answer": "Apple", "max_questions": 20})  # fmt: skip
    model = record(config={"answer": "Apple", "max_questions": 20, "rules_version": "2"})
    summary = summarize(games_frame([person, model]))
    assert summary.problems and "rules version 1" in summary.problems[0]
    assert not summary.comparable
    assert summarize(games_frame([person, model]), allow_mixed=True).comparable


def test_the_participant_table_splits_only_when_the_data_supports_it(record):
    def people(count):
        return [
            record(player=f"P-{p}", player_kind="human", setting="cumulative", round=t,
                   reward=(0.1 * p * t) % 1)
            for p in range(count) for t in range(3)
        ]  # fmt: skip

    two = summarize(games_frame(people(2))).participants
    assert set(two["group"]) == {""}
    four = summarize(games_frame(people(4))).participants
    assert set(four["group"]) == {"steady", "variable"}
    assert four["rounds"].tolist() == [3, 3, 3, 3]
