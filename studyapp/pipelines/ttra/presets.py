"""The paper's settings by name: ``--preset NAME`` fills the options its section gives.

Each preset cites the section and appendix of the TTRA paper (*Test-time RL alignment exposes task
familiarity artifacts in LLM benchmarks*, Wang and Heckel; arXiv:2603.12875) whose numbers it
carries. A preset only sets options; a flag given on the command line wins over it, and
results.json keeps the preset's name beside the options as they were resolved. Where a section is
silent an option keeps the project's default (`config.TTRAOptions`), and ``assumed`` names the
preset's own values that the paper does not state.

``python -m studyapp.pipelines.ttra --preset list`` prints them.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Preset:
    """One named setting: where in the paper it comes from and the options it sets."""

    name: str
    section: str
    summary: str
    values: dict[str, object]
    assumed: tuple[str, ...] = field(default=())

    def describe(self) -> str:
        settings = ", ".join(f"{k}={v}" for k, v in self.values.items())
        extra = f" [not stated in the paper: {', '.join(self.assumed)}]" if self.assumed else ""
        return f"{self.name}: {self.section}. {self.summary}\n    {settings}{extra}"


# Appendix B, the reasoning setup (the options' defaults; repeated so the preset says them).
_B = {
    "one_shot_learning_rate": 5e-7,
    "one_shot_steps": 100,
    "ttrl_learning_rate": 5e-6,
    "ttrl_steps": 300,
    "one_shot_prompts_per_step": 1,
    "ttrl_prompts_per_step": 4,
    "num_generations": 32,
    "temperature": 0.6,
    "max_completion_length": 3072,
    "eval_max_completion_length": 3072,
    "eval_samples": 32,
    "eval_top_p": 0.95,
    # B prints its prompt inside Qwen's chat template with this system message.
    "use_chat_template": True,
    "system_prompt": "You are a helpful assistant.",
    # §4.1: MATH500's one-shot example is a level-1 problem (AIME: --one-shot-from file:AIME 2023).
    "one_shot_from": "where:level=1",
}
# Appendix A.1, the harmonisation setup on GSM8K, GSM-plus-mini and MathQA.
# A.1 prints its two prompts as plain text: no chat template and no system message.
_A1 = _B | {
    "one_shot_learning_rate": 1e-6,
    "max_completion_length": 1024,
    "eval_max_completion_length": 1024,
    "use_chat_template": False,
    "system_prompt": None,
    "one_shot_from": "tasks",  # MathQA and GSM-plus-mini: one example of the test set itself
}
# Appendix C, the clinical benchmark (MIMIC-CDM-FI): one case per pathology in stage 1, prompts up
# to 4,000 tokens, completions up to 1,024, exact match of the boxed pathology (``word`` tasks).
_C = _B | {
    "one_shot_learning_rate": 1e-7,
    "ttrl_learning_rate": 1e-7,
    "max_prompt_length": 4000,
    "max_completion_length": 1024,
    "eval_max_completion_length": 1024,
    "one_shot_per_label": True,
    "one_shot_from": "tasks",
    "prompt_set": "s5-clinical",
}

PRESETS: dict[str, Preset] = {
    p.name: p
    for p in (
        Preset(
            "a1-gsm8k",
            "§3.1, appendix A.1 (GSM8K and GSM-plus-mini)",
            "One-shot at 1e-6 for 100 steps, TTRL at 5e-7 for 300; 1,024 tokens; the 'Q: ' prompt "
            "as plain text (no chat template, no system message); the one-shot example from "
            "GSM8K's training split (a file without a split field, as GSM-plus-mini's, is "
            "drawn from itself).",
            _A1
            | {
                "ttrl_learning_rate": 5e-7,
                "prompt_set": "a1-gsm8k",
                "one_shot_from": "split:train",
            },
        ),
        Preset(
            "a1-mathqa",
            "§3.1, appendix A.1 (MathQA)",
            "One-shot at 1e-6 for 100 steps on the rotated example, TTRL at 5e-8 for 300; 1,024 "
            "tokens; the multiple-choice prompt as A.1 prints it, as plain text; the one-shot "
            "example drawn from the test set.",
            _A1 | {"ttrl_learning_rate": 5e-8, "prompt_set": "a1-mathqa"},
        ),
        Preset(
            "b",
            "§4, appendix B (MATH500, AIME 2024 and 2025)",
            "One-shot at 5e-7 for 100 steps, TTRL at 5e-6 for 300; 3,072 tokens; the system "
            "message and chat template (Llama models: add --no-use-chat-template); the one-shot "
            "example a level-1 MATH500 problem (AIME: --one-shot-from file:AIME2023.jsonl).",
            dict(_B),
        ),
        Preset(
            "b-olympiad",
            "§4, appendix B (OlympiadBench)",
            "As b, with one-shot rollouts of at most 2,500 tokens (evaluation keeps 3,072); "
            "TTRL's rollouts 2,500 too; the one-shot example drawn from the benchmark itself.",
            _B
            | {
                "max_completion_length": 2500,
                "ttrl_max_completion_length": 2500,
                "one_shot_from": "tasks",
            },
            assumed=(
                "one_shot_from (tasks: §4.1 names no rule for OlympiadBench)",
                "ttrl_max_completion_length (2,500: appendix B gives OlympiadBench's length for "
                "the one-shot stage only; --ttrl-max-completion-length 3072 for B's)",
            ),
        ),
        Preset(
            "s3.3",
            "§3.3, appendix A.3 (consistency on held-out questions, MATH500 split in halves)",
            "As b, aligned on one half and evaluated on both; TTRL at 1e-6 for the smaller set.",
            _B | {"experiment": "split-half", "ttrl_learning_rate": 1e-6},
        ),
        Preset(
            "c-qwen3",
            "§5, appendix C (MIMIC-CDM-FI, Qwen3 models)",
            "One case per pathology in stage 1, both stages at 1e-7 (100 and 300 steps); prompts "
            "to 4,000 tokens, completions to 1,024; the clinical prompt in the chat template.",
            dict(_C),
        ),
        Preset(
            "c-gemma",
            "§5, appendix C (MIMIC-CDM-FI, Gemma models)",
            "As c-qwen3 with TTRL at 5e-8 and the prompt without the chat template.",
            _C | {"ttrl_learning_rate": 5e-8, "use_chat_template": False, "system_prompt": None},
        ),
        Preset(
            "s6.1-clinical",
            "§6.1, appendix D.1 (stage ablation on MIMIC-CDM-FI)",
            "As c-qwen3 with one-shot at 5e-6 and TTRL at 5e-8; one-shot only, TTRL only, both.",
            _C
            | {
                "experiment": "ablation",
                "one_shot_learning_rate": 5e-6,
                "ttrl_learning_rate": 5e-8,
            },
        ),
        Preset(
            "sft-a2",
            "§3.2, appendix A.2 (SFT-based train-before-test, after Muennighoff et al.'s s1)",
            "SFT for 5 epochs at 1e-5, 5% warm-up, betas 0.9 and 0.95, weight decay 1e-4, "
            "examples up to s1's 32,768 tokens and evaluated at that length, beside TTRA as in "
            "appendix B.",
            _B
            | {
                "experiment": "sft",
                "sft_learning_rate": 1e-5,
                "sft_epochs": 5.0,
                "sft_warmup_ratio": 0.05,
                "sft_adam_beta2": 0.95,
                "sft_weight_decay": 1e-4,
                "sft_lr_scheduler": "cosine",
                "sft_batch_size": 16,
                "sft_max_length": 32768,
                "sft_eval_max_completion_length": 32768,
            },
            assumed=(
                "sft_eval_max_completion_length (32,768, the length it trains on, so an s1-style "
                "trace reaches its answer; the direct and TTRA evaluations keep 3,072; "
                "--sft-eval-max-completion-length 3072 evaluates all three alike)",
                "sft_lr_scheduler (s1's cosine)",
                "sft_batch_size (s1's 16)",
                "sft_max_length (s1's block size, 32768: no s1K-1.1 trace is cut; a model with "
                "fewer positions, such as Qwen2.5-Math-1.5B's 4,096, trains past them)",
            ),
        ),
        Preset(
            "sft-s6.2",
            "§6.2, appendix D.2 (table 1: cost of direct evaluation, SFT and TTRA; Qwen3-0.6B "
            "on GSM8K)",
            "SFT at 2e-6 with a cosine schedule, 1% warm-up, weight decay 0.1, 64 examples a "
            "step; TTRA as a1-gsm8k (plain text, the one-shot example from GSM8K's training "
            "split).",
            _A1
            | {
                "ttrl_learning_rate": 5e-7,
                "prompt_set": "a1-gsm8k",
                "one_shot_from": "split:train",
                "experiment": "sft",
                "sft_learning_rate": 2e-6,
                "sft_lr_scheduler": "cosine",
                "sft_warmup_ratio": 0.01,
                "sft_weight_decay": 0.1,
                "sft_batch_size": 64,
                "sft_adam_beta2": 0.999,
                "sft_epochs": 1.0,
            },
            assumed=(
                "sft_epochs (1)",
                "sft_adam_beta2 (AdamW's 0.999)",
                "sft_max_length (the project's 4096)",
            ),
        ),
    )
}


def preset(name: str) -> Preset:
    """The preset of that name; an unknown name raises ValueError listing the known ones."""
    try:
        return PRESETS[name]
    except KeyError:
        raise ValueError(
            f"no preset {name!r}; the presets are {', '.join(PRESETS)} (--preset list)"
        ) from None


def listing() -> str:
    """Every preset with its section and values, for ``--preset list``."""
    return "\n".join(p.describe() for p in PRESETS.values()) + "\n"
