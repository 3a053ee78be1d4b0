"""The subset analyses' inputs and outputs (:mod:`studyapp.pipelines.lwe.subsets`): Table 1's saved
runs read back (which of the vanilla judge's cases are inconsistent, each method's verdicts), and
each target's rows written as CSV, Markdown and a figure."""

from __future__ import annotations

import argparse
import csv
import json
from pathlib import Path
from typing import Any

from games.experiment.summary import wilson
from studyapp.pipelines.lwe.data import PairCase
from studyapp.pipelines.lwe.judging import CaseResult
from studyapp.pipelines.lwe.metrics import cumulative_accuracy, score


class SubsetError(ValueError):
    """Table 1's runs are missing or do not match the benchmarks; the message says which."""


def results_of(run: dict[str, Any]) -> list[CaseResult]:
    """The per-case verdicts of one pass of a saved method, in its order."""
    return [
        CaseResult(r["id"], r["label"], r["first"], r["second"], r.get("path", "vanilla"))
        for r in run["results"]
    ]


def saved(table1: Path, bench: str, method: str) -> dict[str, Any]:
    path = table1 / "runs" / bench / f"{method}.json"
    if not path.is_file():
        raise SubsetError(
            f"{path}: missing; run python -m studyapp.pipelines.lwe.table1 --methods vanilla "
            "sample-specific selective-lwe ... --out with the same benchmarks first"
        )
    return json.loads(path.read_text(encoding="utf-8"))


def split(table1: Path, bench: str) -> tuple[list[str], list[str]]:
    """The ids of the vanilla judge's inconsistent and consistent cases (its one pass)."""
    results = results_of(saved(table1, bench, "vanilla")["runs"][0])
    return [r.id for r in results if not r.consistent], [r.id for r in results if r.consistent]


def restricted(results: list[CaseResult], ids: list[str]) -> list[CaseResult]:
    """``results`` of the cases in ``ids``, in ``ids``' order."""
    by_id = {r.id: r for r in results}
    return [by_id[i] for i in ids if i in by_id]


def figure3_rows(table1: Path, bench: str) -> list[dict[str, Any]]:
    """Cumulative accuracy on the inconsistent cases in Selective LWE's run-0 order; the vanilla
    curve with its Wilson interval at each point (the paper's grey band)."""
    inconsistent, _ = split(table1, bench)
    selective = saved(table1, bench, "selective-lwe")["runs"][0]
    order = [i for i in selective["order"] if i in set(inconsistent)]
    rows = []
    for method in ("vanilla", "sample-specific", "selective-lwe"):
        results = restricted(results_of(saved(table1, bench, method)["runs"][0]), order)
        curve = cumulative_accuracy(results)
        for t, accuracy in enumerate(curve, start=1):
            low = high = None
            if method == "vanilla":
                low, high = wilson(round(accuracy * t), t)
            rows.append(
                {"benchmark": bench, "method": method, "t": t, "accuracy": accuracy,
                 "ci_low": low, "ci_high": high}
            )  # fmt: skip
    return rows


def accuracy_row(target: str, bench: str, method: str, results: list[CaseResult], **extra) -> dict:
    figures = score(results)
    correct = sum(r.correct for r in results)
    low, high = wilson(correct, len(results)) if results else (None, None)
    return {
        "target": target, "benchmark": bench, "method": method, "cases": len(results),
        "accuracy": figures["accuracy"], "ci_low": low, "ci_high": high,
        "pair_accuracy": figures["pair_accuracy"], **extra,
    }  # fmt: skip


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


