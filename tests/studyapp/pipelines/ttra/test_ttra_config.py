import argparse
from dataclasses import fields
from pathlib import Path

import pytest

from studyapp.pipelines.ttra.__main__ import build_parser
from studyapp.pipelines.ttra.config import TTRAOptions, add_options, options_from_args


def parse(*argv):
    parser = argparse.ArgumentParser()
    add_options(parser)
    return options_from_args(parser.parse_args(list(argv)))


def test_every_option_has_help_text():
    for f in fields(TTRAOptions):
        assert f.metadata.get("help"), f.name


def test_the_defaults_are_the_papers():
    options = parse("--model", "m")
    assert options.num_generations == 32
    assert options.temperature == 0.6
    assert options.optimizer == "adamw_torch"
    assert options.lr_scheduler == "cosine"
    assert options.warmup_ratio == 0.1
    assert (options.one_shot_learning_rate, options.one_shot_steps) == (5e-7, 100)
    assert (options.ttrl_learning_rate, options.ttrl_steps) == (5e-6, 300)
    assert options.ttrl_prompts_per_step == 4
    assert options.eval_samples == 32


def test_every_option_can_be_overridden():
    options = parse(
        "--model",
        "m",
        "--num-generations",
        "4",
        "--ttrl-learning-rate",
        "1e-6",
        "--no-gradient-checkpointing",
        "--one-shot-id",
        "q7",
        "--system-prompt",
        "",
        "--experiment",
        "ablation",
        "--max-questions",
        "10",
    )
    assert options.num_generations == 4
    assert options.ttrl_learning_rate == 1e-6
    assert options.gradient_checkpointing is False
    assert options.one_shot_id == "q7"
    assert options.system_prompt is None
    assert options.experiment == "ablation"
    assert options.max_questions == 10


def test_unknown_choices_are_refused():
    with pytest.raises(SystemExit):
        parse("--model", "m", "--on-collapse", "ignore")


def test_the_command_needs_a_task_source_and_an_output(capsys):
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--model", "m", "--out", "x"])
    args = build_parser().parse_args(["--model", "m", "--out", "x", "--from-games", "g.jsonl"])
    assert args.from_games == "g.jsonl"


def test_the_kl_term_and_the_tie_rule_follow_ttrl():
    options = parse("--model", "m")
    assert options.beta == 0.001
    assert options.vote_ties == "first"
    assert parse("--model", "m", "--beta", "0", "--vote-ties", "none").vote_ties == "none"


def test_warm_up_is_a_whole_number_of_steps_on_every_transformers():
    pytest.importorskip("trl")
    from studyapp.pipelines.ttra.config import TTRAOptions as Options
    from studyapp.pipelines.ttra.train import grpo_config, warmup_steps

    assert warmup_steps(0.1, 300) == 30
    assert warmup_steps(0.1, 100) == 10
    config = grpo_config(Options(model="m", num_generations=2), "ttrl", Path("/tmp/ttra-w"))
    assert config.warmup_steps == 30
    assert isinstance(config.warmup_steps, int)
    assert config.beta == 0.001
