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
    return {
        "direct_wall_s": direct_wall,
        "direct_gpu_s": direct_gpu,
        "ttra_wall_s": ttra_wall,
        "ttra_gpu_s": ttra_gpu,
        "training_wall_s": total(TRAINING, "wall_s"),
        "training_gpu_s": total(TRAINING, "gpu_s"),
        "relative": cost / base if base > 0 else None,
        "measure": "gpu_s" if use_gpu else "wall_s",
    }
