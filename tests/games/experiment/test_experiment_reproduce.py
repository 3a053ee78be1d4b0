"""``python -m analysis reproduce``: every cell of Table 2 from one command against a loopback
server speaking the OpenAI wire format, a dry run that spends nothing, and a run killed midway
that resumes without replaying a finished game."""

import csv
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from analysis.__main__ import main
from games.llm import prompts
from tests.fakes.game_responder import GameResponder
from tests.fakes.llm_server import FakeLLMServer, last_user_text

SAMPLE = "games/mathtest/sample_tasks.jsonl"
MODEL = "openai-compatible:fake"
ROOT = Path(__file__).resolve().parents[3]


class Responder(GameResponder):
    """Plays both games (GameResponder) and solves the math sample's first problem only."""

    def __call__(self, body):
        last = last_user_text(body)
        if last.startswith("Problem:"):
            return "<answer>20</answer>" if "How many steps" in last else "<answer>7</answer>"
        return super().__call__(body)


def tiny(out, *extra):
    return ["reproduce", "table2", "--model", MODEL, "--math-tasks", SAMPLE, "--out", str(out),
            "--cases", "2", "--samples", "1", "--experience-games", "1", "--no-progress",
            *extra]  # fmt: skip


def read(path):
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def keys(records):
    return [(r["game"], r["setting"], r["sample"], r["round"]) for r in records]


def test_table2_fills_every_cell_of_the_papers_layout(tmp_path, llm_server, monkeypatch):
    llm_server.responder = Responder()
    monkeypatch.setenv("OPENAI_BASE_URL", llm_server.openai_base_url)
    policy = tmp_path / "people.txt"
    policy.write_text("Policy written by the study's participants.")
    out = tmp_path / "run"
    assert main(tiny(out, "--human-policy", f"undercover={policy}")) == 0
    with (out / "table2.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert list(rows[0]) == ["task", "setting", "model", "score", "improve_pct", "ci_low",
                             "ci_high", "n", "played", "note"]  # fmt: skip
    cells = {(r["task"], r["setting"]) for r in rows}
    expected = {("math", s) for s in ("none", "experience-policy")} | {
        (g, s)
        for g in ("twenty-questions", "undercover")
        for s in ("none", "rule-policy", "experience-policy", "human-policy")
    }
    assert cells == expected and all(r["model"] == MODEL and r["n"] == "2" for r in rows)
    assert all(r["score"] != "" and r["ci_low"] != "" for r in rows)
    math_none = next(r for r in rows if r["task"] == "math" and r["setting"] == "none")
    assert float(math_none["score"]) == 0.5  # problem 1 right, problem 2 wrong
    markdown = (out / "table2.md").read_text()
    for label in ("Single-Turn Math", "Twenty Questions", "Who is Undercover", "w/o Policy",
                  "w/ Rule Policy", "w/ Exp. Policy", "w/ Human Policy", "Improve (%)"):  # fmt: skip
        assert label in markdown
    assert "\\begin{tabular}" in (out / "table2.tex").read_text()
    records = read(out / "table2.jsonl")
    shown = [r["policy"] for r in records if r["setting"] == "human-policy"]
    assert "Policy written by the study's participants." in shown
    assert prompts.text("human_policy_twenty_questions") in shown  # the other game: shipped
    assert all(r["prompts"]["name"] == "shipped" for r in records)


def test_the_dry_run_prints_the_plan_and_spends_nothing(tmp_path, llm_server, capsys):
    out = tmp_path / "dry"
    argv = ["reproduce", "table2", "--model", "openai:gpt-4o", "--math-tasks", SAMPLE,
            "--out", str(out), "--dry-run", "--price", "openai:gpt-4o=2.5,10"]  # fmt: skip
    assert main(argv) == 0
    text = capsys.readouterr().out
    # The paper's protocol: one run of 32 cases per game setting; the 8 sample problems for math.
    assert " 32 " in text and " 8 " in text and " 96 " not in text
    assert "calls" in text and "cost $" in text and "?" not in text.splitlines()[-1]
    assert not out.exists() and llm_server.requests == []
    for target, settings in (("table3", 3), ("figure3", 2)):
        argv = ["reproduce", target, "--model", "openai:o1", "--out", str(out), "--dry-run"]
        assert main(argv) == 0
        lines = [line for line in capsys.readouterr().out.splitlines() if "openai:o1" in line]
        assert len(lines) == settings
    assert not out.exists()


def test_table2_without_a_task_file_or_with_a_bad_policy_file_stops_before_playing(tmp_path):
    with pytest.raises(SystemExit, match="needs --math-tasks"):
        main(["reproduce", "table2", "--model", MODEL, "--out", str(tmp_path / "a")])
    with pytest.raises(SystemExit, match="--human-policy"):
        main(tiny(tmp_path / "b", "--human-policy", str(tmp_path / "missing.txt")))
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


