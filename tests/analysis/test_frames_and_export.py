"""Frames from records and JSONL, export round trips, and ``python -m analysis``."""

import json

import pandas as pd
import pytest

from analysis.__main__ import main
from analysis.export import EOL, NA, csv_rows, export_frames, read_frames
from analysis.frames import (
    GAME_COLUMNS,
    TURN_COLUMNS,
    RecordError,
    games_frame,
    read_jsonl,
    turns_frame,
)
from analysis.metrics import turn_totals
from analysis.report import write_report
from analysis.safe_frames import safe_frame


def write_jsonl(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_it_builds_one_game_row_per_record_with_usage_totals(record):
    games = games_frame([record(), record(model="offline:infogain", round=1)])
    assert list(games.columns) == list(GAME_COLUMNS)
    first = games.iloc[0]
    assert (first["player"], first["player_kind"], first["role"]) == (
        "openai:m",
        "model",
        "questioner",
    )
    assert (first["tokens"], first["chars"], first["questions"], first["turns"]) == (120, 480, 2, 3)
    assert games.iloc[1]["player_kind"] == "offline"
    assert pd.isna(first["win"])


def test_it_counts_questions_from_the_log_when_the_record_does_not(record):
    bare = record()
    del bare["questions"]
    assert games_frame([bare]).iloc[0]["questions"] == 2


def test_it_builds_one_turn_row_per_event(record):
    turns = turns_frame([record(table="t-7")])
    assert list(turns.columns) == list(TURN_COLUMNS)
    assert turns["type"].tolist() == ["question", "answer", "question"]
    assert turns["seq"].tolist() == [0, 1, 2]
    assert turns.iloc[1]["answer"] == "Yes"
    assert turns.iloc[0]["chars"] == len("Is it a fruit?")
    assert set(turns["table"]) == {"t-7"}


def test_it_names_the_line_of_bad_json(tmp_path, record):
    path = write_jsonl(tmp_path / "r.jsonl", [record(), record()])
    path.write_text(path.read_text() + "\n{not json\n", encoding="utf-8")
    with pytest.raises(RecordError, match=r"line 4: not valid JSON"):
        read_jsonl(path)


def test_it_names_the_line_of_a_record_missing_a_field(tmp_path, record):
    broken = record()
    del broken["reward"]
    path = write_jsonl(tmp_path / "r.jsonl", [record(), broken])
    with pytest.raises(RecordError, match=r"line 2: missing reward"):
        read_jsonl(path)


def test_it_gives_each_jsonl_game_a_table_id_from_its_line(tmp_path, record):
    records = read_jsonl(write_jsonl(tmp_path / "r.jsonl", [record(), record(round=1)]))
    assert games_frame(records)["table"].tolist() == ["exp#1", "exp#2"]


def awkward_records(record):
    """Values that trip naive CSV: empty and missing text, quotes, newlines, None usage."""
    clue_events = [
        {"type": "clue", "seat": 0, "text": ""},
        {"type": "clue", "seat": 1, "text": None},
        {"type": "clue", "seat": 2, "text": 'says "NA",\nthen stops'},
        {"type": "vote", "seat": 0, "target": None},
        {"type": "vote", "seat": 1, "target": 2},
    ]
    return [
        record(reward=0.1 + 0.2, usage={}),
        record(game="undercover", events=clue_events, win=True, reward=1.0, role="normal"),
    ]


@pytest.mark.parametrize("format", ["csv", "parquet"])
def test_it_reads_back_exactly_what_it_exported(tmp_path, record, format):
    records = awkward_records(record)
    frames = {"games": games_frame(records), "turns": turns_frame(records)}
    export_frames(frames, tmp_path, format)
    back = read_frames(tmp_path)
    for name, frame in frames.items():
        if format == "csv":  # an empty text is an empty cell: missing, as a passed clue's text
            frame = frame.apply(lambda c: c.mask(c == "") if c.dtype == "string" else c)
        pd.testing.assert_frame_equal(back[name], frame, check_exact=True)


def test_turns_load_with_plain_read_csv_into_numbers(tmp_path, record):
    """No options: missing values are empty cells, so numeric columns are numbers."""
    records = awkward_records(record)
    export_frames({"turns": turns_frame(records), "games": games_frame(records)}, tmp_path)
    turns = pd.read_csv(tmp_path / "turns.csv")
    for column in ("seq", "seat", "target", "chars", "duration_s", "calls", "latency_s"):
        assert pd.api.types.is_numeric_dtype(turns[column]), column
    assert turns["target"].isna().sum() == len(turns) - 1  # the one vote with a target
    games = pd.read_csv(tmp_path / "games.csv")
    assert pd.api.types.is_float_dtype(games["reward"])
    package = json.loads((tmp_path / "datapackage.json").read_text())
    assert all(r["schema"]["missingValues"] == [""] for r in package["resources"])


def test_it_describes_every_column_in_the_readme(tmp_path, record):
    frames = {"games": games_frame([record()])}
    export_frames(frames, tmp_path, "csv", docs={"games": GAME_COLUMNS})
    readme = (tmp_path / "README.md").read_text()
    assert "## games.csv (1 rows)" in readme
    assert "| player_kind | string | human, model or offline |" in readme


def test_it_refuses_an_unknown_format(tmp_path):
    with pytest.raises(ValueError, match="format must be one of csv, parquet"):
        export_frames({}, tmp_path, "xlsx")


def test_the_cli_writes_the_table_and_figures(tmp_path, curves_from):
    records = curves_from("openai:m", {"none": [[0.2], [0.4]], "cumulative": [[0.6], [0.8]]})
    records += [
        {**r, "player": "P-1", "player_kind": "human", "setting": "cumulative"} for r in records[2:]
    ]
    path = write_jsonl(tmp_path / "results.jsonl", records)
    assert main(["report", str(path), "--out", str(tmp_path / "out")]) == 0
    names = {p.name for p in (tmp_path / "out").iterdir()}
    expected = {"table.md", "table.html", "table.csv", "curves.csv", "differences.csv"}
    expected |= {"participants.csv", "human_curves.csv", "human_mean.csv", "win_rates.csv"}
    expected |= {"condition_means.csv"}
    expected |= {
        f"{kind}-twenty-questions.{ext}"
        for kind in ("cumulative", "study")
        for ext in ("png", "svg", "pdf", "csv")
    }
    assert names == expected
    assert (
        "| Twenty Questions | w/o Policy | <u>0.3000</u> |"
        in (tmp_path / "out/table.md").read_text()
    )


def test_the_cli_reports_a_bad_line_and_fails(tmp_path, capsys):
    path = tmp_path / "results.jsonl"
    path.write_text("[]\n", encoding="utf-8")
    assert main(["report", str(path), "--out", str(tmp_path / "out")]) == 2
    assert "line 1: a record must be a JSON object" in capsys.readouterr().err


def test_it_totals_turns_questions_and_characters_per_game(record):
    totals = turn_totals(turns_frame([record(table="a"), record(table="b", events=[])]))
    assert totals.loc["a"].tolist() == [3, 2, len("Is it a fruit?") + len("Is it an apple?")]
    assert "b" not in totals.index


def test_the_report_of_human_games_only_has_an_empty_table_and_their_figure(tmp_path, record):
    records = [record(player="P-1", player_kind="human", round=t) for t in range(3)]
    names = {p.name for p in write_report(games_frame(records), tmp_path)}
    assert "study-twenty-questions.png" in names and "cumulative-twenty-questions.png" not in names
    assert (tmp_path / "table.md").read_text() == "| Game | Setting |\n| --- | --- |\n"


def test_the_report_writes_win_rates_for_undercover(tmp_path, record):
    records = [record(game="undercover", role="normal", win=w, reward=float(w)) for w in (1, 0)]
    write_report(games_frame(records), tmp_path)
    rates = pd.read_csv(tmp_path / "win_rates.csv")
    normal = rates[rates["role"] == "normal"]
    assert normal["win_rate"].tolist() == [0.5] and normal["games"].tolist() == [2]
    assert 0 < normal["low"].iloc[0] < 0.5 < normal["high"].iloc[0] < 1  # Wilson interval
    assert "roles-undercover.png" in {p.name for p in tmp_path.iterdir()}


def test_it_writes_csv_rows_as_pandas_would_after_the_guard():
    texts = ["=1+1", " =1", "-3.5", "'=x", "a,b", 'q"uote', "line\nbreak", "\u00a0+x", "", None]
    frame = pd.DataFrame(
        {
            "text": pd.Series(texts, dtype="string"),
            "other": pd.Series([*texts[1:], 3], dtype=object),
            "count": pd.Series([None, 0, -3, 10**15, 1, 2, 3, 4, 5, 6], dtype="Int64"),
            "seconds": [float("nan"), 0.0, -0.0, 1e-7, 100.0, 1 / 3, 1e16, 0.1, 2.5, -1.0],
            "flag": pd.Series([None, True, False] * 3 + [True], dtype="boolean"),
        }
    )
    expected = safe_frame(frame).to_csv(index=False, header=False, na_rep=NA, lineterminator=EOL)
    assert csv_rows(safe_frame(frame)) == expected


def test_an_explicit_guess_has_the_question_that_stands_for_it_as_its_text(record):
    guess = record()
    guess["events"] = [*guess["events"][:2], {"type": "question", "seat": 0, "guess": "apple"}]
    turns = turns_frame([guess])
    assert turns.iloc[2]["text"] == "Is the word Apple?"
    assert turns.iloc[2]["chars"] == len("Is the word Apple?")
    assert turns.iloc[0]["text"] == "Is it a fruit?"


def test_an_undercover_game_seen_from_every_seat_gives_each_event_once(record):
    """Three evaluated seats of one game: three games rows, but each event one turns row, carrying
    the player of the seat that made it."""
    events = [
        {"type": "clue", "seat": 0, "text": "red"},
        {"type": "clue", "seat": 1, "text": "round"},
        {"type": "clue", "seat": 2, "text": "sweet"},
        {"type": "vote", "seat": 0, "target": 2},
        {"type": "elimination", "seat": None, "target": 2},
    ]
    seats = [
        record(game="undercover", table="g1", events=events, evaluated_seat=i, model=f"m{i}",
               setting=setting, win=i != 2, reward=float(i != 2), role="normal")
        for i, setting in enumerate(["none", "cumulative", "none"])
    ]  # fmt: skip
    assert len(games_frame(seats)) == 3
    turns = turns_frame(seats)
    assert len(turns) == len(events)
    assert turns["seq"].tolist() == [0, 1, 2, 3, 4]
    assert turns["player"].tolist() == ["m0", "m1", "m2", "m0", "m0"]
    assert turns["setting"].tolist() == ["none", "cumulative", "none", "none", "none"]
