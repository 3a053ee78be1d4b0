"""A seat plan makes the experiment play a study's design: the model in the people's seats, the
design's agents in theirs, the study's players and language, the people's roles round by round."""

import pytest

from games import languages
from games.cases import case_config, case_seed
from games.experiment.runner import run_experiment
from games.experiment.seating import SeatPlan, seat_game
from games.experiment.spec import ExperimentSpec

GERMAN_SIX = {
    "seats": ["model", "offline:kb", "offline:kb", "model", "offline:kb", "offline:kb"],
    "language": "de",
    "condition": "A",
}


async def test_a_six_seat_german_plan_plays_six_seats_in_german_beside_the_designs_agents(
    tmp_path,
):
    spec = ExperimentSpec(
        game="undercover",
        model="offline:descriptor",
        cases=3,
        samples=2,
        seed=7,
        seat_plan=GERMAN_SIX,
    )
    records = await run_experiment([spec], tmp_path / "out.jsonl", progress=False)
    german = set(languages.undercover_pairs("de"))
    assert len(records) == 6
    for record in records:
        assert record["players"] == record["config"]["players"] == 6
        assert len(record["outcome"]) == 6
        assert record["language"] == "de"
        pair = (record["config"]["normal_word"], record["config"]["difference_word"])
        assert pair in german or pair[::-1] in german
        assert sorted(record["seat_specs"]) == ["offline:descriptor"] * 2 + ["offline:kb"] * 4
        assert [record["seat_specs"][s] for s in record["model_seats"]] == [
            "offline:descriptor"
        ] * 2
        assert record["evaluated_seat"] in record["model_seats"]
        assert record["opponents"] == "offline:kb ×4"
        assert record["condition"] == "A"


async def test_each_track_holds_in_every_round_the_role_its_person_held(tmp_path):
    twins = [
        ["difference", "normal", "normal", "difference"],
        ["normal", "difference", "", "normal"],
    ]
    spec = ExperimentSpec(
        game="undercover",
        model="offline:descriptor",
        cases=4,
        samples=2,
        seed=3,
        seat_plan={**GERMAN_SIX, "language": "en", "roles": twins},
    )
    records = await run_experiment([spec], tmp_path / "out.jsonl", progress=False)
    assert len(records) == 8
    for record in records:
        wanted = twins[record["sample"]][record["round"]]
        held = record["outcome"][str(record["evaluated_seat"])]["role"]
        if wanted:
            assert held == wanted, record["round"]
        assert record["evaluated_role"] == "people"


def test_the_seating_moves_a_model_slot_to_the_role_and_keeps_the_design_counts():
    plan = SeatPlan(seats=("model", "offline:kb", "offline:kb", "offline:kb", "offline:kb"))
    for case in range(30):
        config = case_config("undercover", 1, case, players=5)
        for role in ("difference", "normal"):
            twin = SeatPlan(seats=plan.seats, roles=((role,),))
            placed = seat_game(twin, config, case_seed(1, case), 0, 0)
            held = "difference" if placed.evaluated == config["difference_seat"] else "normal"
            assert held == role
            assert placed.specs[placed.evaluated] == "model"
            assert sorted(placed.specs) == sorted(plan.seats)
            assert sorted(placed.slots) == list(range(5))


def test_a_fixed_order_keeps_every_slot_at_its_seat():
    plan = SeatPlan(seats=("offline:kb", "model", "offline:kb", "offline:kb"), seat_order="fixed")
    config = case_config("undercover", 2, 0, players=4)
    placed = seat_game(plan, config, 5, 0, 0)
    assert placed.slots == (0, 1, 2, 3) and placed.evaluated == 1


@pytest.mark.parametrize(
    ("plan", "message"),
    [
        ({"seats": ["offline:kb"] * 5}, "at least one 'model' slot"),
        ({"seats": ["model", "kb", "offline:kb", "offline:kb"]}, r"seats\[1\]"),
        ({"seats": ["model"] + ["offline:kb"] * 9}, "players must be 4 to 8"),
        ({"seats": ["model"] + ["offline:kb"] * 4, "roles": [["spy"]]}, r"roles\[0\]"),
        ({"seats": ["model"] + ["offline:kb"] * 4, "colour": "red"}, "unknown keys: colour"),
        ({"seats": ["model"] + ["offline:kb"] * 4, "seat_order": "random"}, "seat_order"),
    ],
)
def test_a_plan_that_cannot_be_played_is_refused_with_its_field(plan, message):
    with pytest.raises(ValueError, match=message):
        ExperimentSpec(game="undercover", model="offline:kb", seat_plan=plan)


def test_a_plan_and_an_evaluated_role_together_are_refused():
    with pytest.raises(ValueError, match="not evaluated_role"):
        ExperimentSpec(
            game="undercover",
            model="offline:kb",
            evaluated_role="difference",
            seat_plan={"seats": ["model"] + ["offline:kb"] * 4},
        )
