"""Several processes through accelerate, as on a machine with several GPUs: run here as two CPU
processes (gloo), which take the same code paths (split steps, gathered votes and evaluation, one
writer)."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("trl")

pytestmark = [pytest.mark.ttra, pytest.mark.slow]


def test_two_processes_share_the_steps_and_the_evaluation(tiny_model, tmp_path):
    accelerate = Path(sys.executable).with_name("accelerate")
    if not accelerate.exists():
        accelerate = shutil.which("accelerate")
    if not accelerate:
        pytest.skip("the accelerate command is not installed")
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(
        "".join(
            json.dumps({"id": f"q{i}", "question": f"What is {i} + 1?", "answer": str(i + 1)})
            + "\n"
            for i in range(7)
        )
    )
    out = tmp_path / "out"
    command = [str(accelerate), "launch", "--cpu", "--num_processes", "2", "--num_machines", "1",
               "--mixed_precision", "no", "--dynamo_backend", "no", "-m",
               "studyapp.pipelines.ttra", "--model", tiny_model, "--tasks", str(tasks), "--out",
               str(out), "--one-shot-id", "q0", "--num-generations", "2",
               "--max-completion-length", "4", "--eval-max-completion-length", "4",
               "--one-shot-steps", "1", "--ttrl-steps", "1", "--ttrl-prompts-per-step", "2",
               "--eval-samples", "2", "--no-gradient-checkpointing", "--use-vllm", "off",
               "--quiet"]  # fmt: skip
    env = os.environ | {"HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads((out / "results.json").read_text())
    for when in ("direct", "aligned"):
        # Each process sampled every other question; the gathered answers are in task order.
        assert [q["id"] for q in results[when]["per_question"]] == [f"q{i}" for i in range(1, 7)]
        assert all(len(q["answers"]) == 2 for q in results[when]["per_question"])
    assert [s["steps"] for s in results["stages"]] == [1, 1]
    assert done.stdout.count('"experiment"') == 1  # one summary, from the main process
    assert (out / "model" / "config.json").exists()
