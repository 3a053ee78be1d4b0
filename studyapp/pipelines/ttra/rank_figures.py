"""The rank figures of *Test-time RL alignment exposes task familiarity artifacts in LLM
benchmarks* (arXiv:2603.12875), drawn from the ``ranking.json`` that
``python -m studyapp.pipelines.ttra.harmonize`` writes:

- ``rank_bump.png/.svg/.pdf``: figure 3, each model's rank on the two benchmarks joined by a line,
  direct evaluation left, after TTRA right (crossing lines are discordant rankings);
- ``rank_scatter.png/.svg/.pdf``: figures 10 and 11, each model's score on one benchmark against
  the other, direct and after TTRA, with Spearman's ρ and Kendall's τ in the panel titles (figure
  10 for GSM8K and MathQA, figure 11 for GSM8K and GSM-plus-mini: the same drawing of another
  ranking.json);
- ``rank_figures.csv``: the numbers drawn (model, evaluation, score and rank on each benchmark).

    python -m studyapp.pipelines.ttra.rank_figures var/harmonize/ranking.json [--out DIR]

The harmonisation command draws them (:func:`draw`) next to its tables at the end of every run;
this command redraws them from any ranking file. Only ``matplotlib`` is needed (no torch).
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path
from typing import Any

WHEN = (("direct", "Direct evaluation"), ("ttra", "After TTRA"))


def ranks(values: list[float]) -> list[int]:
    """1 for the highest score; ties share the better rank.

    >>> ranks([0.2, 0.9, 0.5, 0.9])
    [4, 1, 3, 1]
    """
    return [1 + sum(other > value for other in values) for value in values]


def rows_of(result: dict[str, Any]) -> list[dict[str, Any]]:
    a, b = result["benchmarks"]
    models = result["models"]
    out = []
    for when, _ in WHEN:
        first = [result["scores"][m][a][when] for m in models]
        second = [result["scores"][m][b][when] for m in models]
        for model, x, y, rx, ry in zip(
            models, first, second, ranks(first), ranks(second), strict=True
        ):
            out.append(
                {"model": model, "evaluation": when, f"{a}_score": x, f"{b}_score": y,
                 f"{a}_rank": rx, f"{b}_rank": ry}
            )  # fmt: skip
    return out


def _title(label: str, stats: dict[str, Any]) -> str:
    rho, tau = stats.get("spearman_rho"), stats.get("kendall_tau")
    parts = [label]
    if rho is not None:
        parts.append(f"ρ = {rho:.2f}")
    if tau is not None:
        parts.append(f"τ = {tau:.2f}")
    return ", ".join(parts)


def draw(result: dict[str, Any], out: Path) -> list[Path]:
    """Write the bump chart, the scatter and the data drawn into ``out``; return the paths."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from analysis.plots import save_figure  # the same bytes for the same figure, every format

    out.mkdir(parents=True, exist_ok=True)
    a, b = result["benchmarks"]
    rows = rows_of(result)
    written = []
    data = out / "rank_figures.csv"
    with data.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    written.append(data)
    n = len(result["models"])

    fig, axes = plt.subplots(1, 2, figsize=(8, 0.45 * n + 2.2), sharey=True)
    for ax, (when, label) in zip(axes, WHEN, strict=True):
        for row in (r for r in rows if r["evaluation"] == when):
            ax.plot([0, 1], [row[f"{a}_rank"], row[f"{b}_rank"]], marker="o")
            ax.annotate(row["model"], (0, row[f"{a}_rank"]), xytext=(-6, 0),
                        textcoords="offset points", ha="right", va="center", fontsize=7)  # fmt: skip
        ax.set_xticks([0, 1], [a, b])
        ax.set_xlim(-0.9, 1.2)
        ax.set_title(_title(label, result.get(when, {})), fontsize=9)
    axes[0].set_ylabel("rank (1 = best)")
    axes[0].invert_yaxis()
    fig.tight_layout()
    written += save_figure(fig, out / "rank_bump")
    plt.close(fig)

    fig, axes = plt.subplots(1, 2, figsize=(8, 3.8), sharex=True, sharey=True)
    for ax, (when, label) in zip(axes, WHEN, strict=True):
        mine = [r for r in rows if r["evaluation"] == when]
        ax.scatter([r[f"{a}_score"] for r in mine], [r[f"{b}_score"] for r in mine])
        for row in mine:
            ax.annotate(row["model"], (row[f"{a}_score"], row[f"{b}_score"]), fontsize=6,
                        xytext=(3, 3), textcoords="offset points")  # fmt: skip
        ax.set_xlabel(f"{a} (avg@k)")
        ax.set_title(_title(label, result.get(when, {})), fontsize=9)
    axes[0].set_ylabel(f"{b} (avg@k)")
    fig.tight_layout()
    written += save_figure(fig, out / "rank_scatter")
    plt.close(fig)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m studyapp.pipelines.ttra.rank_figures",
                                     description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    parser.add_argument("ranking", type=Path, help="ranking.json of the harmonisation command")
    parser.add_argument("--out", type=Path, help="folder for the figures (default: its folder)")
    args = parser.parse_args(argv)
    try:
        result = json.loads(args.ranking.read_text(encoding="utf-8"))
        if len(result["benchmarks"]) != 2 or not result["models"]:
            raise ValueError("needs two benchmarks and at least one model")
    except (OSError, ValueError, KeyError) as err:
        print(f"error: {args.ranking}: {err}", file=sys.stderr)
        return 2
    for path in draw(result, args.out or args.ranking.parent):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