def write_outputs(
    args: argparse.Namespace,
    benchmarks: dict[str, list[PairCase]],
    splits: dict[str, tuple[list[str], list[str]]],
    lwe_runs: dict[tuple[str, str], dict[str, Any]],
    notes: list[dict[str, Any]] = (),
) -> list[Path]:
    out, written = args.out, []

    def lwe_results(bench: str, name: str) -> list[CaseResult]:
        return results_of(lwe_runs[bench, name]["runs"][0])

    if "figure3" in args.targets:
        rows = [row for bench in benchmarks for row in figure3_rows(args.table1, bench)]
        written += [write_csv(out / "figure3.csv", rows)]
        written += [draw(out, "figure3", rows, "t", "accuracy",
                         "Cumulative accuracy on the vanilla-inconsistent cases")]  # fmt: skip
    for target, part in (("table3", 0), ("table4", 1)):
        if target not in args.targets:
            continue
        rows = []
        for bench in benchmarks:
            ids = splits[bench][part]
            methods = ("vanilla", "sample-specific", "selective-lwe") if part == 0 else ("vanilla",)
            for method in methods:
                results = restricted(results_of(saved(args.table1, bench, method)["runs"][0]), ids)
                rows.append(accuracy_row(target, bench, method, results))
            name = "lwe-inconsistent-b4" if part == 0 else "lwe-consistent-b4"
            if (bench, name) in lwe_runs:
                rows.append(
                    accuracy_row(target, bench, "lwe (on this subset)", lwe_results(bench, name))
                )
        written += [
            write_csv(out / f"{target}.csv", rows),
            write_markdown(out / f"{target}.md", rows),
        ]
    if "figure4" in args.targets:
        rows = []
        for bench in benchmarks:
            vanilla = results_of(saved(args.table1, bench, "vanilla")["runs"][0])
            for (b, name), run in sorted(lwe_runs.items()):
                if b != bench or not name.startswith("lwe-ratio"):
                    continue
                ratio = float(name.removeprefix("lwe-ratio").split("-n")[0])
                lwe = results_of(run["runs"][0])
                ids = [r.id for r in lwe]
                rows.append(accuracy_row("figure4", bench, "lwe", lwe, ratio=ratio))
                rows.append(
                    accuracy_row("figure4", bench, "vanilla", restricted(vanilla, ids), ratio=ratio)
                )
            rows += [n for n in notes if n["benchmark"] == bench]
        if rows:
            written += [write_csv(out / "figure4.csv", rows)]
            drawn = [r for r in rows if "accuracy" in r]  # not the ratios left unfilled
            written += [draw(out, "figure4", drawn, "ratio", "accuracy",
                             "LWE and vanilla by share of inconsistent cases")]  # fmt: skip
    if "figure7" in args.targets:
        rows = []
        for bench in benchmarks:
            base = lwe_runs.get((bench, "lwe-inconsistent-b4"))
            base_chars = base["runs"][0]["cost"]["total_chars"] if base else None
            for b in args.batch_sizes:
                run = lwe_runs.get((bench, f"lwe-inconsistent-b{b}"))
                if run is None:
                    continue
                chars = run["runs"][0]["cost"]["total_chars"]
                rows.append(accuracy_row("figure7", bench, "lwe", results_of(run["runs"][0]),
                                         batch_size=b,
                                         relative_cost=chars / base_chars if base_chars else None))  # fmt: skip
        if rows:
            written += [write_csv(out / "figure7.csv", rows)]
            written += [draw(out, "figure7", rows, "batch_size", "accuracy",
                             "LWE by batch size on the inconsistent cases")]  # fmt: skip
    return written


def write_markdown(path: Path, rows: list[dict[str, Any]]) -> Path:
    lines = ["| Benchmark | Method | Cases | Accuracy | 95% interval | PairAcc |",
             "| --- | --- | ---: | ---: | --- | ---: |"]  # fmt: skip
    for r in rows:
        interval = "" if r["ci_low"] is None else f"[{r['ci_low']:.3f}, {r['ci_high']:.3f}]"
        lines.append(f"| {r['benchmark']} | {r['method']} | {r['cases']} | {r['accuracy']:.3f} | "
                     f"{interval} | {r['pair_accuracy']:.3f} |")  # fmt: skip
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
