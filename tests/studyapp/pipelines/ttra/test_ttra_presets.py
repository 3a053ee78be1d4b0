"""The paper's settings by name: every preset cites its section, carries its numbers and prompt,
and an explicit flag wins over it."""

import argparse

import pytest

from studyapp.pipelines.ttra.__main__ import build_parser, main
from studyapp.pipelines.ttra.config import TTRAOptions, add_options, options_from_args, resolve
from studyapp.pipelines.ttra.presets import PRESETS, listing, preset
from studyapp.pipelines.ttra.prompt_files import load_prompts
from studyapp.pipelines.ttra.tasks import Task

NAMES = (
    "a1-gsm8k",
    "a1-mathqa",
    "b",
    "b-olympiad",
    "s3.3",
    "c-qwen3",
    "c-gemma",
    "s6.1-clinical",
    "sft-a2",
    "sft-s6.2",
)


def parse(*argv):
    parser = argparse.ArgumentParser()
    add_options(parser)
    return options_from_args(parser.parse_args(list(argv)))


def test_every_setting_the_paper_names_is_a_preset_citing_its_section():
    assert set(PRESETS) == set(NAMES)
    for p in PRESETS.values():
        assert "§" in p.section or "appendix" in p.section, p.name
        resolve({"model": "m", "sft_data": "x.jsonl"}, p.name)  # real options, right kinds


@pytest.mark.parametrize(
    ("name", "one_shot", "ttrl", "tokens"),
    [
        ("a1-gsm8k", 1e-6, 5e-7, 1024),
        ("a1-mathqa", 1e-6, 5e-8, 1024),
        ("b", 5e-7, 5e-6, 3072),
        ("b-olympiad", 5e-7, 5e-6, 2500),
        ("s3.3", 5e-7, 1e-6, 3072),
        ("c-qwen3", 1e-7, 1e-7, 1024),
        ("c-gemma", 1e-7, 5e-8, 1024),
        ("s6.1-clinical", 5e-6, 5e-8, 1024),
    ],
)
def test_a_preset_carries_its_sections_numbers(name, one_shot, ttrl, tokens):
    options = parse("--model", "m", "--preset", name)
    assert options.preset == name
    assert (options.one_shot_learning_rate, options.one_shot_steps) == (one_shot, 100)
    assert (options.ttrl_learning_rate, options.ttrl_steps) == (ttrl, 300)
    assert options.max_completion_length == tokens


def test_the_clinical_presets_follow_appendix_c():
    qwen, gemma = parse("--model", "m", "--preset", "c-qwen3"), resolve({"model": "m"}, "c-gemma")
    assert qwen.max_prompt_length == 4000 and qwen.one_shot_per_label
    assert qwen.use_chat_template and not gemma.use_chat_template
    assert resolve({"model": "m"}, "s6.1-clinical").experiment == "ablation"
    assert resolve({"model": "m"}, "s3.3").experiment == "split-half"


def test_the_sft_presets_carry_appendix_a2_and_d2():
    a2 = resolve({"model": "m", "sft_data": "x.jsonl"}, "sft-a2")
    assert (a2.sft_learning_rate, a2.sft_epochs, a2.sft_warmup_ratio) == (1e-5, 5.0, 0.05)
    assert (a2.sft_adam_beta2, a2.sft_weight_decay) == (0.95, 1e-4)
    d2 = resolve({"model": "m", "sft_data": "x.jsonl"}, "sft-s6.2")
    assert (d2.sft_learning_rate, d2.sft_warmup_ratio, d2.sft_weight_decay) == (2e-6, 0.01, 0.1)
    assert d2.sft_batch_size == 64 and d2.experiment == "sft"
    assert d2.ttrl_learning_rate == 5e-7  # TTRA as appendix A.1 on GSM8K
    with pytest.raises(ValueError, match="--sft-data"):
        resolve({"model": "m"}, "sft-s6.2")


def test_an_explicit_flag_wins_over_the_preset_in_either_order():
    after = parse("--model", "m", "--preset", "a1-mathqa", "--ttrl-learning-rate", "3e-7")
    before = parse("--model", "m", "--ttrl-learning-rate", "3e-7", "--preset", "a1-mathqa")
    for options in (after, before):
        assert options.ttrl_learning_rate == 3e-7
        assert options.one_shot_learning_rate == 1e-6  # the rest stays the preset's
    # A flag given at its default value is still explicit: it wins too.
    assert parse("--model", "m", "--preset", "c-gemma", "--use-chat-template").use_chat_template
    assert parse("--model", "m").preset is None


