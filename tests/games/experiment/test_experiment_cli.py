"""``python -m games experiment`` from flags and from a grid file."""

import json

import pytest

from games.__main__ import main


def read(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_the_command_runs_offline_agents_and_prints_the_summary(tmp_path, capsys):
    out = tmp_path / "results.jsonl"
    argv = [
        "experiment",
        "--game",
        "twenty-questions",
        "--model",
        "offline:infogain",
        "--cases",
        "2",
    ]
    argv += ["--samples", "1", "--seed", "3", "--out", str(out), "--no-progress", "--no-cache"]
    assert main(argv) == 0
    records = read(out)
    assert len(records) == 2 and {r["model"] for r in records} == {"offline:infogain"}
    assert all(r["events"][1]["seat"] == 1 for r in records)  # the offline:kb oracle answered
    assert "offline:infogain" in capsys.readouterr().out


def test_a_grid_file_runs_every_model_and_setting(tmp_path, capsys):
    out = tmp_path / "grid.jsonl"
    grid = tmp_path / "grid.toml"
    grid.write_text(
        'game = "undercover"\nmodels = ["offline:kb"]\nsettings = ["none", "human-policy"]\n'
        f'cases = 2\nsamples = 1\nseed = 1\nout = "{out}"\n'
    )
    assert main(["experiment", "--config", str(grid), "--no-progress"]) == 0
    records = read(out)
    assert {(r["setting"], r["round"]) for r in records} == {
        (s, r) for s in ("none", "human-policy") for r in range(2)
    }
    assert (tmp_path / "grid.cache.sqlite").exists()
    table = capsys.readouterr().out
    # An offline agent reads no policy: its Improve % is NA, as in the analysis's Table 2.
    assert "human-policy" in table and "NA" in table


def test_the_command_needs_a_game_a_model_and_an_output(tmp_path):
    with pytest.raises(SystemExit, match="needs --game"):
        main(["experiment", "--model", "offline:kb"])
