"""GRPO's objective is set explicitly (verl's defaults, which TRL 1.16 shares), each stage has its
own rollout length, and the SFT model's evaluation length is the preset's."""

from dataclasses import replace
from pathlib import Path

import pytest

from studyapp.pipelines.ttra.config import TTRAOptions
from studyapp.pipelines.ttra.evaluate import sft_evaluation
from studyapp.pipelines.ttra.presets import preset

pytest.importorskip("trl")

from studyapp.pipelines.ttra.train import grpo_config  # noqa: E402

pytestmark = pytest.mark.ttra


def options(**values):
    return TTRAOptions(**{"model": "m", **values, "num_generations": 2})


def test_grpo_gets_every_objective_setting_from_the_options_not_trls_defaults():
    config = grpo_config(options(), "ttrl", Path("/tmp/ttra-objective"))
    assert (config.loss_type, config.scale_rewards) == ("dapo", "group")
    assert (config.epsilon, config.top_p, config.beta) == (0.2, 1.0, 0.001)
    chosen = options(loss_type="grpo", scale_rewards="none", clip_range=0.28, rollout_top_p=0.95)
    config = grpo_config(chosen, "ttrl", Path("/tmp/ttra-objective"))
    assert (config.loss_type, config.scale_rewards) == ("grpo", "none")
    assert (config.epsilon, config.top_p) == (0.28, 0.95)


def test_olympiad_bench_sets_each_stage_its_rollout_length():
    values = preset("b-olympiad").values
    olympiad = options(**{k: v for k, v in values.items() if k != "one_shot_from"})
    assert grpo_config(olympiad, "one-shot", Path("/tmp/o")).max_completion_length == 2500
    longer = replace(olympiad, ttrl_max_completion_length=3072)
    assert grpo_config(longer, "one-shot", Path("/tmp/o")).max_completion_length == 2500
    assert grpo_config(longer, "ttrl", Path("/tmp/o")).max_completion_length == 3072


def test_the_sft_model_is_evaluated_at_its_presets_length():
    a2 = preset("sft-a2").values
    assert a2["sft_eval_max_completion_length"] == a2["sft_max_length"] == 32768
    plain = options()
    assert sft_evaluation(plain).eval_max_completion_length == 3072
    long = options(sft_eval_max_completion_length=32768)
    assert sft_evaluation(long).eval_max_completion_length == 32768
    assert long.eval_max_completion_length == 3072  # the direct and TTRA evaluations keep theirs


def test_it_refuses_a_clip_range_or_top_p_out_of_bounds():
    with pytest.raises(ValueError, match="clip_range"):
        options(clip_range=1.5)
    with pytest.raises(ValueError, match="rollout_top_p"):
        options(rollout_top_p=0)