def test_a_run_killed_midway_resumes_without_replaying_finished_games(tmp_path):
    out = tmp_path / "killed"
    with FakeLLMServer(Responder(), latency=0.01) as server:
        env = {**os.environ, "OPENAI_BASE_URL": server.openai_base_url, "PYTHONPATH": str(ROOT)}
        argv = [sys.executable, "-m", "analysis", *tiny(out, "--parallel", "2", "--no-cache")]
        child = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE)  # fmt: skip
        records_path = out / "table2.jsonl"
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and child.poll() is None:
            if records_path.exists() and len(read(records_path)) >= 5:
                break
            time.sleep(0.05)
        assert child.poll() is None, child.stderr.read().decode()[-2000:]
        child.send_signal(signal.SIGKILL)
        child.wait()
        before = read(records_path)
        assert 5 <= len(before) < 20
        finished = set(keys(before))
        calls_before = len(server.requests)
        done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, timeout=300)
        assert done.returncode == 0, done.stderr.decode()[-2000:]
        after = read(records_path)
    assert after[: len(before)] == before  # the finished games' lines are untouched
    assert len(after) == 20 and len(set(keys(after))) == 20  # every game once, none twice
    replayed = [r for r in after[len(before) :] if tuple(keys([r])[0]) in finished]
    assert replayed == [] and len(server.requests) > calls_before
    assert (out / "table2.csv").exists()


def test_figure3_draws_the_cumulative_curves_and_table3_gives_r1_its_budget(
    tmp_path, llm_server, monkeypatch
):
    llm_server.responder = Responder()
    monkeypatch.setenv("OPENAI_BASE_URL", llm_server.openai_base_url)
    argv = ["reproduce", "figure3", "--model", MODEL, "--out", str(tmp_path / "f"),
            "--rounds", "2", "--samples", "1", "--no-progress"]  # fmt: skip
    assert main(argv) == 0
    # The table and the figure's data are two files: the table is not overwritten by the figure.
    table = list(csv.DictReader((tmp_path / "f" / "figure3.csv").open()))
    assert {r["setting"] for r in table} == {"none", "cumulative"} and "score" in table[0]
    data = (tmp_path / "f" / "figure3_curves.csv").read_text()
    assert "w/ Cumulative Policy" in data and (tmp_path / "f" / "figure3_curves.png").exists()
    assert "Improve (%)" in (tmp_path / "f" / "figure3.md").read_text()
    assert {r["round"] for r in read(tmp_path / "f" / "figure3.jsonl")} == {0, 1}
    start = len(llm_server.requests)
    r1 = "openai-compatible:deepseek-r1"
    argv = ["reproduce", "table3", "--model", r1, "--out", str(tmp_path / "t"), "--cases", "1",
            "--samples", "1", "--experience-games", "1", "--no-progress"]  # fmt: skip
    assert main(argv) == 0
    budgets = {r.body["max_tokens"] for r in llm_server.requests[start:]}
    assert budgets == {16384}
    settings = {r["setting"] for r in read(tmp_path / "t" / "table3.jsonl")}
    assert settings == {"none", "experience-policy", "human-policy"}


class DeadOracle(Responder):
    """Plays everything but never answers as the Twenty Questions oracle (no <answer> tag)."""

    def __call__(self, body):
        if self.kind(body) == "oracle":
            return "I would rather not say."
        return super().__call__(body)


def test_a_block_whose_games_were_all_voided_is_shown_with_its_reason(
    tmp_path, llm_server, monkeypatch, capsys
):
    llm_server.responder = DeadOracle()
    monkeypatch.setenv("OPENAI_BASE_URL", llm_server.openai_base_url)
    out = tmp_path / "voided"
    argv = tiny(out, "--no-math")
    assert main(argv) == 0  # a warning, not a failure, without --strict
    assert "no scorable game" in capsys.readouterr().err
    rows = list(csv.DictReader((out / "table2.csv").open()))
    tq = [r for r in rows if r["task"] == "twenty-questions"]
    assert {r["setting"] for r in tq} == {"none", "rule-policy", "experience-policy",
                                          "human-policy"}  # fmt: skip
    assert all(r["score"] == "" and r["n"] == "0" and r["played"] == "2" for r in tq)
    assert all("oracle failed" in r["note"] for r in tq)
    markdown = (out / "table2.md").read_text()
    assert "Twenty Questions" in markdown and "Who is Undercover" in markdown
    tq_lines = markdown.split("Twenty Questions", 1)[1].split("Who is Undercover", 1)[0]
    assert "–" in tq_lines
    assert "no scorable game: all 2 voided" in markdown and "oracle failed" in markdown
    # --strict turns the warning into a failing exit; the layout alone says the same.
    assert main([*argv, "--strict"]) == 1
    assert main(["reproduce-layout", "table2", "--out", str(out), "--strict"]) == 1


