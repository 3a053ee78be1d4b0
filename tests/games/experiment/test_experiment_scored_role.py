"""Which Who is Undercover seat a run scores: the difference by default in the paper's targets
and the experiment command, ``--evaluated-role normal|any`` otherwise, named in every record, in
the dry run and in each table's note; a folder is never resumed under another role."""

import csv
import json

import pytest

from analysis.__main__ import main
from games.__main__ import main as games_main
from tests.fakes.game_responder import GameResponder

MODEL = "openai-compatible:fake"


def read(path):
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def table3(out, *extra):
    return ["reproduce", "table3", "--model", MODEL, "--out", str(out), "--cases", "3",
            "--experience-games", "1", "--no-progress", *extra]  # fmt: skip


@pytest.mark.parametrize("target", ["table1", "table2", "table3", "table4"])
def test_the_dry_run_of_every_undercover_target_names_the_difference_seat(tmp_path, capsys, target):
    argv = ["reproduce", target, "--model", "openai:gpt-4o", "--out", str(tmp_path / "x"),
            "--no-math", "--dry-run"]  # fmt: skip
    assert main(argv) == 0
    text = capsys.readouterr().out
    inferred = (
        "scored: the difference seat (inferred; --evaluated-role normal scores a normal seat)"
    )
    assert f"{inferred} (--evaluated-role difference)" in text
    assert main([*argv, "--evaluated-role", "any", "--players", "4"]) == 0
    assert "scored: any seat, drawn uniformly (at least 1/4 = 0.25 won)" in capsys.readouterr().out
    assert games_main([*argv, "--evaluated-role", "normal"]) == 0  # python -m games reproduce
    assert "scored: a normal seat (--evaluated-role normal)" in capsys.readouterr().out


def test_figure3_plays_no_undercover_and_refuses_a_role(tmp_path, capsys):
    argv = ["reproduce", "figure3", "--model", "openai:gpt-4o", "--out", str(tmp_path / "f"),
            "--dry-run"]  # fmt: skip
    assert main(argv) == 0
    assert "scored:" not in capsys.readouterr().out
    with pytest.raises(SystemExit, match="figure3 plays no Who is Undercover"):
        main([*argv, "--evaluated-role", "difference"])


def test_table3_scores_the_difference_and_says_so(tmp_path, llm_server, monkeypatch):
    llm_server.responder = GameResponder()
    monkeypatch.setenv("OPENAI_BASE_URL", llm_server.openai_base_url)
    out = tmp_path / "t3"
    assert main(table3(out)) == 0
    records = read(out / "table3.jsonl")
    assert len(records) == 9
    for record in records:
        seat = record["evaluated_seat"]
        assert seat == record["config"]["difference_seat"]
        assert record["evaluated_role"] == "difference"
        assert record["outcome"][str(seat)]["role"] == "difference"
        # the reward is the difference's: it wins exactly when the normal players lose
        normal = next(v for k, v in record["outcome"].items() if int(k) != seat)
        assert record["win"] == (not normal["win"])
    rows = list(csv.DictReader((out / "table3.csv").open()))
    assert rows and all(r["note"].startswith("scored: the difference seat") for r in rows)
    assert (
        "Who is Undercover, scored: the difference seat (inferred;"
        in (out / "table3.md").read_text()
    )

    # Resuming the folder under another role is refused before any game is played.
    sent = len(llm_server.requests)
    with pytest.raises(SystemExit, match="scored as role 'difference', not 'any'"):
        main(table3(out, "--evaluated-role", "any"))
    assert len(llm_server.requests) == sent


def test_any_keeps_the_uniform_draw_and_normal_never_scores_the_difference(tmp_path):
    out = tmp_path / "any"
    argv = ["reproduce", "table3", "--model", "offline:kb", "--out", str(out), "--cases", "12",
            "--experience-games", "1", "--no-progress", "--evaluated-role", "any"]  # fmt: skip
    assert main(argv) == 0
    records = read(out / "table3.jsonl")
    assert {r["evaluated_role"] for r in records} == {"any"}
    held = {r["outcome"][str(r["evaluated_seat"])]["role"] for r in records}
    assert held == {"normal", "difference"}  # 36 games, a uniform seat: both roles come up
    rows = list(csv.DictReader((out / "table3.csv").open()))
    assert all("drawn uniformly (at least 1/5 = 0.20 won)" in r["note"] for r in rows)

    out = tmp_path / "normal"
    argv[argv.index(str(tmp_path / "any"))] = str(out)
    argv[-1] = "normal"
    assert main(argv) == 0
    records = read(out / "table3.jsonl")
    assert all(r["evaluated_seat"] != r["config"]["difference_seat"] for r in records)
    assert {r["evaluated_role"] for r in records} == {"normal"}


def test_the_experiment_command_scores_the_difference_unless_told(tmp_path, capsys):
    def run(name, *extra):
        out = tmp_path / f"{name}.jsonl"
        argv = ["experiment", "--game", "undercover", "--model", "offline:kb", "--cases", "6",
                "--samples", "1", "--out", str(out), "--no-progress", "--no-cache", *extra]  # fmt: skip
        assert games_main(argv) == 0
        return read(out)

    paper = run("paper")
    assert all(r["evaluated_seat"] == r["config"]["difference_seat"] for r in paper)
    assert {r["evaluated_role"] for r in paper} == {"difference"}
    assert "scored: the difference seat" in capsys.readouterr().err
    uniform = run("any", "--evaluated-role", "any")
    assert {r["evaluated_role"] for r in uniform} == {"any"}
    from games.experiment.spec import evaluated_seat

    assert all(
        r["evaluated_seat"] == evaluated_seat("undercover", r["seed"], r["config"]) for r in uniform
    )
    tq = run_tq(tmp_path)
    assert all("evaluated_role" not in r for r in tq)


def run_tq(tmp_path):
    out = tmp_path / "tq.jsonl"
    argv = ["experiment", "--game", "twenty-questions", "--model", "offline:infogain", "--cases",
            "1", "--samples", "1", "--out", str(out), "--no-progress", "--no-cache"]  # fmt: skip
    assert games_main(argv) == 0
    return read(out)


def test_table1_plays_its_undercover_games_from_the_difference_seat(
    tmp_path, llm_server, monkeypatch
):
    llm_server.responder = GameResponder()
    monkeypatch.setenv("OPENAI_BASE_URL", llm_server.openai_base_url)
    out = tmp_path / "t1"
    argv = ["reproduce", "table1", "--model", MODEL, "--out", str(out), "--samples", "1",
            "--experience-games", "1", "--no-progress"]  # fmt: skip
    assert main(argv) == 0
    undercover = [r for r in read(out / "table1.jsonl") if r["game"] == "undercover"]
    assert undercover and all(r["evaluated_role"] == "difference" for r in undercover)
    assert all(r["evaluated_seat"] == r["config"]["difference_seat"] for r in undercover)
    text = (out / "table1.md").read_text()
    assert (
        "Who is Undercover's games (the earlier ones included): scored: the difference seat "
        "(inferred; --evaluated-role normal scores a normal seat)." in text
    )
