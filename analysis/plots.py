"""Figures people publish: curves and bars sized for a venue's columns, readable in black and white.

Figures are built on ``matplotlib.figure.Figure`` with the Agg canvas rather than through pyplot,
so they render the same in a web worker, a test and a notebook and never touch a display.

House style, by default:

- **Sized for a paper**: one column is 3.25 in wide and two columns 6.75 in (the widths of the
  usual two-column venues), text at 8 pt (7 pt ticks and legend), so a figure is placed at 100%
  and its text stays as large as a caption's.
- **Fonts a venue accepts**: TrueType fonts are embedded in PDF and PostScript (``pdf.fonttype``
  and ``ps.fonttype`` 42, never Type 3); no creation date is written, so the same data gives a
  byte-identical file (:func:`save_figure`).
- **Honest axes**: the y axis starts at 0 (or a stated range), never zoomed to the spread of the
  data; every band drawn counts in the range, and nothing that is not drawn does.
- **A legend made from what is drawn**: each series gets its look once per figure (by its label,
  or its condition), every artist is labelled with its series, and the legend is built from the
  artists on the axes, so a style can only name what it draws. The legend sits below the panels.
- **Told apart without colour**: conditions differ in colour *and* marker and line style; model
  lines in line style, marker and grey; curves that coincide say so in the legend.

Each figure is saved as PNG, SVG and PDF with the data drawn in it as a CSV beside it.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import matplotlib as mpl
import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import LineCollection
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from analysis.safe_frames import safe_frame

ONE_COLUMN = 3.25  # inches: one column of a two-column venue (ACL, NeurIPS two-column, IEEE)
TWO_COLUMNS = 6.75  # inches: the full text width of such a page
PANEL_HEIGHT = 2.1  # inches per row of panels
# rcParams of every figure: TrueType fonts embedded (no Type 3), text at a caption's size.
VENUE_RC = {
    "pdf.fonttype": 42,
    "ps.fonttype": 42,
    "svg.fonttype": "path",
    "svg.hashsalt": "analysis",  # SVG ids from the content, not a random salt
    "font.family": "DejaVu Sans",
    "font.size": 8,
    "axes.titlesize": 8,
    "axes.labelsize": 8,
    "xtick.labelsize": 7,
    "ytick.labelsize": 7,
    "legend.fontsize": 7,
    "axes.linewidth": 0.6,
    "xtick.major.width": 0.6,
    "ytick.major.width": 0.6,
    "lines.linewidth": 1.0,
    "savefig.dpi": 300,
}
# No creation date, so that the same data gives the same bytes.
METADATA = {"pdf": {"CreationDate": None}, "svg": {"Date": None}, "png": {}}

# Model lines: the cycle starts away from the look of a condition's mean (a coloured solid line).
LINE_STYLES = ("--", "-.", (0, (1, 1)), (0, (5, 1, 1, 1, 1, 1)))
MARKERS = ("s", "^", "D", "v", "x", "P", "*", "<")
GREYS = ("#000000", "#555555", "#888888")
# Conditions: the Okabe-Ito colours (safe for colour-blind readers), each with its own marker and
# line style as well, so the conditions stay apart in grey print.
CONDITION_COLOURS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000")
CONDITION_MARKERS = ("o", "s", "^", "D", "v", "P", "X")
CONDITION_STYLES = ("-", "--", "-.", (0, (1, 1)))
HATCHES = ("", "//", "..", "xx", "\\\\", "++")
FILLS = ("white", "#bbbbbb", "#e6e6e6", "#8c8c8c")  # light enough for black error bars
FORMATS = ("png", "svg", "pdf")


@contextmanager
def venue_style() -> Iterator[None]:
    """The figures' rcParams (:data:`VENUE_RC`) for building and saving a figure."""
    with mpl.rc_context(VENUE_RC):
        yield


@dataclass
class Line:
    """One series. ``kind``:

    - ``mean``: a condition's (or all people's) mean, a thick line in the condition's colour;
    - ``thin``: one participant, faint, in the condition's colour; all of a condition's thin lines
      share one legend entry (``legend``);
    - ``normal``: a model and setting, the next grey, line style and marker of the figure;
    - ``reference``: a black dotted line across the axes.

    ``low``/``high`` draw a 95% band when given; ``n`` is the number of people (or samples) behind
    each point: said once in the legend when it is the same at every point, else written at each
    point."""

    label: str
    t: Sequence[float]
    values: Sequence[float]
    kind: str = "normal"
    low: Sequence[float] | None = None
    high: Sequence[float] | None = None
    n: Sequence[int] | None = None
    condition: str = ""
    legend: str | None = None
    say_n: bool = True  # False: n is said elsewhere (a panel's title), not in the legend


