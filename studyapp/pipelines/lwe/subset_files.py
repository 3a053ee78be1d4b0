"""The files the subset analyses write (``lwe.subsets``): formula-safe-enough CSV of plain rows,
a Markdown accuracy table and one PNG panel per benchmark."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any


def write_csv(path: Path, rows: list[dict[str, Any]]) -> Path:
    columns: list[str] = []
    for row in rows:
        columns += [c for c in row if c not in columns]
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)
    return path


def draw(out: Path, name: str, rows: list[dict[str, Any]], x: str, y: str, title: str) -> Path:
    """One panel per benchmark, one line per method (with its band where the rows have one)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    benches = list(dict.fromkeys(r["benchmark"] for r in rows))
    fig, axes = plt.subplots(1, max(1, len(benches)), figsize=(5 * max(1, len(benches)), 3.6))
    axes = [axes] if len(benches) <= 1 else list(axes)
    for ax, bench in zip(axes, benches, strict=False):
        mine = [r for r in rows if r["benchmark"] == bench]
        for method in dict.fromkeys(r["method"] for r in mine):
            line = [r for r in mine if r["method"] == method]
            xs, ys = [r[x] for r in line], [r[y] for r in line]
            ax.plot(xs, ys, marker="o" if len(xs) < 12 else None, label=method)
            if all(r.get("ci_low") is not None for r in line):
                ax.fill_between(xs, [r["ci_low"] for r in line], [r["ci_high"] for r in line],
                                color="grey", alpha=0.25)  # fmt: skip
        ax.set_title(bench)
        ax.set_xlabel(x)
        ax.set_ylabel(y)
        ax.legend(fontsize=8)
    fig.suptitle(title)
    fig.tight_layout()
    path = out / f"{name}.png"
    fig.savefig(path, dpi=150)
    plt.close(fig)
    return path


def write_markdown(path: Path, rows: list[dict[str, Any]]) -> Path:
    lines = ["| Benchmark | Method | Cases | Accuracy | 95% interval | PairAcc |",
             "| --- | --- | ---: | ---: | --- | ---: |"]  # fmt: skip
    for r in rows:
        interval = "" if r["ci_low"] is None else f"[{r['ci_low']:.3f}, {r['ci_high']:.3f}]"
        lines.append(f"| {r['benchmark']} | {r['method']} | {r['cases']} | {r['accuracy']:.3f} | "
                     f"{interval} | {r['pair_accuracy']:.3f} |")  # fmt: skip
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
