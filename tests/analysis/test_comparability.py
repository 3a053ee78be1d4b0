"""The people's games and the model arm's are drawn together only when like with like; otherwise
every difference is named (game, players, language, opponents, roles, oracle, rules version)
and the figure says so instead of drawing them."""

from analysis.comparability import comparability
from analysis.frames import games_frame
from analysis.report import figures, study_figure
from analysis.summary import summarize


def undercover(record, **fields):
    base = {
        "game": "undercover",
        "config": {"players": 6, "normal_word": "Hund", "difference_word": "Katze",
                   "difference_seat": 2},
        "outcome": {"0": {"reward": 1.0, "win": True, "role": "normal"}},
        "events": [],
        "reward": 1.0,
        "win": True,
        "questions": None,
        "players": 6,
        "language": "de",
        "opponents": "offline:kb ×4",
        "condition": "A",
    }  # fmt: skip
    return record(**(base | fields))


def person(record, name, **fields):
    return undercover(record, player=name, player_kind="human", table=f"t-{name}", **fields)


def test_a_five_player_english_arm_with_drawn_roles_differs_in_every_named_way(record):
    people = [person(record, "P-1"), person(record, "P-2", role="difference")]
    arm = undercover(
        record,
        config={"players": 5, "normal_word": "dog", "difference_word": "cat", "difference_seat": 0},
        players=5,
        language="en",
        opponents="openai:m ×4",
        evaluated_role="any",
        condition=None,
    )
    problems = comparability(games_frame([*people, arm]))
    text = " | ".join(problems)
    assert "players 6 and the model arm with 5" in text
    assert "language de and the model arm with en" in text
    assert "agents at the other seats offline:kb ×4 and the model arm with openai:m ×4" in text
    assert "held the different word in 50% of their games" in text and "any" in text
    assert all(p.startswith("undercover, condition A") for p in problems)
    assert len(problems) == 4


def test_the_peoples_twin_is_like_with_like(record):
    people = [person(record, "P-1"), person(record, "P-2")]
    twin = undercover(record, evaluated_role="people", model="offline:descriptor")
    assert comparability(games_frame([*people, twin])) == []


def test_a_condition_no_arm_played_and_another_game_are_named(record):
    people = [person(record, "P-1"), person(record, "P-2", condition="B")]
    arm = undercover(record, evaluated_role="people", condition="B")
    questions = record(model="offline:infogain")
    problems = comparability(games_frame([*people, arm, questions]))
    assert "the model arm played twenty-questions and the people undercover: another game" in (
        problems
    )
    assert "undercover, condition A: no model arm game was played from this condition's design" in (
        problems
    )
    assert not any("condition B" in p for p in problems)


def test_the_study_figure_says_why_it_leaves_the_model_arm_out(record):
    people = [person(record, "P-1"), person(record, "P-2")]
    arm = undercover(record, players=5, evaluated_role="people")
    summary = summarize(games_frame([*people, arm]))
    figure, data = study_figure(summary, "undercover")
    note = figure._suptitle.get_text()
    assert note.startswith("Model arm not drawn") and "players 6 and the model arm with 5" in note
    assert set(data["kind"]) == {"thin", "mean"}
    assert summary.participants["player"].tolist() == ["P-1", "P-2"]


def test_the_people_and_their_twin_stand_side_by_side_role_by_role(record):
    people = [
        person(record, "P-1", role="difference", win=False, reward=0.0),
        person(record, "P-2"),
        person(record, "P-3", round=1),
    ]
    twin = [
        undercover(record, evaluated_role="people", role="difference", win=True, reward=1.0),
        undercover(record, evaluated_role="people", sample=1),
        undercover(record, evaluated_role="people", sample=2, round=1),
    ]
    summary = summarize(games_frame([*people, *twin]))
    assert summary.comparable
    _, data = figures(summary)["rounds-undercover"]
    by = data.set_index(["panel", "series", "t"])
    different, common = "Holding the different word", "Holding the common word"
    assert by.loc[(different, "people: A", 1), "mean"] == 0.0
    assert by.loc[(different, "openai:m, w/o Policy", 1), "mean"] == 1.0
    assert by.loc[(common, "people: A", 1), "n"] == 1
    assert by.loc[(common, "openai:m, w/o Policy", 2), "n"] == 1
    assert set(data["panel"]) == {different, common}
