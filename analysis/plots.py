"""Line charts of cumulative reward that stay readable when printed in black and white.

Figures are built on ``matplotlib.figure.Figure`` with the Agg canvas rather than through pyplot,
so they render the same in a web worker, a test and a notebook and never touch a display. Every
line differs from its neighbours by line style and marker, not only by colour.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

LINE_STYLES = ("-", "--", "-.", (0, (1, 1)))
MARKERS = ("o", "s", "^", "D", "v", "x", "P", "*")
GREYS = ("#000000", "#555555", "#888888")


@dataclass
class Line:
    """One labelled series. ``kind`` is ``normal`` (next style in the cycle), ``emphasis`` (the
    thick black line of the best model) or ``reference`` (a black dotted line, no markers)."""

    label: str
    t: Sequence[float]
    values: Sequence[float]
    kind: str = "normal"


def styles() -> Iterator[dict]:
    """Distinct (line style, marker, grey) combinations, in an order where neighbours differ in
    all three."""
    for i in itertools.count():
        yield {
            "linestyle": LINE_STYLES[i % len(LINE_STYLES)],
            "marker": MARKERS[i % len(MARKERS)],
            "color": GREYS[i % len(GREYS)],
        }


def curves_figure(
    panels: dict[str, list[Line]],
    xlabel: str = "Round t",
    ylabel: str = "Cumulative average reward R(t)",
    columns: int = 3,
) -> Figure:
    """One axes per panel (titled by its key), sharing the y axis, each with its own legend."""
    count = max(len(panels), 1)
    ncols = min(columns, count)
    nrows = -(-count // ncols)
    fig = Figure(figsize=(4.2 * ncols, 3.4 * nrows), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(nrows, ncols, squeeze=False, sharey=True).ravel()
    for ax, (title, lines) in zip(axes, panels.items(), strict=False):
        style = styles()
        for line in lines:
            if line.kind == "reference":  # a constant: across the whole axes, even for one round
                ax.axhline(line.values[0], label=line.label, **_look(line, style))
            else:
                ax.plot(line.t, line.values, label=line.label, **_look(line, style))
        ax.set_title(title)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # rounds are whole numbers
        rounds = {t for line in lines if line.kind != "reference" for t in line.t}
        if len(rounds) == 1:  # a single round: keep the axis about it, not a sliver around it
            only = next(iter(rounds))
            ax.set_xlim(only - 1, only + 1)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.grid(True, color="#dddddd", linewidth=0.5)
        ax.legend(fontsize="small")
    for ax in axes[len(panels) :]:
        ax.set_visible(False)
    return fig


def _look(line: Line, style: Iterator[dict]) -> dict:
    every = max(1, len(line.t) // 10)
    if line.kind == "reference":
        return {"color": "black", "linestyle": ":", "linewidth": 1.5}
    if line.kind == "emphasis":
        return {"color": "black", "linewidth": 2.5, "marker": "o", "markevery": every}
    return next(style) | {"linewidth": 1.2, "markersize": 4, "markevery": every}


def save_figure(fig: Figure, stem: str | Path) -> list[Path]:
    """Write ``stem.png`` and ``stem.svg``; return both paths."""
    paths = [Path(stem).with_suffix(".png"), Path(stem).with_suffix(".svg")]
    for path in paths:
        path.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(path, dpi=150)
    return paths
