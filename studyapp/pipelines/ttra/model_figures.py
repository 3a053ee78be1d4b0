"""The TTRA paper's figures that set models side by side, direct and after TTRA: figure 1 (one
group's mean gain), figure 6 (split-half: held-out against aligned), figure 7 (every group on the
reasoning benchmarks), figure 8 (the clinical benchmark) and table 2 (the Llama groups)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from analysis.safe_frames import safe_frame
from studyapp.pipelines.ttra.figure_drawing import BASE_COLOR, TUNED_COLOR, mean, pyplot, save
from studyapp.pipelines.ttra.figure_runs import Models, Run, score, ttra_scores


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
                "reported": mean([v for v in direct if v is not None]),
                "ttra": mean([v for v in aligned if v is not None]),
                "benchmarks": " ".join(benches),
            }
        )
    plt = pyplot()
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
            gain = f" (Δ = {mean(tuned) - base[0]:+.2f})"
        ax.set_title(f"{title}{gain}", fontsize=9)
    axes[0].set_ylabel(f"{group}: mean accuracy (%)")
    fig.tight_layout()
    return save(fig, out, "figure1", rows)


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
    plt = pyplot()
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
    return save(fig, out, "figure6", rows)


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
    plt = pyplot()
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
    return save(fig, out, "figure7", rows)


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
    plt = pyplot()
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
    return save(fig, out, "figure8", rows)


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