@dataclass
class Panel:
    title: str
    lines: list[Line] = field(default_factory=list)


class Looks:
    """Each series' look, given once per figure: by condition for people (mean and thin lines of
    one condition share its colour), by label for models, so one label never has two looks."""

    def __init__(self, conditions: Sequence[str] = ()) -> None:
        self.conditions = list(dict.fromkeys(conditions))
        self.models: dict[str, dict] = {}
        self.cycle = _model_styles()

    def condition_index(self, condition: str) -> int:
        if condition not in self.conditions:
            self.conditions.append(condition)
        return self.conditions.index(condition)

    def of(self, line: Line) -> dict:
        every = max(1, len(line.t) // 10)
        if line.kind == "reference":
            return {"color": "black", "linestyle": ":", "linewidth": 1.2}
        if line.kind in ("mean", "thin"):
            i = self.condition_index(line.condition)
            colour = CONDITION_COLOURS[i % len(CONDITION_COLOURS)]
            if line.kind == "thin":
                return {"color": colour, "linewidth": 0.6, "linestyle": "-", "alpha": 0.3}
            return {
                "color": colour,
                "linewidth": 1.8,
                "linestyle": CONDITION_STYLES[i % len(CONDITION_STYLES)],
                "marker": CONDITION_MARKERS[i % len(CONDITION_MARKERS)],
                "markersize": 4,
                "markevery": every,
            }
        if line.label not in self.models:
            self.models[line.label] = next(self.cycle)
        return self.models[line.label] | {"linewidth": 1.0, "markersize": 3.5, "markevery": every}


def _model_styles() -> Iterator[dict]:
    """Distinct (line style, marker, grey) combinations, neighbours differing in all three."""
    for i in itertools.count():
        yield {
            "linestyle": LINE_STYLES[i % len(LINE_STYLES)],
            "marker": MARKERS[i % len(MARKERS)],
            "color": GREYS[i % len(GREYS)],
        }


def styles() -> Iterator[dict]:
    """The model lines' looks in order (kept for callers that style their own lines)."""
    return _model_styles()


def width_for(columns: int) -> float:
    """A venue's width: one column for a single panel, the text width for two or more."""
    return ONE_COLUMN if columns <= 1 else TWO_COLUMNS


def n_text(n: Sequence[int] | None) -> str:
    """`` (n = k)`` when every point has the same n, `` (n at each point)`` when not."""
    if n is None:
        return ""
    known = {int(k) for k in n if pd.notna(k)}
    if len(known) == 1:
        return f" (n = {known.pop()})"
    return " (n at each point)" if known else ""


def legend_text(line: Line, overlap: str = "", n: Sequence[int] | None = None) -> str:
    """What the legend says of a line: its legend (or label), its n (``n``: every n the series
    has in the figure, when it is drawn in several panels), and the series it lies over."""
    said = line.kind != "thin" and line.say_n
    text = (line.legend or line.label) + (n_text(line.n if n is None else n) if said else "")
    return f"{text} [{overlap}]" if overlap else text


def _figure_n(panels: dict[str, list[Line]]) -> dict[str, list[int]]:
    """Every n of each series over the whole figure: a series drawn in two panels with different
    n is one legend entry (one look) whose n is written at its points."""
    out: dict[str, list[int]] = {}
    for lines in panels.values():
        for line in lines:
            if line.n is not None:
                out.setdefault(line.label, []).extend(int(k) for k in line.n if pd.notna(k))
    return out


OVERLAP = 0.01  # model curves closer than this at every round hide one another


def _coinciding(lines: list[Line]) -> dict[int, str]:
    """Model lines drawn over an earlier one of the panel: index -> what the legend adds, ``same
    curve as X`` when equal, ``within 0.01 of X`` when closer than :data:`OVERLAP` everywhere."""
    out: dict[int, str] = {}
    for i, line in enumerate(lines):
        if line.kind != "normal":
            continue
        for earlier in lines[:i]:
            if earlier.kind != "normal" or list(earlier.t) != list(line.t):
                continue
            if np.allclose(earlier.values, line.values, atol=1e-12, equal_nan=True):
                out[i] = f"same curve as {earlier.label}"
                break
            if np.allclose(earlier.values, line.values, atol=OVERLAP, rtol=0, equal_nan=True):
                out[i] = f"within {OVERLAP} of {earlier.label}"
                break
    return out


def curves_figure(
    panels: dict[str, list[Line]],
    xlabel: str = "Round t",
    ylabel: str = "Cumulative average reward R(t)",
    columns: int = 3,
    ylim: tuple[float, float] | None = None,
    note: str = "",
) -> Figure:
    """One axes per panel (titled by its key), sharing the y axis; one legend for the figure,
    below the panels, built from the artists drawn. The y axis runs from 0 (or ``ylim``) to the
    highest value or band drawn; the x axis from round 1. ``note``: a line above the panels
    (what the figure leaves out, and why)."""
    with venue_style():
        fig = _curves_figure(panels, xlabel, ylabel, columns, ylim)
        if note:
            fig.suptitle(note, fontsize=7, wrap=True)
        return fig


def _curves_figure(panels, xlabel, ylabel, columns, ylim) -> Figure:
    count = max(len(panels), 1)
    ncols = min(columns, count)
    nrows = -(-count // ncols)
    conditions = [ln.condition for lines in panels.values() for ln in lines if ln.kind == "mean"]
    looks = Looks(conditions)
    figure_n = _figure_n(panels)
    entries = sum(1 for lines in panels.values() for ln in lines if ln.kind != "thin") + 2
    legend_rows = entries
    fig = Figure(
        figsize=(width_for(ncols), PANEL_HEIGHT * nrows + 0.16 * legend_rows + 0.2),
        layout="constrained",
    )
    FigureCanvasAgg(fig)
    axes = fig.subplots(nrows, ncols, squeeze=False, sharey=True).ravel()
    top = 0.0
    legend: dict[str, object] = {}
    for ax, (title, lines) in zip(axes, panels.items(), strict=False):
        rounds = [t for line in lines if line.kind != "reference" for t in line.t]
        last = max(rounds) if rounds else 1
        thin: dict[str, list[Line]] = {}
        for line in lines:
            if line.kind == "thin":
                thin.setdefault(line.condition, []).append(line)
        for group in thin.values():  # one artist per condition: fast for thousands
            look = looks.of(group[0])
            collection = LineCollection(
                [list(zip(line.t, line.values, strict=True)) for line in group],
                label=legend_text(group[0]),
                **look,
            )
            ax.add_collection(collection)
            legend.setdefault(collection.get_label(), collection)
            top = max(top, *[v for line in group for v in line.values if pd.notna(v)] or [0.0])
        same = _coinciding(lines)
        for index, line in enumerate(lines):
            if line.kind == "thin":
                continue
            look = looks.of(line)
            every_n = figure_n.get(line.label)
            text = legend_text(line, same.get(index, ""), every_n)
            if line.kind == "reference":  # a constant: across the whole axes, even for one round
                artist = ax.axhline(line.values[0], label=text, **look)
            else:
                (artist,) = ax.plot(line.t, line.values, label=text, **look)
                if line.low is not None and line.high is not None:
                    ax.fill_between(
                        line.t, line.low, line.high, color=look.get("color", "black"),
                        alpha=0.15, linewidth=0, label=f"_band of {text}",
                    )  # fmt: skip
                    top = max(top, *[v for v in line.high if pd.notna(v)] or [0.0])
                if line.say_n and len(set(every_n or ())) > 1:
                    for t, value, k in zip(line.t, line.values, line.n, strict=True):
                        if pd.notna(value) and pd.notna(k):
                            ax.annotate(
                                f"n={int(k)}", (t, value), xytext=(0, 4),
                                textcoords="offset points", ha="center", fontsize=6,
                                color=look.get("color", "black"),
                            )  # fmt: skip
            top = max(top, *[v for v in line.values if pd.notna(v)] or [0.0])
            legend.setdefault(text, artist)
        ax.set_title(title)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # rounds are whole numbers
        ax.set_xlim(0.5, last + 0.5)
        ax.set_xlabel(xlabel)
        ax.grid(True, color="#dddddd", linewidth=0.4)
    for ax in axes[::ncols]:
        ax.set_ylabel(ylabel)
    axes[0].set_ylim(*(ylim or (0.0, max(top * 1.1, 0.05))))
    for ax in axes[len(panels) :]:
        ax.set_visible(False)
    if legend:
        wide = ncols == 1 or max(len(text) for text in legend) > 48
        fig.legend(
            list(legend.values()), list(legend), loc="outside lower center",
            ncols=1 if wide else 2, frameon=False,
        )  # fmt: skip
    return fig


def bars_figure(
    groups: dict[str, list[tuple[str, float, float, float]]] | None = None,
    ylabel: str = "Win rate",
    title: str = "",
    panels: dict[str, dict[str, list[tuple[str, float, float, float]]]] | None = None,
) -> Figure:
    """Grouped bars with 95% error bars: ``{group (x tick): [(series, value, low, high[, n]), ...]}``
    (``n``, the games behind a bar, is written above its interval),
    or several such ``panels`` side by side (titled by their keys). A series keeps its hatch and
    grey in every panel; the legend is built from the bars drawn. The y axis runs from 0 to 1."""
    with venue_style():
        return _bars_figure(panels or {title: groups or {}}, ylabel)


def _bars_figure(panels, ylabel) -> Figure:
    every = [name for groups in panels.values() for bars in groups.values() for name, *_ in bars]
    series = list(dict.fromkeys(every))
    fig = Figure(
        figsize=(width_for(len(panels)), PANEL_HEIGHT + 0.16 * len(series) + 0.3),
        layout="constrained",
    )
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, len(panels), squeeze=False, sharey=True).ravel()
    legend: dict[str, object] = {}
    for ax, (title, groups) in zip(axes, panels.items(), strict=True):
        here = [s for s in series if any(s == b[0] for bars in groups.values() for b in bars)]
        width = 0.8 / max(len(here), 1)
        for i, name in enumerate(here):
            k = series.index(name)
            xs, ys, errs, ns = [], [], [[], []], []
            for x, bars in enumerate(groups.values()):
                for label, value, low, high, *n in bars:
                    if label == name:
                        xs.append(x + (i - (len(here) - 1) / 2) * width)
                        ys.append(value)
                        errs[0].append(max(value - low, 0.0))
                        errs[1].append(max(high - value, 0.0))
                        ns.append((high, n[0] if n else None))
            drawn = ax.bar(
                xs, ys, width, label=name, color=FILLS[k % len(FILLS)], edgecolor="black",
                hatch=HATCHES[k % len(HATCHES)], yerr=errs, capsize=2, linewidth=0.6,
                error_kw={"elinewidth": 0.8},
            )  # fmt: skip
            for x, (high, n) in zip(xs, ns, strict=True):
                if n is not None:  # the games behind the bar, above its interval
                    ax.annotate(
                        f"n={int(n)}", (x, high), xytext=(0, 2), textcoords="offset points",
                        ha="center", fontsize=6,
                    )  # fmt: skip
            legend.setdefault(name, drawn)
        ax.set_xticks(range(len(groups)), list(groups))
        ax.set_ylim(0, 1.08)  # room for the n above an interval that reaches 1
        ax.set_yticks([0, 0.2, 0.4, 0.6, 0.8, 1.0])
        if title:
            ax.set_title(title)
        ax.grid(True, axis="y", color="#dddddd", linewidth=0.4)
    axes[0].set_ylabel(ylabel)
    if legend:
        fig.legend(
            list(legend.values()), list(legend), loc="outside lower center", ncols=1,
            frameon=False,
        )  # fmt: skip
    return fig


def save_figure(fig: Figure, stem: str | Path, data: pd.DataFrame | None = None) -> list[Path]:
    """Write ``stem.png``, ``stem.svg`` and ``stem.pdf`` (fonts embedded as TrueType, no creation
    date: the same figure gives the same bytes), and ``stem.csv`` with the data drawn
    (formula-safe) when given; return the paths."""
    stem = Path(stem)
    stem.parent.mkdir(parents=True, exist_ok=True)
    paths = []
    with venue_style():
        for ext in FORMATS:
            path = stem.with_name(f"{stem.name}.{ext}")
            fig.savefig(path, dpi=200 if ext == "png" else "figure", metadata=METADATA[ext])
            paths.append(path)
    if data is not None:
        path = stem.with_name(f"{stem.name}.csv")
        safe_frame(data).to_csv(path, index=False)
        paths.append(path)
    return paths
