"""The experiment runner: record shape, faults, resume, cache reruns and every setting's flow."""

import hashlib
import json
from importlib import metadata
from pathlib import Path

import pytest

from games.cases import case_seed
from games.experiment.records import load_records
from games.experiment.runner import run_experiment
from games.experiment.spec import ExperimentSpec
from games.experiment.summary import summarize
from games.llm.cache import ResponseCache
from games.llm.providers import ProviderConfig
from tests.fakes.game_responder import GameResponder

RECORD_KEYS = {
    "provenance",
    "experience_games",
    "experiment",
    "game",
    "model",
    "setting",
    "sample",
    "round",
    "case",
    "seed",
    "config",
    "events",
    "outcome",
    "evaluated_seat",
    "reward",
    "win",
    "questions",
    "usage",
    "voids",
    "oracle_failed",
    "failures",
    "model_options",
    "memory_word_cap",
    "policy",
    "prompts",
    "started_at",
    "finished_at",
    "language",
    "players",
    "seat_specs",
    "model_seats",
}
USAGE_KEYS = {
    "calls",
    "input_tokens",
    "output_tokens",
    "input_chars",
    "output_chars",
    "retries",
    "latency_s",
}


def lines(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def via(server, anthropic=False, **options):
    url = server.anthropic_base_url if anthropic else server.openai_base_url
    config = ProviderConfig(api_key="test", base_url=url, **options)
    return lambda spec: config


def llm_spec(setting="none", anthropic=False, **options):
    model = "anthropic:fake-claude" if anthropic else "openai-compatible:fake-model"
    return ExperimentSpec(
        game=options.pop("game", "twenty-questions"), model=model, setting=setting, **options
    )


async def test_an_offline_run_writes_one_record_of_the_documented_shape_per_game(tmp_path):
    out = tmp_path / "results.jsonl"
    spec = ExperimentSpec(
        game="twenty-questions", model="offline:infogain", cases=3, samples=2, seed=7
    )
    await run_experiment([spec], out, progress=False)
    records = lines(out)
    assert len(records) == 6
    assert all(set(r) == RECORD_KEYS and set(r["usage"]) == USAGE_KEYS for r in records)
    assert {(r["sample"], r["round"]) for r in records} == {
        (s, r) for s in range(2) for r in range(3)
    }
    first = records[0]
    assert first["seed"] == case_seed(7, first["case"]) and first["evaluated_seat"] == 0
    assert first["win"] is None and first["questions"] == first["outcome"]["0"]["questions"]
    assert first["reward"] == first["outcome"]["0"]["reward"] and first["policy"] is None


async def test_the_same_case_has_the_same_config_in_every_sample_and_setting(tmp_path):
    out = tmp_path / "results.jsonl"
    specs = [
        ExperimentSpec(game="undercover", model="offline:kb", setting=s, cases=2, samples=2)
        for s in ("none", "human-policy")
    ]
    records = await run_experiment(specs, out, progress=False)
    configs = {}
    for r in records:
        configs.setdefault(r["case"], []).append(json.dumps(r["config"], sort_keys=True))
    assert all(len(set(c)) == 1 and len(c) == 4 for c in configs.values())
    assert all(r["win"] in (True, False) and r["reward"] == float(r["win"]) for r in records)


async def test_a_resumed_run_does_not_replay_finished_games(tmp_path):
    out = tmp_path / "results.jsonl"
    spec = ExperimentSpec(game="twenty-questions", model="offline:infogain", cases=4, samples=1)
    await run_experiment([spec], out, progress=False)
    kept = out.read_text().splitlines()[:2]
    out.write_text("\n".join(kept) + "\n" + kept[0][:40])  # two games lost, one line cut off
    records = await run_experiment([spec], out, progress=False)
    after = out.read_text().splitlines()
    assert after[:2] == kept and len(after) == 4 and len(records) == 4
    assert sorted(r["round"] for r in lines(out)) == [0, 1, 2, 3]


def test_loading_records_drops_a_cut_off_last_line(tmp_path):
    out = tmp_path / "results.jsonl"
    out.write_text('{"a": 1}\n{"b": ')
    assert load_records(out) == [{"a": 1}]
    assert out.read_text() == '{"a": 1}\n'


@pytest.mark.parametrize("anthropic", [False, True], ids=["openai", "anthropic"])
async def test_faults_lose_no_game_and_every_retry_is_counted(llm_server, tmp_path, anthropic):
    llm_server.responder = GameResponder()
    llm_server.rate_limit_share = 0.08
    llm_server.server_error_share = 0.05
    llm_server.timeout_share = 0.01
    llm_server.no_tag_share = 0.1
    llm_server.hang_s = 0.6
    out = tmp_path / "results.jsonl"
    spec = llm_spec(anthropic=anthropic, cases=3, samples=1)
    await run_experiment(
        [spec],
        out,
        config_for=via(llm_server, anthropic, timeout=0.3, max_retries=8),
        progress=False,
    )
    records = lines(out)
    faults = llm_server.faults()
    assert len(records) == 3
    assert faults["429"] and faults["500"] and faults["no-tag"]
    assert (
        sum(r["usage"]["retries"] for r in records)
        == faults["429"] + faults["500"] + faults["timeout"]
    )
    answered = len(llm_server.requests) - faults["429"] - faults["500"] - faults["timeout"]
    assert sum(r["usage"]["calls"] for r in records) == answered
    assert all(r["usage"]["input_tokens"] > 0 for r in records)


async def test_a_rerun_with_the_cache_is_free_and_identical(llm_server, tmp_path):
    llm_server.responder = GameResponder()
    cache = ResponseCache(tmp_path / "cache.sqlite")
    spec = llm_spec(game="undercover", setting="rule-policy", cases=2, samples=1)
    first = await run_experiment(
        [spec], tmp_path / "a.jsonl", config_for=via(llm_server), cache=cache, progress=False
    )
    served = len(llm_server.requests)
    second = await run_experiment(
        [spec], tmp_path / "b.jsonl", config_for=via(llm_server), cache=cache, progress=False
    )
    assert len(llm_server.requests) == served
    assert [(r["events"], r["policy"], r["reward"]) for r in first] == [
        (r["events"], r["policy"], r["reward"]) for r in second
    ]


async def test_the_cumulative_memory_is_rewritten_after_every_game(llm_server, tmp_path):
    responder = GameResponder()
    llm_server.responder = responder
    out = tmp_path / "results.jsonl"
    spec = llm_spec(setting="cumulative", rounds=3, samples=1)
    await run_experiment([spec], out, config_for=via(llm_server), progress=False)
    assert [r["policy"] for r in sorted(lines(out), key=lambda r: r["round"])] == [
        None,
        "Memory v1",
        "Memory v2",
    ]
    assert responder.kinds["curator"] == 2


async def test_a_resumed_cumulative_run_rebuilds_the_memory_from_the_last_record(
    llm_server, tmp_path
):
    llm_server.responder = GameResponder()
    out = tmp_path / "results.jsonl"
    spec = llm_spec(setting="cumulative", rounds=2, samples=1)
    await run_experiment([spec], out, config_for=via(llm_server), progress=False)
    longer = llm_spec(setting="cumulative", rounds=4, samples=1)
    await run_experiment([longer], out, config_for=via(llm_server), progress=False)
    records = sorted(lines(out), key=lambda r: r["round"])
    assert [r["policy"] for r in records] == [None, "Memory v1", "Memory v2", "Memory v3"]


async def test_the_cumulative_memory_stays_when_the_curator_forgets_the_tag(llm_server, tmp_path):
    responder = GameResponder()
    llm_server.responder = lambda body: (
        "nothing to add" if responder.kind(body) == "curator" else responder(body)
    )
    out = tmp_path / "results.jsonl"
    await run_experiment(
        [llm_spec(setting="cumulative", rounds=3, samples=1)],
        out,
        config_for=via(llm_server),
        progress=False,
    )
    assert [r["policy"] for r in lines(out)] == [None, None, None]


async def test_the_experience_policy_is_written_from_n_earlier_games_with_reflections(
    llm_server, tmp_path
):
    responder = GameResponder()
    llm_server.responder = responder
    out = tmp_path / "results.jsonl"
    spec = llm_spec(setting="experience-policy", cases=2, samples=1, experience_games=2)
    records = await run_experiment([spec], out, config_for=via(llm_server), progress=False)
    assert responder.kinds["reflection"] == 2 and responder.kinds["experience-policy"] == 1
    assert {r["policy"] for r in records} == {
        "Policy from experience-policy: ask broad questions first."
    }
    assert len(records) == 2  # the earlier games are not test games
    prompt = [r for r in llm_server.requests if "From the rules and these games" in str(r.body)][0]
    assert "Earlier game 2" in str(prompt.body) and "Earlier game 3" not in str(prompt.body)


async def test_full_experience_puts_the_raw_earlier_games_in_the_policy_field(llm_server, tmp_path):
    llm_server.responder = GameResponder()
    spec = llm_spec(setting="full-experience", cases=1, samples=1, experience_games=2)
    records = await run_experiment(
        [spec], tmp_path / "r.jsonl", config_for=via(llm_server), progress=False
    )
    policy = records[0]["policy"]
    assert "Earlier game 1" in policy and "Earlier game 2" in policy and "I should split" in policy


async def test_only_the_evaluated_seat_is_shown_the_policy(llm_server, tmp_path):
    llm_server.responder = GameResponder()
    spec = llm_spec(game="undercover", setting="human-policy", cases=1, samples=1)
    records = await run_experiment(
        [spec], tmp_path / "r.jsonl", config_for=via(llm_server), progress=False
    )
    seat = records[0]["evaluated_seat"]
    for request in llm_server.requests:
        text = str(request.body)
        if "You are player" in text:
            shown = "Strategy to follow" in text
            assert shown == (f"You are player {seat}." in text.split("Players still")[0])


def test_the_summary_reports_improvement_against_none():
    def record(setting, reward, round_):
        return {"game": "g", "model": "openai:m", "setting": setting, "reward": reward,
                "win": None, "round": round_, "sample": 0}  # fmt: skip

    records = [record("none", 0.2, 0), record("none", 0.4, 1), record("human-policy", 0.33, 0)]
    rows = {row["setting"]: row for row in summarize(records)}
    assert rows["none"]["score"] == pytest.approx(0.3) and rows["none"]["improve_pct"] is None
    assert rows["human-policy"]["improve_pct"] == pytest.approx(10.0)
    assert rows["none"]["n"] == 2 and rows["none"]["ci_low"] < 0.3 < rows["none"]["ci_high"]


def test_the_summary_leaves_out_oracle_failed_games_as_the_analysis_does():
    from analysis.frames import games_frame
    from analysis.summary import summarize as analyse

    def record(reward, failed, round_):
        return {"game": "twenty-questions", "model": "openai:m", "setting": "none",
                "reward": reward, "win": None, "round": round_, "sample": 0,
                "oracle_failed": failed}  # fmt: skip

    records = [record(0.5, False, 0), record(0.0, True, 1), record(0.3, False, 2)]
    [row] = summarize(records)
    assert row["n"] == 2 and row["score"] == pytest.approx(0.4)
    table = analyse(games_frame(records)).table
    assert table.loc[("twenty-questions", "none", "mean"), "openai:m"] == pytest.approx(0.4)


async def test_a_cached_rerun_is_identical_even_when_games_see_the_same_prompt(
    llm_server, tmp_path
):
    count = iter(range(10**6))
    responder = GameResponder()

    def varied(body):  # like a model at temperature 1: the same prompt gets different replies
        if responder.kind(body) == "questioner":
            return f"<answer>Is it heavy (draw {next(count)})?</answer>"
        return responder(body)

    llm_server.responder = varied
    cache = ResponseCache(tmp_path / "cache.sqlite")
    spec = llm_spec(cases=3, samples=2)
    runs = [
        await run_experiment(
            [spec],
            tmp_path / f"{name}.jsonl",
            config_for=via(llm_server),
            cache=cache,
            progress=False,
        )
        for name in ("first", "rerun")
    ]
    assert [r["events"] for r in runs[0]] == [r["events"] for r in runs[1]]
    openers = {r["events"][0]["text"] for r in runs[0]}
    assert len(openers) == 6  # every game and sample drew its own first question


async def test_every_record_names_the_lock_the_prompt_set_and_each_models_server(
    llm_server, tmp_path
):
    llm_server.responder = GameResponder()
    out = tmp_path / "results.jsonl"
    config = ProviderConfig(api_key="test", base_url=llm_server.openai_base_url)
    spec = llm_spec(cases=1, samples=1, oracle="offline:kb")
    prompts = {"set": "tq-v2", "sha256": "ab" * 32}
    await run_experiment([spec], out, config_for=lambda s: config, progress=False, prompts=prompts)
    block = lines(out)[0]["provenance"]
    lock = Path(__file__).resolve().parents[3] / "requirements" / "lock.txt"
    assert block["lock"]["requirements/lock.txt"] == hashlib.sha256(lock.read_bytes()).hexdigest()
    assert block["prompts"] == prompts
    assert block["packages"]["openai"] == metadata.version("openai")
    assert block["models"] == [
        {"spec": "offline:kb", "server": None},
        {"spec": "openai-compatible:fake-model", "server": llm_server.openai_base_url},
    ]

    # Without prompts given, the shipped prompt set's hashes.
    other = tmp_path / "offline.jsonl"
    await run_experiment(
        [ExperimentSpec(game="undercover", model="offline:kb", cases=1, samples=1)],
        other,
        progress=False,
    )
    shipped = lines(other)[0]["provenance"]["prompts"]
    assert len(shipped["sha256"]) == 64 and "undercover_player.txt" in shipped["files"]
