"""A Who is Undercover game ended by failed model calls is voided, as a Twenty Questions game whose
oracle failed is: marked in its record, counted apart, never scored as the evaluated model's loss,
and named in the notes of every table `reproduce` writes."""

import csv

from analysis.__main__ import main
from games.experiment.runner import run_experiment
from games.experiment.spec import ExperimentSpec
from games.experiment.summary import is_scored, summarize, voided_note
from games.llm.providers import ProviderConfig, close_clients
from tests.fakes.game_responder import GameResponder

MODEL = "openai-compatible:fake"


async def test_an_undercover_game_whose_model_died_is_voided_not_lost(llm_server, tmp_path):
    llm_server.server_error_share = 1.0  # every call fails after the SDK's retries
    config = ProviderConfig(api_key="test", base_url=llm_server.openai_base_url, max_retries=0)
    spec = ExperimentSpec(game="undercover", model=MODEL, cases=2, samples=1)
    try:
        records = await run_experiment(
            [spec], tmp_path / "out.jsonl", config_for=lambda s: config, progress=False
        )
    finally:
        await close_clients()
    assert len(records) == 2
    for record in records:
        assert record["events"][-1]["type"] == "abort"
        assert record["ended"] == "model_failed" and record["failed_seat"] is not None
        assert record["oracle_failed"] is False and not is_scored(record)
    assert summarize(records) == []  # no 0.0 win rate over two games that never played out
    assert voided_note(records) == (
        "2 of 2 games voided, counted in no n (ended by failed model calls: 2)"
    )


async def test_a_game_played_to_its_end_carries_no_void_mark(tmp_path):
    spec = ExperimentSpec(game="undercover", model="offline:descriptor", cases=1, samples=1)
    [record] = await run_experiment([spec], tmp_path / "out.jsonl", progress=False)
    assert "ended" not in record and "failed_seat" not in record and is_scored(record)


class DeadUndercoverPlayers(GameResponder):
    """Plays Twenty Questions, but every Who is Undercover reply lacks its answer tags."""

    def __call__(self, body):
        if self.kind(body) in ("speaker", "voter"):
            return "I would rather not play."
        return super().__call__(body)


def test_reproduce_names_the_voided_undercover_games_in_the_tables_notes(
    tmp_path, llm_server, monkeypatch
):
    llm_server.responder = DeadUndercoverPlayers()
    monkeypatch.setenv("OPENAI_BASE_URL", llm_server.openai_base_url)
    out = tmp_path / "out"
    argv = ["reproduce", "table2", "--model", MODEL, "--out", str(out), "--cases", "2",
            "--samples", "1", "--experience-games", "1", "--no-progress", "--no-math"]  # fmt: skip
    assert main(argv) == 0
    rows = list(csv.DictReader((out / "table2.csv").open()))
    undercover = [r for r in rows if r["task"] == "undercover"]
    assert undercover and all(r["n"] == "0" and r["score"] == "" for r in undercover)
    assert all("ended by failed model calls" in r["note"] for r in undercover)
    twenty = [r for r in rows if r["task"] == "twenty-questions"]
    assert twenty and all(r["n"] == "2" for r in twenty)
    assert "ended by failed model calls" in (out / "table2.md").read_text()
