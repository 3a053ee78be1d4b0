"""A game whose oracle failed is marked in its record, never scored as the questioner's doing."""

from games.experiment.runner import run_experiment
from games.experiment.spec import ExperimentSpec
from games.llm.providers import ProviderConfig, close_clients


async def test_a_dead_oracle_marks_every_game_as_oracle_failed(llm_server, tmp_path):
    llm_server.server_error_share = 1.0
    config = ProviderConfig(api_key="test", base_url=llm_server.openai_base_url, max_retries=0)
    spec = ExperimentSpec(
        game="twenty-questions",
        model="offline:infogain",
        oracle="openai-compatible:fake-oracle",
        cases=2,
        samples=1,
    )
    try:
        records = await run_experiment(
            [spec], tmp_path / "out.jsonl", config_for=lambda s: config, progress=False
        )
    finally:
        await close_clients()
    assert len(records) == 2
    for record in records:
        assert record["oracle_failed"] is True and record["voids"] == 3
        assert [f["seat"] for f in record["failures"]] == [1, 1, 1]
        assert all("500" in f["error"] for f in record["failures"])
        assert record["events"][-1]["type"] == "abort"


async def test_a_healthy_game_is_not_marked(tmp_path):
    spec = ExperimentSpec(game="twenty-questions", model="offline:infogain", cases=1, samples=1)
    [record] = await run_experiment([spec], tmp_path / "out.jsonl", progress=False)
    assert record["oracle_failed"] is False and record["voids"] == 0 and record["failures"] == []