def test_table1_and_table4_dry_runs_and_tiny_runs(tmp_path, llm_server, monkeypatch, capsys):
    for target, rows in (("table1", 4), ("table4", 2)):
        argv = ["reproduce", target, "--model", "openai:gpt-4o", "--out", str(tmp_path / target),
                "--dry-run", "--price", "openai:gpt-4o=2.5,10"]  # fmt: skip
        assert main(argv) == 0
        text = capsys.readouterr().out
        assert len([line for line in text.splitlines() if "openai:gpt-4o " in line]) == rows
        assert "cost $" in text and not (tmp_path / target).exists()
    assert llm_server.requests == []

    llm_server.responder = Responder()
    monkeypatch.setenv("OPENAI_BASE_URL", llm_server.openai_base_url)
    out = tmp_path / "t1"
    argv = ["reproduce", "table1", "--model", MODEL, "--out", str(out), "--samples", "1",
            "--experience-games", "2", "--no-progress"]  # fmt: skip
    assert main(argv) == 0
    rows = list(csv.DictReader((out / "table1.csv").open()))
    parts = {(r["task"], r["part"]) for r in rows}
    assert parts == {(g, p) for g in ("twenty-questions", "undercover")
                     for p in ("instruction", "experience", "policy")}  # fmt: skip
    assert all(float(r["tokens"]) > 0 for r in rows)
    assert "Instruction" in (out / "table1.md").read_text()

    out = tmp_path / "t4"
    argv = ["reproduce", "table4", "--model", MODEL, "--out", str(out), "--cases", "2",
            "--no-progress"]  # fmt: skip
    start = len(llm_server.requests)
    assert main(argv) == 0
    named = [prompt_text_of(r.body) for r in llm_server.requests[start:]]
    assert any("civilians" in t for t in named) and any("normal players" in t for t in named)
    undercover = read(out / "table4-undercover.jsonl")
    assert undercover and all(
        r["prompts"]["overridden"] == ["undercover_rules"] for r in undercover
    )
    assert all(r["evaluated_seat"] == r["config"]["difference_seat"] for r in undercover)
    rows = list(csv.DictReader((out / "table4.csv").open()))
    assert {r["role_names"] for r in rows} == {"difference", "undercover"}
    assert all(r["games"] == "2" for r in rows)


def prompt_text_of(body):
    from tests.fakes.llm_server import prompt_text

    return prompt_text(body)


def test_python_m_games_reproduce_plays_here_and_lays_out_in_analysis(
    tmp_path, llm_server, monkeypatch, capsys
):
    """The games entry point: its dry run in process, its layout by `python -m analysis
    reproduce-layout` in a process of its own (games imports no analysis), exit status passed on."""
    from games.__main__ import main as games_main

    for target in ("table1", "table4"):
        argv = ["reproduce", target, "--model", "openai:gpt-4o", "--out", str(tmp_path / target),
                "--dry-run"]  # fmt: skip
        assert games_main(argv) == 0
        assert "plan (estimate; nothing is spent)" in capsys.readouterr().out
    llm_server.responder = DeadOracle()
    monkeypatch.setenv("OPENAI_BASE_URL", llm_server.openai_base_url)
    out = tmp_path / "g"
    argv = ["reproduce", "figure3", "--model", MODEL, "--out", str(out), "--rounds", "2",
            "--samples", "1", "--no-progress"]  # fmt: skip
    assert games_main(argv) == 0  # every game voided: a warning
    assert (out / "figure3.csv").exists() and "no scorable game" in (out / "figure3.md").read_text()
    assert games_main([*argv, "--strict"]) == 1


def test_the_undercover_vote_cap_is_a_flag_and_capped_games_are_counted(
    tmp_path, llm_server, monkeypatch
):
    llm_server.responder = Responder()
    monkeypatch.setenv("OPENAI_BASE_URL", llm_server.openai_base_url)
    out = tmp_path / "cap"
    argv = ["reproduce", "table3", "--model", MODEL, "--out", str(out), "--cases", "3",
            "--samples", "1", "--experience-games", "1", "--max-vote-rounds", "1",
            "--no-progress"]  # fmt: skip
    assert main(argv) == 0
    records = read(out / "table3.jsonl")
    assert all(r["config"]["max_vote_rounds"] == 1 for r in records)
    assert all(r["outcome"]["0"]["vote_rounds"] <= 1 for r in records)
    capped = {}
    for r in records:
        hit = r["outcome"]["0"]["end"] == "vote_cap"
        capped[r["setting"]] = capped.get(r["setting"], 0) + hit
    assert sum(capped.values()) > 0  # one vote round rarely leaves three players
    notes = {r["setting"]: r["note"] for r in csv.DictReader((out / "table3.csv").open())}
    for setting, count in capped.items():
        assert (f"{count} of 3 ended at the vote cap" in notes[setting]) == (count > 0)
