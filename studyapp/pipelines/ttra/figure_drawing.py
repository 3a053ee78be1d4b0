"""What every figure of ``paper_figures`` shares: matplotlib without a display, the writer of a
figure's PNG, SVG, PDF and CSV, the mean, and the base and fine-tuned colours."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def pyplot():
    """matplotlib.pyplot on the Agg backend (no display needed); loaded when a figure is drawn."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save(fig: Any, out: Path, name: str, rows: list[dict[str, Any]]) -> list[str]:
    """The figure as PNG, SVG and PDF plus its numbers as CSV; the paths written."""
    import pandas as pd

    from analysis.plots import save_figure

    paths = save_figure(fig, out / name, pd.DataFrame(rows))
    pyplot().close(fig)
    return [str(p) for p in paths]


def mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


BASE_COLOR, TUNED_COLOR = "tab:orange", "tab:blue"
