"""Wall time and GPU-seconds of each stage, the figures of the paper's cost table (§6.2, table 1).

The paper prices direct evaluation, SFT and TTRA by their run time on H100s and reports each
method's time relative to direct evaluation. A stage here is one of: the direct evaluation, the
one-shot stage, the TTRL stage, the evaluation after alignment. GPU-seconds are the wall time times
the GPUs the stage held (one per process), 0 on a CPU, so runs on different numbers of devices
compare. Light module: no torch import unless a GPU question is asked.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass


def gpus_in_use() -> int:
    """GPUs one stage holds: one per process when CUDA is present, else 0."""
    try:
        import torch
    except ImportError:
        return 0
    if not torch.cuda.is_available():
        return 0
    try:
        from accelerate import PartialState

        return PartialState().num_processes
    except ImportError:
        return 1


@dataclass
class StageTime:
    """One stage's cost: seconds of wall time, GPUs held, and their product."""

    stage: str
    wall_s: float = 0.0
    gpus: int = 0

    @property
    def gpu_s(self) -> float:
        return self.wall_s * self.gpus

    def as_dict(self) -> dict[str, object]:
        return asdict(self) | {"gpu_s": self.gpu_s}


@contextmanager
def timed(stage: str, into: list[dict] | None = None) -> Iterator[StageTime]:
    """Time a block; its `StageTime` is appended (as a dict) to ``into`` when the block ends."""
    record = StageTime(stage, gpus=gpus_in_use())
    started = time.perf_counter()
    try:
        yield record
    finally:
        record.wall_s = time.perf_counter() - started
        if into is not None:
            into.append(record.as_dict())


DIRECT = "direct-eval"
ALIGNED = "aligned-eval"
TRAINING = ("one-shot", "ttrl")
SFT = "sft"
SFT_EVAL = "sft-eval"
# Table 1's rows: each method and the stages it pays for.
METHODS = (
    ("Direct evaluation", (DIRECT,)),
    ("Train-before-test (SFT)", (SFT, SFT_EVAL)),
    ("Train-before-test (TTRA)", (*TRAINING, ALIGNED)),
)


def relative_cost(times: list[dict]) -> dict[str, object]:
    """Direct evaluation against TTRA (training stages plus the evaluation after them).

    ``relative`` is TTRA's time over direct evaluation's, by GPU-seconds when the run used GPUs
    and by wall time otherwise (the paper's "relative time").

    >>> relative_cost([{"stage": "direct-eval", "wall_s": 2.0, "gpu_s": 0.0},
    ...                {"stage": "one-shot", "wall_s": 3.0, "gpu_s": 0.0},
    ...                {"stage": "aligned-eval", "wall_s": 2.0, "gpu_s": 0.0}])["relative"]
    2.5
    """

    def total(stages: tuple[str, ...], key: str) -> float:
        return sum(float(t[key]) for t in times if t["stage"] in stages)

    direct_wall, direct_gpu = total((DIRECT,), "wall_s"), total((DIRECT,), "gpu_s")
    ttra_stages = (*TRAINING, ALIGNED)
    ttra_wall, ttra_gpu = total(ttra_stages, "wall_s"), total(ttra_stages, "gpu_s")
    use_gpu = direct_gpu > 0
    base, cost = (direct_gpu, ttra_gpu) if use_gpu else (direct_wall, ttra_wall)
    sft: dict[str, object] = {}
    if any(t["stage"] in (SFT, SFT_EVAL) for t in times):
        sft_wall, sft_gpu = total((SFT, SFT_EVAL), "wall_s"), total((SFT, SFT_EVAL), "gpu_s")
        sft_cost = sft_gpu if use_gpu else sft_wall
        sft = {
            "sft_wall_s": sft_wall,
            "sft_gpu_s": sft_gpu,
            "sft_training_wall_s": total((SFT,), "wall_s"),
            "sft_training_gpu_s": total((SFT,), "gpu_s"),
            "sft_relative": sft_cost / base if base > 0 else None,
        }
    return sft | {
        "direct_wall_s": direct_wall,
        "direct_gpu_s": direct_gpu,
        "ttra_wall_s": ttra_wall,
        "ttra_gpu_s": ttra_gpu,
        "training_wall_s": total(TRAINING, "wall_s"),
        "training_gpu_s": total(TRAINING, "gpu_s"),
        "relative": cost / base if base > 0 else None,
        "measure": "gpu_s" if use_gpu else "wall_s",
    }


def cost_table(times: list[dict]) -> list[dict[str, object]]:
    """Table 1 of the paper (§6.2): one row per method that ran, its wall time, GPU-seconds, the
    part spent training, and its cost relative to direct evaluation (GPU-seconds on GPUs, else
    wall time).

    >>> rows = cost_table([{"stage": "direct-eval", "wall_s": 2.0, "gpu_s": 0.0},
    ...                    {"stage": "sft", "wall_s": 60.0, "gpu_s": 0.0},
    ...                    {"stage": "sft-eval", "wall_s": 4.0, "gpu_s": 0.0}])
    >>> [(r["method"], r["relative"]) for r in rows]
    [('Direct evaluation', 1.0), ('Train-before-test (SFT)', 32.0)]
    """
    present = {t["stage"] for t in times}

    def total(stages: tuple[str, ...], key: str) -> float:
        return sum(float(t[key]) for t in times if t["stage"] in stages)

    direct_gpu = total((DIRECT,), "gpu_s")
    measure = "gpu_s" if direct_gpu > 0 else "wall_s"
    base = total((DIRECT,), measure)
    rows = []
    for method, stages in METHODS:
        if not present & set(stages):
            continue
        training = tuple(s for s in stages if s not in (DIRECT, ALIGNED, SFT_EVAL))
        rows.append(
            {
                "method": method,
                "wall_s": total(stages, "wall_s"),
                "gpu_s": total(stages, "gpu_s"),
                "training_wall_s": total(training, "wall_s"),
                "training_gpu_s": total(training, "gpu_s"),
                "relative": total(stages, measure) / base if base > 0 else None,
                "measure": measure,
            }
        )
    return rows


def cost_table_markdown(results: dict) -> str:
    """``cost_table.md``: table 1's rows for this run, with the evaluation's accuracy beside."""
    scores = {
        "Direct evaluation": results.get("direct"),
        "Train-before-test (SFT)": (results.get("sft") or {}).get("evaluation"),
        "Train-before-test (TTRA)": results.get("aligned"),
    }
    lines = [
        "Evaluation time and relative cost (the TTRA paper's table 1, §6.2)",
        "",
        "| method | wall s | GPU s | training wall s | relative | avg@k |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for row in results["cost_table"]:
        score = scores.get(str(row["method"]))
        accuracy = score.get("avg_at_k") if isinstance(score, dict) else None
        relative = "–" if row["relative"] is None else f"{row['relative']:.2f}×"
        lines.append(
            f"| {row['method']} | {row['wall_s']:.1f} | {row['gpu_s']:.1f} | "
            f"{row['training_wall_s']:.1f} | {relative} | "
            + ("–" if accuracy is None else f"{accuracy:.3f}")
            + " |"
        )
    measure = results["cost_table"][0]["measure"] if results["cost_table"] else "wall_s"
    lines += ["", f"relative: by {measure}, against direct evaluation."]
    return "\n".join(lines) + "\n"