def test_preset_list_prints_every_preset_and_exits(capsys):
    with pytest.raises(SystemExit) as done:
        build_parser().parse_args(["--preset", "list"])  # no --tasks or --out needed
    assert done.value.code == 0
    printed = capsys.readouterr().out
    for name in NAMES:
        assert f"{name}: " in printed
    assert printed == listing()
    assert "not stated in the paper" in printed  # the SFT presets' assumptions are named


def test_an_unknown_preset_is_refused_with_the_list(capsys):
    with pytest.raises(SystemExit):
        parse("--model", "m", "--preset", "a1-gsm9k")
    assert "--preset list" in capsys.readouterr().err
    with pytest.raises(ValueError, match="a1-gsm8k"):
        preset("nope")


def test_each_preset_prompts_as_its_section_does():
    task = Task("t", "Natalia sold 48 clips.", "48")
    gsm8k = resolve({"model": "m"}, "a1-gsm8k")
    text = task.prompt(load_prompts(gsm8k.prompts, gsm8k.prompt_set))
    assert text.startswith("Q: Natalia sold 48 clips.\nLet's think step by step")
    assert text.endswith("\\boxed{}.")
    b = resolve({"model": "m"}, "b")
    assert task.prompt(load_prompts(b.prompts, b.prompt_set)).startswith("Natalia sold 48 clips.\n")
    case = Task("p1", "History: pain in the right lower quadrant.", "appendicitis", "word")
    clinical = resolve({"model": "m"}, "c-qwen3")
    framed = case.prompt(load_prompts(clinical.prompts, clinical.prompt_set))
    assert framed.startswith("You are an expert Clinical Decision Support System.")
    assert "History: pain in the right lower quadrant." in framed
    assert framed.rstrip().endswith("\\boxed{}.")
    assert case.prompt() == case.question  # without the set, a word task's question as it is


def test_a_bad_eval_batch_size_is_refused_and_auto_is_the_default():
    assert TTRAOptions(model="m").eval_batch_questions == "auto"
    assert parse("--model", "m", "--eval-batch-questions", "auto").eval_batch_questions == "auto"
    assert parse("--model", "m", "--eval-batch-questions", "16").eval_batch_questions == 16
    for bad in ("0", "many"):
        with pytest.raises(ValueError, match="eval_batch_questions"):
            parse("--model", "m", "--eval-batch-questions", bad)


def test_one_shot_ids_and_one_shot_id_are_exclusive(tmp_path, capsys):
    assert parse("--model", "m", "--one-shot-ids", "a, b,c").one_shot_ids == "a, b,c"
    with pytest.raises(ValueError, match="not both"):
        parse("--model", "m", "--one-shot-ids", "a", "--one-shot-id", "b")
    with pytest.raises(ValueError, match="names no task"):
        parse("--model", "m", "--one-shot-ids", " , ")
    tasks = tmp_path / "t.jsonl"
    tasks.write_text('{"question": "q", "answer": "1"}\n')
    code = main(["--model", "m", "--tasks", str(tasks), "--out", str(tmp_path / "o"),
                 "--experiment", "sft"])  # fmt: skip
    assert code == 2 and "--sft-data" in capsys.readouterr().err


def test_harmonize_gives_each_benchmark_its_own_preset(tmp_path):
    from studyapp.pipelines.ttra.harmonize import benchmark_options, parse_overrides

    files = {"gsm8k": tmp_path / "g.jsonl", "mathqa": tmp_path / "m.jsonl"}
    sets = ["gsm8k.preset=a1-gsm8k", "mathqa.preset=a1-mathqa", "mathqa.ttrl_steps=7"]
    overrides = parse_overrides(sets, files)
    base = TTRAOptions(model="first", num_generations=4)
    gsm8k = benchmark_options(base, "second", overrides["gsm8k"])
    mathqa = benchmark_options(base, "second", overrides["mathqa"])
    assert (gsm8k.preset, gsm8k.ttrl_learning_rate, gsm8k.prompt_set) == (
        "a1-gsm8k",
        5e-7,
        "a1-gsm8k",
    )
    assert (mathqa.preset, mathqa.ttrl_learning_rate, mathqa.ttrl_steps) == ("a1-mathqa", 5e-8, 7)
    assert gsm8k.model == "second" and gsm8k.experiment == "ttra"
    assert gsm8k.num_generations == 32  # the preset's, over a value not given as a flag
    given = benchmark_options(base, "second", overrides["gsm8k"], frozenset({"num_generations"}))
    assert given.num_generations == 4 and given.ttrl_learning_rate == 5e-7  # a flag wins
    with pytest.raises(ValueError, match="no preset"):
        benchmark_options(base, "m", parse_overrides(["gsm8k.preset=zz"], files)["gsm8k"])
