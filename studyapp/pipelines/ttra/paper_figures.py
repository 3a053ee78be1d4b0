"""The TTRA paper's figures 1, 5, 6, 7, 8, 9 and 12 and its table 2, drawn from a folder of runs.

*Test-time RL alignment exposes task familiarity artifacts in LLM benchmarks* (Wang and Heckel,
arXiv:2603.12875). Every run of ``python -m studyapp.pipelines.ttra`` leaves a ``results.json``;
lay them out as ``RUNS/<benchmark>/<model>/[<variant>/]results.json`` and run

    python -m studyapp.pipelines.ttra.paper_figures RUNS --out DIR [--models models.json]
    python -m studyapp.pipelines.ttra.harmonize figures RUNS --out DIR   (the same command)

Each figure is drawn from the runs whose experiment it needs, and skipped (with the reason, in
``DIR/figures.json``) when there are none:

- figure 1: the models of one group (``--figure1-group``, default the first group whose name has
  "7B"), each model's mean over the benchmarks (the clinical one left out), as reported (``reported`` scores of models.json,
  else the direct evaluation) and after TTRA; the mean gain of the fine-tuned models over the base
  in each panel's title;
- figure 5: MATH500 stability (benchmark ``--stability-benchmark``, default math500): the ``ttra``
  runs of one model (``--stability-model``, default the one with ``sft`` runs) with different
  seeds (one-shot examples) beside its ``sft`` runs on different data (``sft.data`` names the bar);
- figure 6: the ``split-half`` runs, accuracy on the held-out half against the aligned half, with
  y = x and a least-squares line;
- figure 7: every group but table 2's, a row per group and a panel per reasoning benchmark: each model's
  score after TTRA, the base model's bar in orange and its level dashed;
- figure 8: the clinical benchmark (``--clinical-benchmark``, default mimic): each model direct and
  after TTRA (the macro average over pathologies, appendix C), ``--doctors`` as a line;
- figure 9: the ``ablation`` runs, direct and the three variants (one-shot only, TTRL only, both);
- figure 12: the ``sft`` runs, a panel per benchmark and a bar per SFT data set;
- table 2: the groups whose name has "Llama" (``--table2-group``): base and fine-tuned, direct
  (reported where models.json has it, starred) and after TTRA, and the fine-tuned model's gain.

``--split aime=2024,2025`` scores a benchmark's ``ttra`` runs per question-id prefix: §4.1 aligns
on AIME 2024 and 2025 together and reports each year (figure 7's four benchmarks).

``models.json`` (optional) says what a folder name cannot: ``{"<model folder>": {"group":
"Qwen2.5-Math-7B", "base": true, "label": "Base", "reported": {"math500": 50.8}}}``. Without it
every model is its own group and none is a base. Scores are percentages: ``avg_at_k`` × 100, or
the macro average over labels where the benchmark has one (appendix C). Each figure also leaves its
numbers as CSV beside the PNG, SVG and PDF. Only matplotlib and pandas are needed (no torch).
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from analysis.safe_frames import safe_frame


@dataclass
class Run:
    """One results.json and where it sits: benchmark, model folder, variant (the rest)."""

    path: Path
    benchmark: str
    model: str
    variant: str
    results: dict[str, Any]

    @property
    def experiment(self) -> str:
        return str(self.results.get("experiment", "ttra"))

    @property
    def seed(self) -> int | None:
        return self.results.get("options", {}).get("seed")


@dataclass
class Models:
    """What models.json says of each model folder."""

    info: dict[str, dict[str, Any]] = field(default_factory=dict)

    def group(self, model: str) -> str:
        return str(self.info.get(model, {}).get("group", model))

    def is_base(self, model: str) -> bool:
        return bool(self.info.get(model, {}).get("base", False))

    def label(self, model: str) -> str:
        return str(self.info.get(model, {}).get("label", model))

    def reported(self, model: str, benchmark: str) -> float | None:
        value = self.info.get(model, {}).get("reported", {}).get(benchmark)
        return None if value is None else float(value)


def discover(folder: Path) -> list[Run]:
    """Every ``results.json`` under ``folder``, in path order."""
    runs = []
    for path in sorted(folder.rglob("results.json")):
        parts = path.parent.relative_to(folder).parts
        if len(parts) < 2:
            raise ValueError(f"{path}: lay runs out as <benchmark>/<model>/[variant/]results.json")
        results = json.loads(path.read_text(encoding="utf-8"))
        runs.append(Run(path, parts[0], parts[1], "/".join(parts[2:]), results))
    return runs


def split_runs(runs: list[Run], splits: dict[str, list[str]]) -> list[Run]:
    """The runs with each ``ttra`` run of a split benchmark replaced by one run per id prefix,
    scored on its questions alone (§4.1 aligns on AIME 2024 and 2025 together and reports each
    year: ``{"aime": ["2024", "2025"]}`` turns the run into ``aime2024`` and ``aime2025``).
    """
    out = []
    for run in runs:
        prefixes = splits.get(run.benchmark)
        if not prefixes or run.experiment != "ttra":
            out.append(run)
            continue
        for prefix in prefixes:
            results = dict(run.results)
            for when in ("direct", "aligned"):
                rows = [
                    q
                    for q in (run.results.get(when) or {}).get("per_question", [])
                    if str(q["id"]).startswith(prefix)
                ]
                results[when] = (
                    {"avg_at_k": sum(q["avg"] for q in rows) / len(rows), "macro_avg_at_k": None}
                    if rows
                    else None
                )
            out.append(Run(run.path, f"{run.benchmark}{prefix}", run.model, run.variant, results))
    return out


def parse_splits(values: list[str]) -> dict[str, list[str]]:
    """``BENCH=PREFIX,PREFIX`` pairs.

    >>> parse_splits(["aime=2024,2025"])
    {'aime': ['2024', '2025']}
    """
    found = {}
    for value in values:
        name, sep, prefixes = value.partition("=")
        parts = [p.strip() for p in prefixes.split(",") if p.strip()]
        if not sep or not name.strip() or not parts:
            raise ValueError(f"--split takes BENCH=PREFIX,PREFIX, not {value!r}")
        found[name.strip()] = parts
    return found


def score(evaluation: dict[str, Any] | None) -> float | None:
    """An evaluation's figure in percent: the macro average over labels where there is one
    (appendix C), else avg@k.

    >>> score({"avg_at_k": 0.25, "macro_avg_at_k": None}), score({"avg_at_k": 0.2, "macro_avg_at_k": 0.5})
    (25.0, 50.0)
    """
    if not evaluation:
        return None
    value = evaluation.get("macro_avg_at_k")
    if value is None:
        value = evaluation.get("avg_at_k")
    return None if value is None else 100.0 * float(value)


def ttra_scores(runs: list[Run]) -> dict[tuple[str, str], tuple[float | None, float | None]]:
    """(model, benchmark) → (direct, after TTRA) from the ``ttra`` runs; the first run of a pair
    (the lowest seed folder) when there are several."""
    found: dict[tuple[str, str], tuple[float | None, float | None]] = {}
    for run in runs:
        if run.experiment != "ttra" or (run.model, run.benchmark) in found:
            continue
        found[run.model, run.benchmark] = (
            score(run.results.get("direct")),
            score(run.results.get("aligned")),
        )
    return found


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(fig: Any, out: Path, name: str, rows: list[dict[str, Any]]) -> list[str]:
    import pandas as pd

    from analysis.plots import save_figure

    paths = save_figure(fig, out / name, pd.DataFrame(rows))
    _plt().close(fig)
    return [str(p) for p in paths]


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


BASE_COLOR, TUNED_COLOR = "tab:orange", "tab:blue"


def figure1(
    runs: list[Run], models: Models, out: Path, group: str | None, leave_out: str = ""
) -> list[str]:
    scores = {k: v for k, v in ttra_scores(runs).items() if k[1] != leave_out}
    groups = sorted({models.group(m) for m, _ in scores})
    if group is None:
        group = next((g for g in groups if "7B" in g), groups[0] if groups else None)
    members = sorted({m for m, _ in scores if models.group(m) == group}, key=models.is_base)[::-1]
    if not members:
        return []
    rows = []
    for model in members:
        benches = sorted(b for m, b in scores if m == model)
        reported = [models.reported(model, b) for b in benches]
        direct = [
            r if r is not None else scores[model, b][0]
            for r, b in zip(reported, benches, strict=True)
        ]
        aligned = [scores[model, b][1] for b in benches]
        rows.append(
            {
                "model": models.label(model),
                "base": models.is_base(model),
                "reported": _mean([v for v in direct if v is not None]),
                "ttra": _mean([v for v in aligned if v is not None]),
                "benchmarks": " ".join(benches),
            }
        )
    plt = _plt()
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.6), sharey=True)
    for ax, key, title in ((axes[0], "reported", "Reported"), (axes[1], "ttra", "After TTRA")):
        values = [r[key] or 0.0 for r in rows]
        colors = [BASE_COLOR if r["base"] else TUNED_COLOR for r in rows]
        ax.bar(range(len(rows)), values, color=colors)
        ax.set_xticks(range(len(rows)), [r["model"] for r in rows], rotation=40, ha="right")
        base = [r[key] for r in rows if r["base"] and r[key] is not None]
        tuned = [r[key] for r in rows if not r["base"] and r[key] is not None]
        gain = ""
        if base and tuned:
            ax.axhline(base[0], color=BASE_COLOR, linestyle="--")
            gain = f" (Δ = {_mean(tuned) - base[0]:+.2f})"
        ax.set_title(f"{title}{gain}", fontsize=9)
    axes[0].set_ylabel(f"{group}: mean accuracy (%)")
    fig.tight_layout()
    return _save(fig, out, "figure1", rows)


def figure5(
    runs: list[Run], models: Models, out: Path, benchmark: str, model: str | None = None
) -> list[str]:
    here = [r for r in runs if r.benchmark == benchmark]
    if model is None:  # the model with SFT runs (Qwen2.5-Math-1.5B in the paper)
        model = next((r.model for r in here if r.experiment == "sft"), None)
    mine = [r for r in here if r.model == model and r.experiment in ("ttra", "sft")]
    rows = []
    for run in mine:
        if run.experiment == "ttra":
            rows.append(
                {
                    "model": models.label(run.model),
                    "method": "TTRA",
                    "setting": f"seed {run.seed}",
                    "one_shot": ",".join(run.results.get("one_shot_tasks", [])),
                    "accuracy": score(run.results.get("aligned")),
                }
            )
        else:
            data = str(run.results.get("sft", {}).get("data") or run.variant)
            rows.append(
                {
                    "model": models.label(run.model),
                    "method": "SFT",
                    "setting": Path(data).stem,
                    "one_shot": "",
                    "accuracy": score(run.results.get("sft", {}).get("evaluation")),
                }
            )
    if not any(r["method"] == "TTRA" for r in rows) or not any(r["method"] == "SFT" for r in rows):
        return []
    plt = _plt()
    fig, ax = plt.subplots(figsize=(7, 3.4))
    colors = [BASE_COLOR if r["method"] == "TTRA" else TUNED_COLOR for r in rows]
    ax.bar(range(len(rows)), [r["accuracy"] or 0.0 for r in rows], color=colors)
    labels = [f"{r['method']}\n{r['setting']}" for r in rows]
    ax.set_xticks(range(len(rows)), labels, fontsize=7)
    spread = {
        m: (max(v) - min(v) if v else 0.0)
        for m in ("TTRA", "SFT")
        for v in [[r["accuracy"] for r in rows if r["method"] == m and r["accuracy"] is not None]]
    }
    ax.set_title(
        f"{benchmark}: TTRA spread {spread['TTRA']:.2f}, SFT spread {spread['SFT']:.2f} points",
        fontsize=9,
    )
    ax.set_ylabel("accuracy (%)")
    fig.tight_layout()
    return _save(fig, out, "figure5", rows)


def figure6(runs: list[Run], models: Models, out: Path) -> list[str]:
    rows = []
    for run in (r for r in runs if r.experiment == "split-half"):
        aligned = run.results.get("aligned", {})
        rows.append(
            {
                "model": models.label(run.model),
                "benchmark": run.benchmark,
                "aligned_half": score(aligned.get("aligned_half")),
                "held_out_half": score(aligned.get("held_out_half")),
            }
        )
    rows = [r for r in rows if r["aligned_half"] is not None and r["held_out_half"] is not None]
    if not rows:
        return []
    xs, ys = [r["aligned_half"] for r in rows], [r["held_out_half"] for r in rows]
    slope, intercept = _fit(xs, ys)
    for row in rows:
        row["fit_slope"], row["fit_intercept"] = slope, intercept
    plt = _plt()
    fig, ax = plt.subplots(figsize=(4.2, 4.2))
    ax.scatter(xs, ys, marker="*", s=90, color=BASE_COLOR)
    for row in rows:
        ax.annotate(row["model"], (row["aligned_half"], row["held_out_half"]), fontsize=6,
                    xytext=(3, 3), textcoords="offset points")  # fmt: skip
    low, high = min(xs + ys) - 2, max(xs + ys) + 2
    ax.plot([low, high], [low, high], color="grey", linestyle="--", label="y = x")
    ax.plot([low, high], [slope * low + intercept, slope * high + intercept], color="tab:pink",
            linestyle="--", label=f"fit: y = {slope:.2f}x + {intercept:.2f}")  # fmt: skip
    ax.set_xlabel("accuracy on the half used for TTRA (%)")
    ax.set_ylabel("accuracy on the held-out half (%)")
    ax.legend(fontsize=7)
    fig.tight_layout()
    return _save(fig, out, "figure6", rows)


def _fit(xs: list[float], ys: list[float]) -> tuple[float, float]:
    """Least-squares line through the points (slope 1 through the mean for a single x).

    >>> _fit([0.0, 1.0, 2.0], [1.0, 3.0, 5.0])
    (2.0, 1.0)
    """
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    var = sum((x - mx) ** 2 for x in xs)
    if var == 0:
        return 1.0, my - mx
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / var
    return slope, my - slope * mx


def figure7(
    runs: list[Run], models: Models, out: Path, skip_groups: set[str], leave_out: str = ""
) -> list[str]:
    scores = {k: v for k, v in ttra_scores(runs).items() if k[1] != leave_out}
    groups = sorted({models.group(m) for m, _ in scores} - skip_groups)
    benches = sorted({b for _, b in scores})
    rows = [
        {
            "group": models.group(m),
            "model": models.label(m),
            "base": models.is_base(m),
            "benchmark": b,
            "direct": d,
            "ttra": a,
        }
        for (m, b), (d, a) in sorted(scores.items())
        if models.group(m) in groups
    ]
    if not rows:
        return []
    plt = _plt()
    fig, axes = plt.subplots(
        len(groups), len(benches), figsize=(3.2 * len(benches), 2.8 * len(groups)), squeeze=False
    )
    for i, group in enumerate(groups):
        for j, bench in enumerate(benches):
            ax = axes[i][j]
            mine = [r for r in rows if r["group"] == group and r["benchmark"] == bench]
            mine.sort(key=lambda r: not r["base"])
            ax.bar(range(len(mine)), [r["ttra"] or 0.0 for r in mine],
                   color=[BASE_COLOR if r["base"] else TUNED_COLOR for r in mine])  # fmt: skip
            base = [r["ttra"] for r in mine if r["base"] and r["ttra"] is not None]
            if base:
                ax.axhline(base[0], color=BASE_COLOR, linestyle="--")
            ax.set_xticks(range(len(mine)), [r["model"] for r in mine], rotation=40,
                          ha="right", fontsize=6)  # fmt: skip
            ax.set_title(f"{group}: {bench}", fontsize=8)
    fig.tight_layout()
    return _save(fig, out, "figure7", rows)


def figure8(
    runs: list[Run], models: Models, out: Path, benchmark: str, doctors: float | None
) -> list[str]:
    scores = ttra_scores(runs)
    rows = [
        {"model": models.label(m), "direct": d, "ttra": a, "reported_direct": models.reported(m, b)}
        for (m, b), (d, a) in sorted(scores.items())
        if b == benchmark
    ]
    if not rows:
        return []
    plt = _plt()
    fig, ax = plt.subplots(figsize=(max(4.0, 1.1 * len(rows) + 2), 3.4))
    xs = range(len(rows))
    direct = [r["reported_direct"] if r["reported_direct"] is not None else r["direct"] or 0.0
              for r in rows]  # fmt: skip
    ax.bar([x - 0.2 for x in xs], direct, width=0.4, color="tab:grey", label="Direct")
    ax.bar([x + 0.2 for x in xs], [r["ttra"] or 0.0 for r in rows], width=0.4,
           color=BASE_COLOR, label="TTRA")  # fmt: skip
    if doctors is not None:
        ax.axhline(doctors, color="tab:green", linestyle="--", label="Doctors")
        for row in rows:
            row["doctors"] = doctors
    labels = [r["model"] + ("*" if r["reported_direct"] is not None else "") for r in rows]
    ax.set_xticks(list(xs), labels, rotation=30, ha="right", fontsize=7)
    ax.set_ylabel(f"{benchmark}: accuracy (%, mean over pathologies)")
    ax.legend(fontsize=7)
    fig.tight_layout()
    return _save(fig, out, "figure8", rows)


VARIANTS = (("one-shot", "1-shot only"), ("ttrl", "TTRL only"), ("both", "TTRA"))


def figure9(runs: list[Run], models: Models, out: Path) -> list[str]:
    ablations = [r for r in runs if r.experiment == "ablation"]
    if not ablations:
        return []
    rows = []
    for run in ablations:
        variants = run.results.get("variants", {})
        rows.append({"run": f"{models.label(run.model)} ({run.benchmark})", "setting": "Direct",
                     "accuracy": score(run.results.get("direct"))})  # fmt: skip
        for key, label in VARIANTS:
            rows.append(
                {
                    "run": f"{models.label(run.model)} ({run.benchmark})",
                    "setting": label,
                    "accuracy": score(variants.get(key, {}).get("aligned")),
                }
            )
    plt = _plt()
    fig, axes = plt.subplots(1, len(ablations), figsize=(4 * len(ablations), 3.2), squeeze=False)
    for ax, run in zip(axes[0], ablations, strict=True):
        name = f"{models.label(run.model)} ({run.benchmark})"
        mine = [r for r in rows if r["run"] == name]
        ax.bar(range(len(mine)), [r["accuracy"] or 0.0 for r in mine],
               color=["tab:grey", TUNED_COLOR, TUNED_COLOR, BASE_COLOR])  # fmt: skip
        ax.set_xticks(range(len(mine)), [r["setting"] for r in mine], fontsize=7)
        ax.set_title(name, fontsize=8)
        ax.set_ylabel("accuracy (%)")
    fig.tight_layout()
    return _save(fig, out, "figure9", rows)


def figure12(runs: list[Run], models: Models, out: Path) -> list[str]:
    sft = [r for r in runs if r.experiment == "sft"]
    if not sft:
        return []
    rows = [
        {
            "model": models.label(r.model),
            "benchmark": r.benchmark,
            "data": Path(str(r.results.get("sft", {}).get("data") or r.variant)).stem,
            "accuracy": score(r.results.get("sft", {}).get("evaluation")),
        }
        for r in sft
    ]
    benches = sorted({r["benchmark"] for r in rows})
    plt = _plt()
    fig, axes = plt.subplots(1, len(benches), figsize=(3.6 * len(benches), 3.2), squeeze=False)
    for ax, bench in zip(axes[0], benches, strict=True):
        mine = [r for r in rows if r["benchmark"] == bench]
        ax.bar(range(len(mine)), [r["accuracy"] or 0.0 for r in mine], color=TUNED_COLOR)
        ax.set_xticks(range(len(mine)), [r["data"] for r in mine], rotation=30, ha="right",
                      fontsize=7)  # fmt: skip
        ax.set_title(bench, fontsize=8)
    axes[0][0].set_ylabel("accuracy after SFT (%)")
    fig.tight_layout()
    return _save(fig, out, "figure12", rows)


def table2(runs: list[Run], models: Models, out: Path, groups: set[str] | None) -> list[str]:
    scores = ttra_scores(runs)
    chosen = groups or {models.group(m) for m, _ in scores if "llama" in models.group(m).lower()}
    benches = sorted({b for m, b in scores if models.group(m) in chosen})
    if not benches:
        return []
    rows: list[dict[str, Any]] = []
    for group in sorted(chosen):
        members = sorted({m for m, _ in scores if models.group(m) == group}, key=models.is_base)
        members = members[::-1]  # the base first
        base = next((m for m in members if models.is_base(m)), None)
        for model in members:
            row: dict[str, Any] = {"group": group, "model": models.label(model)}
            for bench in benches:
                direct, aligned = scores.get((model, bench), (None, None))
                reported = models.reported(model, bench)
                row[f"{bench}_direct"] = reported if reported is not None else direct
                row[f"{bench}_direct_reported"] = reported is not None
                row[f"{bench}_ttra"] = aligned
            rows.append(row)
            if base is not None and model != base:
                gain: dict[str, Any] = {"group": group, "model": f"gain over {models.label(base)}"}
                base_row = next(r for r in rows if r["model"] == models.label(base))
                for bench in benches:
                    for when in ("direct", "ttra"):
                        mine, theirs = row[f"{bench}_{when}"], base_row[f"{bench}_{when}"]
                        gain[f"{bench}_{when}"] = (
                            None if mine is None or theirs is None else mine - theirs
                        )
                    gain[f"{bench}_direct_reported"] = False
                rows.append(gain)
    import pandas as pd

    out.mkdir(parents=True, exist_ok=True)
    csv_path = out / "table2.csv"
    safe_frame(pd.DataFrame(rows)).to_csv(csv_path, index=False)
    header = ["Models"] + [f"{b} {w}" for b in benches for w in ("Direct", "TTRA")]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in rows:
        cells = [f"{row['group']}: {row['model']}"]
        for bench in benches:
            for when in ("direct", "ttra"):
                value = row[f"{bench}_{when}"]
                star = "*" if when == "direct" and row[f"{bench}_direct_reported"] else ""
                sign = "+" if row["model"].startswith("gain") and value is not None else ""
                cells.append("" if value is None else f"{value:{sign}.2f}{star}")
        lines.append("| " + " | ".join(cells) + " |")
    md_path = out / "table2.md"
    md_path.write_text(
        "Table 2: direct evaluation and after TTRA (%); * = reported by the model's paper.\n\n"
        + "\n".join(lines)
        + "\n",
        encoding="utf-8",
    )
    return [str(csv_path), str(md_path)]


def draw_all(
    folder: Path,
    out: Path,
    models: Models | None = None,
    *,
    figure1_group: str | None = None,
    stability_benchmark: str = "math500",
    stability_model: str | None = None,
    clinical_benchmark: str = "mimic",
    doctors: float | None = None,
    table2_groups: set[str] | None = None,
    splits: dict[str, list[str]] | None = None,
) -> dict[str, Any]:
    """Draw everything the runs allow; ``figures.json`` lists each output's files, or why none."""
    models = models or Models()
    runs = discover(folder)
    if not runs:
        raise ValueError(f"no results.json under {folder}")
    runs = split_runs(runs, splits or {})
    scores = ttra_scores(runs)
    llama = table2_groups or {
        models.group(m) for m, _ in scores if "llama" in models.group(m).lower()
    }
    made = {
        "figure1": figure1(runs, models, out, figure1_group, clinical_benchmark),
        "figure5": figure5(runs, models, out, stability_benchmark, stability_model),
        "figure6": figure6(runs, models, out),
        "figure7": figure7(runs, models, out, llama, clinical_benchmark),
        "figure8": figure8(runs, models, out, clinical_benchmark, doctors),
        "figure9": figure9(runs, models, out),
        "figure12": figure12(runs, models, out),
        "table2": table2(runs, models, out, llama or None),
    }
    needs = {
        "figure1": "ttra runs of the figure's group",
        "figure5": f"ttra and sft runs on {stability_benchmark}",
        "figure6": "split-half runs",
        "figure7": "ttra runs outside table 2's groups",
        "figure8": f"ttra runs on {clinical_benchmark}",
        "figure9": "ablation runs",
        "figure12": "sft runs",
        "table2": "ttra runs of a Llama group (--table2-group)",
    }
    report = {
        "runs": len(runs),
        "outputs": {
            name: {"files": files} if files else {"skipped": f"needs {needs[name]}"}
            for name, files in made.items()
        },
    }
    out.mkdir(parents=True, exist_ok=True)
    (out / "figures.json").write_text(json.dumps(report, indent=2), encoding="utf-8")
    return report


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m studyapp.pipelines.ttra.paper_figures",
        description="The TTRA paper's figures 1, 5-9 and 12 and table 2 from a folder of runs "
        "(RUNS/<benchmark>/<model>/[variant/]results.json).",
    )
    parser.add_argument("runs", type=Path, help="Folder of runs.")
    parser.add_argument("--out", type=Path, required=True, help="Folder for figures and tables.")
    parser.add_argument("--models", type=Path, help="models.json: group, base, label, reported.")
    parser.add_argument("--figure1-group", help="The group of figure 1 (default: a 7B group).")
    parser.add_argument("--stability-benchmark", default="math500", help="Figure 5's benchmark.")
    parser.add_argument(
        "--stability-model", help="Figure 5's model folder (default: the one with sft runs)."
    )
    parser.add_argument("--clinical-benchmark", default="mimic", help="Figure 8's benchmark.")
    parser.add_argument("--doctors", type=float, help="Figure 8's doctors' accuracy (%%).")
    parser.add_argument(
        "--table2-group", action="append", help="A group of table 2 (default: Llama groups)."
    )
    parser.add_argument(
        "--split",
        action="append",
        default=[],
        metavar="BENCH=PREFIX,PREFIX",
        help="Score a benchmark's ttra runs per question-id prefix (aime=2024,2025: §4.1 aligns "
        "on both years together and reports each).",
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        info = json.loads(args.models.read_text(encoding="utf-8")) if args.models else {}
        report = draw_all(
            args.runs,
            args.out,
            Models(info),
            figure1_group=args.figure1_group,
            stability_benchmark=args.stability_benchmark,
            stability_model=args.stability_model,
            clinical_benchmark=args.clinical_benchmark,
            doctors=args.doctors,
            table2_groups=set(args.table2_group) if args.table2_group else None,
            splits=parse_splits(args.split),
        )
    except (OSError, ValueError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
