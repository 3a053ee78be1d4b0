"""TTRA's evaluation against its floor, and the GRPO step time, on a model built from code.

Builds a random Qwen2-style model (default: 16 layers, width 1024, 16 heads, bf16 on a GPU; no
download), then times, on the same prompts:

- the pipeline's evaluation (`sampling.sample`, default options: ``--eval-batch-questions auto``,
  ``--eval-engine auto``): questions x samples completions of up to ``--tokens`` tokens;
- the floor: ONE ``model.generate`` of all the same sequences (every question's samples in one
  call), the fastest transformers can do them;
- GRPO: ``--steps`` optimizer steps of stage 2 (majority-vote TTRL) through the pipeline's own
  trainer, each step's wall time.

It prints one JSON object: tokens/s of both, the evaluation's time over the floor's (the issue's
target on an H100: at most 1.25), and the step times. A short warm-up generate of every sequence
runs first so neither side pays CUDA's start-up, and each side runs ``--repeat`` times, alternating
(the best run of each is compared; every run is listed). ``--small`` is a seconds-long run for a CPU (2 layers, width 64, 4 questions x
4 samples x 16 tokens, 2 steps) that checks the script works; its figures mean nothing.

    .venv/bin/python benchmarks/ttra_gpu.py            # on the GPU machine (benchmarks/ttra_gpu_device.sh)
    .venv/bin/python benchmarks/ttra_gpu.py --small    # anywhere
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

DEFAULTS = {"layers": 16, "width": 1024, "heads": 16, "questions": 16, "samples": 8}
DEFAULTS |= {"tokens": 256, "steps": 3}
SMALL = {"layers": 2, "width": 64, "heads": 2, "questions": 4, "samples": 4, "tokens": 16}
SMALL |= {"steps": 2}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", action="store_true", help="A CPU-sized smoke run.")
    for name, default in DEFAULTS.items():
        parser.add_argument(f"--{name}", type=int, default=None, help=f"(default {default})")
    parser.add_argument(
        "--eval-batch-questions", default="auto", help="The evaluation's option (default auto)."
    )
    parser.add_argument(
        "--eval-engine", default="auto", choices=("auto", "hf", "vllm"), help="(default auto)"
    )
    parser.add_argument(
        "--repeat", type=int, default=2, help="Runs of each, alternating; the best is reported."
    )
    parser.add_argument("--out", help="Also write the JSON to this file.")
    args = parser.parse_args(argv)
    sizes = SMALL if args.small else DEFAULTS
    for name, default in sizes.items():
        if getattr(args, name) is None:
            setattr(args, name, default)
    return args


def synchronize() -> None:
    import torch

    if torch.cuda.is_available():
        torch.cuda.synchronize()


def main(argv: list[str] | None = None) -> dict:
    args = parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

    import torch
    import transformers
    from transformers import TrainerCallback

    from studyapp.pipelines.ttra.config import TTRAOptions
    from studyapp.pipelines.ttra.sampling import (
        completion_lengths,
        eval_batches,
        prompt_text,
        sample,
    )
    from studyapp.pipelines.ttra.tasks import Task
    from studyapp.pipelines.ttra.tiny import build_tiny_model
    from studyapp.pipelines.ttra.train import (
        eval_engine,
        load,
        run_stage,
        silence_library_bars,
        vllm_wanted,
    )

    silence_library_bars()
    on_gpu = torch.cuda.is_available()
    scratch = Path(tempfile.mkdtemp(prefix="ttra-gpu-bench-"))
    path = build_tiny_model(
        scratch / "model",
        hidden_size=args.width,
        layers=args.layers,
        heads=args.heads,
        kv_heads=args.heads,
        max_positions=4096,
        dtype="bfloat16" if on_gpu and torch.cuda.is_bf16_supported() else None,
    )
    tasks = [
        Task(f"q{i}", f"What is {i} + {2 * i + 1}? Show each step.", str(3 * i + 1))
        for i in range(args.questions)
    ]
    options = TTRAOptions(
        model=str(path),
        eval_samples=args.samples,
        eval_max_completion_length=args.tokens,
        eval_batch_questions=args.eval_batch_questions,
        eval_engine=args.eval_engine,
        num_generations=args.samples,
        max_completion_length=args.tokens,
        ttrl_steps=args.steps,
        ttrl_prompts_per_step=max(1, min(4, args.questions)),
        use_vllm="auto"
        if args.eval_engine == "auto"
        else ("on" if args.eval_engine == "vllm" else "off"),
        progress_bars=False,
        save_model=False,
        seed=0,
    )
    model, tokenizer = load(str(path))
    if on_gpu:
        model.to("cuda")
    model.eval()
    texts = [prompt_text(t, options, tokenizer) for t in tasks]
    plain = tokenizer.chat_template is None
    prompt_tokens = [len(i) for i in tokenizer(texts, add_special_tokens=plain)["input_ids"]]
    engine = eval_engine(options)

    def generate_all(batch_texts: list[str], new_tokens: int) -> list[int]:
        enc = tokenizer(batch_texts, return_tensors="pt", padding=True, add_special_tokens=plain)
        enc = enc.to(model.device)
        with torch.no_grad():
            out = model.generate(
                **enc,
                do_sample=True,
                temperature=options.temperature,
                top_p=options.eval_top_p,
                max_new_tokens=new_tokens,
                num_return_sequences=args.samples,
                pad_token_id=tokenizer.pad_token_id,
            )
        return completion_lengths(out[:, enc["input_ids"].shape[1] :], tokenizer)

    generate_all(texts, 8)  # warm-up at full width: CUDA context, kernels, allocator

    def run_eval() -> tuple[float, int]:
        """The pipeline's evaluation, default options."""
        lengths: list[int] = []
        synchronize()
        started = time.perf_counter()
        sample(model, tokenizer, tasks, options, lengths=lengths, source=str(path))
        synchronize()
        return time.perf_counter() - started, sum(lengths)

    def run_floor() -> tuple[float, int]:
        """The floor: one generate call of every sequence."""
        synchronize()
        started = time.perf_counter()
        counts = generate_all(texts, args.tokens)
        synchronize()
        return time.perf_counter() - started, sum(counts)

    evals, floors = [], []
    for _ in range(args.repeat):  # alternate, so drift on the machine hits both alike
        floors.append(run_floor())
        evals.append(run_eval())
    eval_s, eval_tokens = min(evals)
    floor_s, floor_tokens = min(floors)
    batches = [len(b) for b in eval_batches(model, prompt_tokens, options)]

    # GRPO: stage 2 steps through the pipeline's trainer, each step timed.
    class StepClock(TrainerCallback):
        def __init__(self) -> None:
            self.times: list[float] = []
            self.started = 0.0

        def on_step_begin(self, args, state, control, **kwargs):  # noqa: ANN001
            synchronize()
            self.started = time.perf_counter()

        def on_step_end(self, args, state, control, **kwargs):  # noqa: ANN001
            synchronize()
            self.times.append(time.perf_counter() - self.started)

    clock = StepClock()
    model.train()
    _, stage = run_stage(
        model, tokenizer, tasks, "ttrl", options, scratch / "trainer", callbacks=[clock]
    )
    steady = clock.times[1:] or clock.times  # the first step also builds the optimizer state

    report = {
        "device": torch.cuda.get_device_name(0) if on_gpu else "cpu",
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "model": {
            "layers": args.layers,
            "width": args.width,
            "heads": args.heads,
            "dtype": str(model.dtype).removeprefix("torch."),
            "parameters": sum(p.numel() for p in model.parameters()),
        },
        "workload": {
            "questions": args.questions,
            "samples": args.samples,
            "max_new_tokens": args.tokens,
            "prompt_tokens_max": max(prompt_tokens),
        },
        "evaluation": {
            "engine": engine,
            "eval_batch_questions": options.eval_batch_questions,
            "questions_per_generate_call": batches if engine == "hf" else None,
            "seconds": round(eval_s, 3),
            "seconds_each_run": [round(t, 3) for t, _ in evals],
            "tokens": eval_tokens,
            "tokens_per_s": round(eval_tokens / eval_s, 1),
        },
        "floor_one_generate": {
            "seconds": round(floor_s, 3),
            "seconds_each_run": [round(t, 3) for t, _ in floors],
            "tokens": floor_tokens,
            "tokens_per_s": round(floor_tokens / floor_s, 1),
        },
        "evaluation_time_over_floor": round(eval_s / floor_s, 3),
        "evaluation_tokens_per_s_over_floor": round(
            (eval_tokens / eval_s) / (floor_tokens / floor_s), 3
        ),
        "grpo": {
            "steps": stage.steps,
            "questions_per_step": options.ttrl_prompts_per_step,
            "rollouts_per_question": options.num_generations,
            "rollout_engine": "vllm" if vllm_wanted(options) else "hf",
            "step_s": [round(t, 3) for t in clock.times],
            "step_s_median_after_first": round(statistics.median(steady), 3),
        },
    }
    text = json.dumps(report, indent=2)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n", encoding="utf-8")
    return report


if __name__ == "__main__":
    main()
