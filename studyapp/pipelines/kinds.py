"""The job kinds: what each does, where its runner lives and the parameters its form starts from.

Adding a kind is one runner function ``run(job) -> dict`` (the result) plus one entry here. The
runner is named by its dotted path so heavy dependencies (torch for TTRA) load only when a job
of that kind runs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from django.utils.module_loading import import_string


@dataclass(frozen=True)
class Kind:
    runner: str  # dotted path to ``run(job) -> dict``
    help: str
    defaults: dict[str, Any] = field(default_factory=dict)
    # The parameters that name a model spec (``openai:gpt-4.1``), checked for credentials.
    models: tuple[str, ...] = ("model",)
    # The model judges or writes text, which an ``offline:`` rule-based agent cannot do.
    needs_language_model: bool = True

    def load(self) -> Callable[..., dict[str, Any]]:
        return import_string(self.runner)


LWE_DEFAULTS = {
    "model": "openai:gpt-4.1",
    "dataset": "twenty-questions",
    "orders": 3,
    "seed": 0,
    "cache": True,
    # How each case's two responses are shown: "random" (the LWE paper's §4.3, one seeded random
    # ordering per case, which Accuracy reads) or "file" (the dataset's order).
    "response_order": "random",
    "response_seed": 0,
}

KINDS: dict[str, Kind] = {
    "lwe": Kind(
        "studyapp.pipelines.runners.lwe.run",
        "Learning While Evaluating: the judge refines its meta-prompt every b cases.",
        {
            **LWE_DEFAULTS,
            "batch_size": 4,
            "summary_threshold": 10_000,
            "min_keep_ratio": 0.0,
            # output limits: refinement = current meta-prompt's length + this; the summary's own
            "refine_tokens": 4096,
            "summary_tokens": 4096,
        },
    ),
    "selective-lwe": Kind(
        "studyapp.pipelines.runners.lwe.run",
        "Selective LWE: order-swap check on every case, LWE only on the inconsistent ones.",
        {
            **LWE_DEFAULTS,
            "batch_size": 4,
            "summary_threshold": 10_000,
            "min_keep_ratio": 0.0,  # off, as Algorithm 1; 0.25 the guard of earlier versions
            "refine_tokens": 4096,
            "summary_tokens": 4096,
            "inconsistent_swap": "vanilla",  # as published; "lwe": the project's variant
        },
    ),
    "vanilla": Kind(
        "studyapp.pipelines.runners.lwe.run", "Baseline: one fixed judge prompt.", LWE_DEFAULTS
    ),
    "cot": Kind(
        "studyapp.pipelines.runners.lwe.run", "Baseline: step-by-step judge prompt.", LWE_DEFAULTS
    ),
    "majority": Kind(
        "studyapp.pipelines.runners.lwe.run",
        "Baseline: majority of 5 vanilla verdicts at temperature 0.7.",
        LWE_DEFAULTS,
    ),
    "sample-specific": Kind(
        "studyapp.pipelines.runners.lwe.run",
        "Baseline: a tailored prompt per case from the fixed initial meta-prompt.",
        LWE_DEFAULTS,
    ),
    "dynamic-cheatsheet": Kind(
        "studyapp.pipelines.runners.lwe.run",
        "Baseline: Dynamic Cheatsheet (DC-RS), a cheatsheet rewritten before every case from the "
        "most similar cases judged so far.",
        # dc_orders: LWE's orders DC runs over (the paper: 1, LWE's run0)
        {**LWE_DEFAULTS, "word_cap": 2000, "dc_orders": 1},
    ),
    "policy": Kind(
        "studyapp.pipelines.runners.policy.run",
        "Policy extraction: rule policy, experience policy from chosen games, or cumulative memory.",
        {
            "game": "twenty-questions",
            "model": "openai:gpt-4.1",
            "mode": "experience",
            "name": "tq-experience",
            "tables": [],
            "seat": 0,
        },
        # offline:… writes the policy from the games' statistics (games.experience.offline_policy)
        needs_language_model=False,
    ),
    "experiment": Kind(
        "studyapp.pipelines.runners.experiment.run",
        "The paper's protocol for one model and setting; games are stored as tables.",
        {
            "game": "twenty-questions",
            "model": "offline:infogain",
            "setting": "none",
            "cases": 32,
            "samples": 3,
            "seed": 0,
        },
        models=("model", "oracle"),
        needs_language_model=False,  # offline agents play the games themselves
    ),
    "ttra": Kind(
        "studyapp.pipelines.runners.ttra.run",
        "TTRA: one-shot GRPO then majority-vote TTRL on a local model; results and model as files.",
        {
            "model": "Qwen/Qwen2.5-Math-1.5B",
            "tasks": "",
            "tables": [],
            "results": "",
            "experiment": "ttra",
            "seed": 0,
        },
        models=(),  # a Hugging Face name or folder, loaded locally
        needs_language_model=False,
    ),
}


def get_kind(name: str) -> Kind:
    if name not in KINDS:
        raise ValueError(f"unknown job kind {name!r}; choose one of {', '.join(sorted(KINDS))}")
    return KINDS[name]
