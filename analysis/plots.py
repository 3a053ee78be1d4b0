"""Figures people publish: curves and bars that stay readable in black and white.

Figures are built on ``matplotlib.figure.Figure`` with the Agg canvas rather than through pyplot,
so they render the same in a web worker, a test and a notebook and never touch a display.

House style, by default: the y axis starts at 0 (or a stated range), never zoomed to the spread of
the data, so noise does not look like learning; the legend sits outside the axes, below the
panels, so it covers neither data nor labels; every line differs from its neighbours by line style
and marker, not only by colour; intervals are grey bands (lines) or error bars (bars). Each figure
is saved as PNG, SVG and PDF with the data drawn in it as a CSV beside it (:func:`save_figure`).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import LineCollection
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from analysis.safe_csv import safe_frame

# The cycle starts away from the emphasis look (solid black with circles).
LINE_STYLES = ("--", "-.", (0, (1, 1)), "-")
MARKERS = ("s", "^", "D", "v", "x", "P", "*", "o")
GREYS = ("#000000", "#555555", "#888888")
HATCHES = ("", "//", "..", "xx", "\\\\", "++")
FORMATS = ("png", "svg", "pdf")


@dataclass
class Line:
    """One labelled series. ``kind`` is ``normal`` (next style in the cycle), ``emphasis`` (a
    thick black line: the participants' mean, or the best model), ``thin`` (a light grey line
    without legend entry of its own: one participant) or ``reference`` (a black dotted line across
    the axes). ``low``/``high`` draw a 95% band when given."""

    label: str
    t: Sequence[float]
    values: Sequence[float]
    kind: str = "normal"
    low: Sequence[float] | None = None
    high: Sequence[float] | None = None


@dataclass
class Panel:
    title: str
    lines: list[Line] = field(default_factory=list)


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
    ylim: tuple[float, float] | None = None,
) -> Figure:
    """One axes per panel (titled by its key), sharing the y axis; one legend for the figure,
    below the panels. The y axis runs from 0 (or ``ylim``) and the x axis from round 1."""
    count = max(len(panels), 1)
    ncols = min(columns, count)
    nrows = -(-count // ncols)
    fig = Figure(figsize=(4.6 * ncols, 3.4 * nrows + 1.0), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(nrows, ncols, squeeze=False, sharey=True).ravel()
    top = 0.0
    handles: dict[str, object] = {}
    for ax, (title, lines) in zip(axes, panels.items(), strict=False):
        style = styles()
        rounds = [t for line in lines if line.kind != "reference" for t in line.t]
        last = max(rounds) if rounds else 1
        thin = [line for line in lines if line.kind == "thin"]
        if thin:  # one artist for every participant: fast to draw even for thousands
            collection = LineCollection(
                [list(zip(line.t, line.values, strict=True)) for line in thin],
                **_look(thin[0], style),
            )
            ax.add_collection(collection)
            handles.setdefault(thin[0].label, collection)
            top = max(top, *[v for line in thin for v in line.values if pd.notna(v)] or [0.0])
        for line in lines:
            if line.kind == "thin":
                continue
            look = _look(line, style)
            if line.kind == "reference":  # a constant: across the whole axes, even for one round
                artist = ax.axhline(line.values[0], label=line.label, **look)
            else:
                (artist,) = ax.plot(line.t, line.values, label=line.label, **look)
                if line.low is not None and line.high is not None:
                    ax.fill_between(
                        line.t, line.low, line.high, color=look.get("color", "black"),
                        alpha=0.15, linewidth=0,
                    )  # fmt: skip
                    top = max(top, *[v for v in line.high if pd.notna(v)] or [0.0])
            top = max(top, *[v for v in line.values if pd.notna(v)] or [0.0])
            handles.setdefault(line.label, artist)
        ax.set_title(title)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # rounds are whole numbers
        ax.set_xlim(0.5, last + 0.5)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.grid(True, color="#dddddd", linewidth=0.5)
    axes[0].set_ylim(*(ylim or (0.0, max(top * 1.08, 0.05))))
    for ax in axes[len(panels) :]:
        ax.set_visible(False)
    if handles:
        fig.legend(
            list(handles.values()), list(handles), loc="outside lower center",
            ncols=1 if ncols == 1 else min(3, len(handles)), fontsize="small", frameon=False,
        )  # fmt: skip
    return fig


def _look(line: Line, style: Iterator[dict]) -> dict:
    every = max(1, len(line.t) // 10)
    if line.kind == "reference":
        return {"color": "black", "linestyle": ":", "linewidth": 1.5}
    if line.kind == "thin":
        return {"color": "#aaaaaa", "linewidth": 0.8, "linestyle": "-", "label": line.label}
    if line.kind == "emphasis":
        return {"color": "black", "linewidth": 2.5, "marker": "o", "markevery": every}
    return next(style) | {"linewidth": 1.2, "markersize": 4, "markevery": every}


def bars_figure(
    groups: dict[str, list[tuple[str, float, float, float]]],
    ylabel: str = "Win rate",
    title: str = "",
) -> Figure:
    """Grouped bars with 95% error bars: ``{group (x tick): [(series, value, low, high), ...]}``.
    Series differ by hatch and grey; the y axis runs from 0 to 1."""
    series = list(dict.fromkeys(name for bars in groups.values() for name, *_ in bars))
    fig = Figure(figsize=(max(4.6, 1.2 * len(groups) * max(len(series), 1)), 4.2))
    fig.set_layout_engine("constrained")
    FigureCanvasAgg(fig)
    ax = fig.subplots()
    width = 0.8 / max(len(series), 1)
    for i, name in enumerate(series):
        xs, ys, errs = [], [], [[], []]
        for x, bars in enumerate(groups.values()):
            for label, value, low, high in bars:
                if label == name:
                    xs.append(x + (i - (len(series) - 1) / 2) * width)
                    ys.append(value)
                    errs[0].append(max(value - low, 0.0))
                    errs[1].append(max(high - value, 0.0))
        ax.bar(
            xs, ys, width, label=name, color=GREYS[i % len(GREYS)] if i else "white",
            edgecolor="black", hatch=HATCHES[i % len(HATCHES)], yerr=errs, capsize=3,
        )  # fmt: skip
    ax.set_xticks(range(len(groups)), list(groups))
    ax.set_ylim(0, 1)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    ax.grid(True, axis="y", color="#dddddd", linewidth=0.5)
    fig.legend(loc="outside lower center", ncols=min(3, len(series)), frameon=False)
    return fig


def save_figure(fig: Figure, stem: str | Path, data: pd.DataFrame | None = None) -> list[Path]:
    """Write ``stem.png``, ``stem.svg`` and ``stem.pdf``, and ``stem.csv`` with the data drawn
    (formula-safe) when given; return the paths."""
    stem = Path(stem)
    stem.parent.mkdir(parents=True, exist_ok=True)
    paths = []
    for ext in FORMATS:
        path = stem.with_name(f"{stem.name}.{ext}")
        fig.savefig(path, dpi=200)
        paths.append(path)
    if data is not None:
        path = stem.with_name(f"{stem.name}.csv")
        safe_frame(data).to_csv(path, index=False)
        paths.append(path)
    return paths
