"""``python -m games simulate undercover`` and ``play undercover``."""

from __future__ import annotations

import io
import json

from games.__main__ import main
from games.undercover.cli import play
from games.undercover.engine import ENGINE


def test_simulate_prints_win_rates_by_role_and_how_games_ended(capsys):
    code = main(
        [
            "simulate",
            "undercover",
            "--agent",
            "offline:kb",
            "--players",
            "5",
            "--games",
            "30",
            "--seed",
            "4",
            "--json",
        ]
    )
    summary = json.loads(capsys.readouterr().out)
    assert code == 0
    assert summary["games"] == 30 and summary["players"] == 5
    assert summary["win_rate"]["normal"] + summary["win_rate"]["difference"] == 1.0
    assert sum(summary["ended"].values()) == 30
    assert set(summary["ended"]) == {"voted_out", "three_left", "vote_cap", "abort"}


def test_simulate_refuses_a_table_that_is_too_small(capsys):
    assert main(["simulate", "undercover", "--players", "3", "--games", "1"]) == 2
    assert "players must be 4 to 8" in capsys.readouterr().err


def scripted(lines):
    feed = iter(lines)
    return lambda prompt: next(feed)


def test_play_answers_bad_input_with_a_reason_and_goes_on():
    config = ENGINE.new_config(5, players=4, pair=("milk", "soy milk"))
    you = (config["difference_seat"] + 1) % 4
    out = io.StringIO()
    lines = [
        "it is milk",
        "starts with an m",
        "cold and white",
        "pass",
        "pass",
        "banana",
        str(you),
        "quit",
    ]
    result = play(config, you, "offline:descriptor", scripted(lines), out, seed=5)
    text = out.getvalue()
    assert "Not accepted: a clue must not say your own word" in text
    assert "Not accepted: a clue must not hint at letters" in text
    assert "You: cold and white" in text
    assert "Not accepted: type a seat number, or 'abstain'" in text
    assert "Not accepted: you cannot vote for yourself" in text
    assert result["end"] == "abort"


def test_play_runs_to_the_end_when_the_person_passes_and_abstains():
    config = ENGINE.new_config(2, players=5)
    out = io.StringIO()
    result = play(
        config, 0, "offline:kb", lambda prompt: "pass" if "clue" in prompt else "abstain", out
    )
    assert result["end"] in ("voted_out", "three_left", "vote_cap")
    assert "Game over" in out.getvalue()
