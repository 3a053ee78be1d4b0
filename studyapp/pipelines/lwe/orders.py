"""Appendix H of the LWE paper: each order-sensitive method's result per random order (Tables
5-12) and the bar chart of their means and standard deviations (Figure 6), from Table 1's runs.

*Becoming Experienced Judges: Selective Test-Time Learning for Evaluators* (arXiv:2512.06751)
reports LWE and Selective LWE with gpt-4.1 on each benchmark over three random orders of the test
cases (Tables 5-8), and Selective LWE with gemini-2.5-pro and claude-sonnet-4.5 (Tables 9-12).

    python -m studyapp.pipelines.lwe.orders --runs var/table1 \\
        --runs gemini-2.5-pro=var/table1-gemini --runs var/table1-claude --out var/orders

Each ``--runs`` is the ``--out`` folder of ``python -m studyapp.pipelines.lwe.table1`` for one
judge (``MODEL=DIR`` names it; otherwise the model its runs recorded, else the folder's name). No
model is called. It writes

- ``orders.csv``: per judge, benchmark and method, one row per order (``run`` 0, 1, 2, with the
  order's seed) and its mean and sample standard deviation (``run`` "mean", "std"): accuracy,
  consistency, pair accuracy and relative inference cost;
- ``orders.md``: the same as one table per judge, benchmark and method, numbered as the paper's
  Tables 5-12 where they match (gpt-4.1, gemini-2.5-pro, claude-sonnet-4.5 on benchmarks named VL
  and MM), each with the response ordering its Accuracy was read on;
- ``figure6.csv`` and ``figure6.png/.svg``: one panel per benchmark, bars of the mean of each
  metric per judge and method with the standard deviation across orders as error bars.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from studyapp.pipelines.lwe.metrics import mean_std
from studyapp.pipelines.lwe.subset_files import write_csv

METHODS = ("lwe", "selective-lwe")
SEQUENTIAL = ("lwe", "selective-lwe", "dynamic-cheatsheet")
FIGURES = ("accuracy", "consistency", "pair_accuracy", "relative_cost")
LABELS = {
    "accuracy": "Acc.",
    "consistency": "Cons.",
    "pair_accuracy": "PairAcc.",
    "relative_cost": "Relative cost",
}
METHOD_NAMES = {"lwe": "LWE", "selective-lwe": "Selective LWE", "dynamic-cheatsheet": "DC"}
# The paper's numbering: (judge, benchmark, method) -> table.
PAPER_TABLES = {
    ("gpt-4.1", "VL", "lwe"): 5,
    ("gpt-4.1", "MM", "lwe"): 6,
    ("gpt-4.1", "VL", "selective-lwe"): 7,
    ("gpt-4.1", "MM", "selective-lwe"): 8,
    ("gemini-2.5-pro", "VL", "selective-lwe"): 9,
    ("gemini-2.5-pro", "MM", "selective-lwe"): 10,
    ("claude-sonnet-4.5", "VL", "selective-lwe"): 11,
    ("claude-sonnet-4.5", "MM", "selective-lwe"): 12,
}


class OrdersError(ValueError):
    """A folder without the runs asked for; the message names it."""


def paper_table(model: str, bench: str, method: str) -> int | None:
    """The paper's table number for a judge, benchmark and method, when there is one."""
    name = model.split(":", 1)[-1].lower()
    for (judge, paper_bench, paper_method), number in PAPER_TABLES.items():
        if judge in name and bench.upper() == paper_bench and method == paper_method:
            return number
    return None


def folders(values: list[str]) -> list[tuple[str | None, Path]]:
    out = []
    for value in values:
        name, sep, rest = value.partition("=")
        if sep and name and rest and not Path(value).exists():
            out.append((name, Path(rest)))
        else:
            out.append((None, Path(value)))
    return out


def collect(runs: list[tuple[str | None, Path]], methods: tuple[str, ...]) -> list[dict[str, Any]]:
    """One block per judge, benchmark and method found: its per-order figures."""
    blocks = []
    for name, folder in runs:
        base = folder / "runs"
        if not base.is_dir():
            raise OrdersError(f"{folder}: no runs/ folder (give Table 1's --out folder)")
        found = 0
        for bench_dir in sorted(p for p in base.iterdir() if p.is_dir()):
            for method in methods:
                path = bench_dir / f"{method}.json"
                if not path.is_file():
                    continue
                result = json.loads(path.read_text(encoding="utf-8"))
                model = name or result.get("model") or folder.name
                shown = result.get("response_order") or {"order": "file", "seed": None}
                blocks.append(
                    {
                        "model": model,
                        "benchmark": bench_dir.name,
                        "method": method,
                        "table": paper_table(model, bench_dir.name, method),
                        "seed": result.get("seed", 0),
                        "cases": result.get("cases"),
                        "response_order": shown,
                        "runs": [run["figures"] for run in result["runs"]],
                    }
                )
                found += 1
        if not found:
            raise OrdersError(f"{folder}: no run of {', '.join(methods)} under runs/<benchmark>/")
    blocks.sort(key=lambda b: (b["table"] or 99, b["model"], b["benchmark"], b["method"]))
    return blocks


