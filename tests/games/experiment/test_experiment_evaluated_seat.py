"""Undercover's evaluated seat is drawn apart from the roles: the difference 1/players of the time."""

import json

import pytest

from games.cases import case_config, case_seed
from games.experiment.runner import run_experiment
from games.experiment.spec import ExperimentSpec, evaluated_seat


@pytest.mark.parametrize("players", [4, 5, 6])
def test_over_600_games_the_evaluated_seat_holds_the_difference_one_time_in_players(players):
    hits = 0
    for seed in range(3, 7):  # the seeds of the count (33.6% before the fix)
        for case in range(150):
            config = case_config("undercover", seed, case, players=players)
            seat = evaluated_seat("undercover", case_seed(seed, case), config)
            hits += seat == config["difference_seat"]
    expected = 600 / players
    sd = (600 * (1 / players) * (1 - 1 / players)) ** 0.5
    assert abs(hits - expected) < 3.5 * sd, (hits, expected)


def test_a_role_restricts_the_draw():
    for case in range(40):
        config = case_config("undercover", 0, case, players=5)
        seed = case_seed(0, case)
        assert evaluated_seat("undercover", seed, config, "difference") == config["difference_seat"]
        assert evaluated_seat("undercover", seed, config, "normal") != config["difference_seat"]
    assert evaluated_seat("twenty-questions", 1, {"answer": "cat"}) == 0


async def test_the_runner_scores_the_seat_the_draw_names(tmp_path):
    spec = ExperimentSpec(game="undercover", model="offline:kb", cases=6, samples=1, seed=4)
    records = await run_experiment([spec], tmp_path / "out.jsonl", progress=False)
    assert len(records) == 6
    for record in records:
        seat = evaluated_seat("undercover", record["seed"], record["config"])
        assert record["evaluated_seat"] == seat


async def test_the_evaluated_role_option_scores_only_the_difference(tmp_path):
    spec = ExperimentSpec(
        game="undercover", model="offline:kb", cases=4, samples=1, evaluated_role="difference"
    )
    records = await run_experiment([spec], tmp_path / "out.jsonl", progress=False)
    assert all(r["evaluated_seat"] == r["config"]["difference_seat"] for r in records)
    line = json.loads((tmp_path / "out.jsonl").read_text().splitlines()[0])
    assert line["outcome"][str(line["evaluated_seat"])]["role"] == "difference"


def test_an_unknown_role_or_a_role_for_twenty_questions_is_refused():
    with pytest.raises(ValueError, match="evaluated_role must be one of"):
        ExperimentSpec(game="undercover", model="offline:kb", evaluated_role="spy")
    with pytest.raises(ValueError, match="undercover only"):
        ExperimentSpec(game="twenty-questions", model="offline:kb", evaluated_role="normal")
