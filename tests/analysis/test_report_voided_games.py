"""The report leaves out a Who is Undercover game ended by failed model calls, and says so."""

import pandas as pd

from analysis.frames import games_frame
from analysis.report import voided_games, write_report


def test_a_game_a_dead_model_ended_is_not_a_loss_and_the_notes_name_it(tmp_path, record):
    played = [record(game="undercover", role="difference", win=w, reward=float(w)) for w in (1, 1)]
    dead = record(game="undercover", role="difference", win=0, reward=0.0,
                  ended="model_failed", failed_seat=2)  # fmt: skip
    games = games_frame([*played, dead])
    assert voided_games(games) == {"ended by failed model calls": 1}
    write_report(games, tmp_path)
    rates = pd.read_csv(tmp_path / "win_rates.csv")
    difference = rates[rates["role"] == "difference"]
    assert difference["win_rate"].tolist() == [1.0] and difference["games"].tolist() == [2]
    note = "1 of 3 games voided, counted in no n (ended by failed model calls: 1)."
    assert note in (tmp_path / "notes.md").read_text()
    assert note in (tmp_path / "table.md").read_text()


def test_no_note_when_every_game_played_out(tmp_path, record):
    games = games_frame([record(game="undercover", role="normal", win=True, reward=1.0)])
    assert voided_games(games) == {}
    write_report(games, tmp_path)
    assert not (tmp_path / "notes.md").exists()