def long_rows(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``orders.csv``: each order's figures, then their mean and standard deviation."""
    rows = []
    for block in blocks:
        head = {
            "table": block["table"] or "",
            "model": block["model"],
            "benchmark": block["benchmark"],
            "method": block["method"],
            "cases": block["cases"],
            "response_order": block["response_order"]["order"],
            "response_seed": block["response_order"].get("seed"),
        }
        for index, figures in enumerate(block["runs"]):
            # evaluate.shuffled_orders: order i is shuffled with seed + i
            rows.append({**head, "run": index, "order_seed": block["seed"] + index,
                         **{f: figures.get(f) for f in FIGURES}})  # fmt: skip
        stats = summary(block)
        for which in ("mean", "std"):
            rows.append({**head, "run": which, "order_seed": "",
                         **{f: stats[f][which] if stats[f] else None for f in FIGURES}})  # fmt: skip
    return rows


def summary(block: dict[str, Any]) -> dict[str, dict[str, float] | None]:
    out: dict[str, dict[str, float] | None] = {}
    for figure in FIGURES:
        values = [run[figure] for run in block["runs"] if run.get(figure) is not None]
        out[figure] = mean_std(values) if values else None
    return out


def caption(block: dict[str, Any]) -> str:
    number = f"Table {block['table']}" if block["table"] else "Table"
    shown = block["response_order"]
    ordering = (
        f"one random ordering of the responses (seed {shown.get('seed')})"
        if shown["order"] == "random"
        else "the file's response order"
    )
    return (
        f"{number}: {METHOD_NAMES.get(block['method'], block['method'])} under different orderings "
        f"of {block['benchmark']} with {block['model']} ({len(block['runs'])} random orders of "
        f"{block['cases']} cases; Accuracy on {ordering})"
    )


def markdown(blocks: list[dict[str, Any]]) -> str:
    parts = []
    for block in blocks:
        head = "| Run | " + " | ".join(LABELS[f] for f in FIGURES) + " |"
        lines = [f"### {caption(block)}", "", head, "|" + " --- |" * (len(FIGURES) + 1)]
        for index, figures in enumerate(block["runs"]):
            cells = [number(figures.get(f), f) for f in FIGURES]
            lines.append(f"| run {index} | " + " | ".join(cells) + " |")
        stats = summary(block)
        cells = [
            "–"
            if stats[f] is None
            else f"{number(stats[f]['mean'], f)} ± {number(stats[f]['std'], f)}"
            for f in FIGURES
        ]
        lines.append("| mean ± std | " + " | ".join(cells) + " |")
        parts.append("\n".join(lines))
    return "\n\n".join(parts) + "\n"


def number(value: float | None, figure: str) -> str:
    if value is None:
        return "–"
    return f"{value:.1f}×" if figure == "relative_cost" else f"{value:.3f}"


def figure6_rows(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    rows = []
    for block in blocks:
        stats = summary(block)
        for figure in FIGURES[:3]:
            if stats[figure] is not None:
                rows.append({"benchmark": block["benchmark"], "model": block["model"],
                             "method": block["method"], "metric": figure,
                             "mean": stats[figure]["mean"], "std": stats[figure]["std"],
                             "orders": len(block["runs"])})  # fmt: skip
    return rows


def draw_figure6(rows: list[dict[str, Any]], out: Path) -> list[Path]:
    """Bars of each metric's mean per judge and method, one panel per benchmark, with the
    standard deviation across orders as error bars."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    benches = list(dict.fromkeys(r["benchmark"] for r in rows))
    series = list(dict.fromkeys((r["model"], r["method"]) for r in rows))
    metrics = [m for m in FIGURES[:3] if any(r["metric"] == m for r in rows)]
    fig, axes = plt.subplots(1, max(1, len(benches)), figsize=(5.5 * max(1, len(benches)), 3.8))
    axes = [axes] if len(benches) <= 1 else list(axes)
    width = 0.8 / max(1, len(series))
    for ax, bench in zip(axes, benches, strict=False):
        for k, (model, method) in enumerate(series):
            cells = {
                r["metric"]: r
                for r in rows
                if r["benchmark"] == bench and r["model"] == model and r["method"] == method
            }
            xs = [i + (k - (len(series) - 1) / 2) * width for i in range(len(metrics))]
            means = [cells[m]["mean"] if m in cells else 0.0 for m in metrics]
            stds = [cells[m]["std"] if m in cells else 0.0 for m in metrics]
            label = METHOD_NAMES.get(method, method)
            if len({m for m, _ in series}) > 1:
                label = f"{label} ({model.split(':', 1)[-1]})"
            ax.bar(xs, means, width, yerr=stds, capsize=3, label=label)
        ax.set_xticks(range(len(metrics)), [LABELS[m] for m in metrics])
        ax.set_ylim(0, 1)
        ax.set_title(bench)
        ax.legend(fontsize=8)
    fig.suptitle("Across random orders of the test cases (mean ± std)")
    fig.tight_layout()
    paths = [out / "figure6.png", out / "figure6.svg"]
    for path in paths:
        fig.savefig(path, dpi=150)
    plt.close(fig)
    return paths


def write_outputs(blocks: list[dict[str, Any]], out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    written = [write_csv(out / "orders.csv", long_rows(blocks))]
    (out / "orders.md").write_text(markdown(blocks), encoding="utf-8")
    written.append(out / "orders.md")
    rows = figure6_rows(blocks)
    written.append(write_csv(out / "figure6.csv", rows))
    written += draw_figure6(rows, out)
    return written


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m studyapp.pipelines.lwe.orders",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--runs",
        action="append",
        required=True,
        metavar="[MODEL=]DIR",
        help="Table 1's --out folder for one judge (repeatable)",
    )
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument(
        "--methods",
        nargs="+",
        choices=SEQUENTIAL,
        default=list(METHODS),
        help="order-sensitive methods to lay out (the paper's appendix H: lwe selective-lwe)",
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        blocks = collect(folders(args.runs), tuple(args.methods))
    except (OrdersError, OSError, KeyError, json.JSONDecodeError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    for path in write_outputs(blocks, args.out):
        print(path)
    print((args.out / "orders.md").read_text(encoding="utf-8"), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
