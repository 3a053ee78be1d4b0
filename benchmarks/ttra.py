"""TTRA throughput on whatever device is present: GRPO steps per second and generated tokens per second.

Training runs stage 2 (majority-vote TTRL) through TRL's GRPOTrainer exactly as the pipeline does;
generation samples completions as the evaluation does. With no ``--model`` it builds the tiny random
2-layer model used by the tests, so the figures then measure overhead rather than a real model.

    .venv/bin/python benchmarks/ttra.py [--model PATH] [--steps 5] [--num-generations 8]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", help="Model folder or cached hub id (default: the tiny model).")
    parser.add_argument("--steps", type=int, default=5, help="GRPO steps to time.")
    parser.add_argument("--num-generations", type=int, default=8, help="Rollouts per question.")
    parser.add_argument("--prompts-per-step", type=int, default=2, help="Questions per step.")
    parser.add_argument("--max-completion-length", type=int, default=64, help="Tokens per rollout.")
    parser.add_argument(
        "--questions", type=int, default=8, help="Questions for the generation run."
    )
    parser.add_argument("--samples", type=int, default=8, help="Completions per question (k).")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")

    import torch

    from studyapp.pipelines.ttra.config import TTRAOptions
    from studyapp.pipelines.ttra.sampling import sample
    from studyapp.pipelines.ttra.tasks import Task
    from studyapp.pipelines.ttra.tiny import build_tiny_model
    from studyapp.pipelines.ttra.train import load, run_stage

    scratch = Path(tempfile.mkdtemp(prefix="ttra-bench-"))
    model_path = args.model or str(build_tiny_model(scratch / "tiny"))
    tasks = [
        Task(f"q{i}", f"What is {i} + {i + 1}?", str(2 * i + 1)) for i in range(args.questions)
    ]
    options = TTRAOptions(
        model=model_path,
        num_generations=args.num_generations,
        ttrl_prompts_per_step=args.prompts_per_step,
        ttrl_steps=args.steps,
        max_completion_length=args.max_completion_length,
        eval_max_completion_length=args.max_completion_length,
        eval_samples=args.samples,
        eval_batch_questions=args.questions,
        gradient_checkpointing=False,
        use_vllm="off",
        on_collapse="warn",
    )
    model, tokenizer = load(model_path)
    if torch.cuda.is_available():
        model = model.to("cuda")
    params = sum(p.numel() for p in model.parameters())

    sample(model, tokenizer, tasks[:1], options)  # warm-up: kernels, caches
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    started = time.perf_counter()
    completions = sample(model, tokenizer, tasks, options)
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    gen_seconds = time.perf_counter() - started
    tokens = sum(
        len(tokenizer(c, add_special_tokens=False)["input_ids"]) for q in completions for c in q
    )

    started = time.perf_counter()
    _, result = run_stage(model, tokenizer, tasks, "ttrl", options, scratch / "trainer")
    train_seconds = time.perf_counter() - started

    print(
        json.dumps(
            {
                "device": torch.cuda.get_device_name(0) if torch.cuda.is_available() else "cpu",
                "torch_threads": torch.get_num_threads(),
                "model": args.model or "tiny (2 layers, hidden 32, random)",
                "parameters": params,
                "train_steps": result.steps,
                "train_seconds": round(train_seconds, 3),
                "train_steps_per_s": round(result.steps / train_seconds, 3),
                "completions_per_step": args.prompts_per_step * args.num_generations,
                "generated_tokens": tokens,
                "generation_seconds": round(gen_seconds, 3),
                "generated_tokens_per_s": round(tokens / gen_seconds, 1),
                "max_completion_length": args.max_completion_length,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
