"""The TTRA paper's figures of one model's variants: figure 5 (MATH500 stability over one-shot
seeds beside SFT on different data), figure 9 (the ablation: one-shot only, TTRL only, both) and
figure 12 (SFT, a bar per data set)."""

from __future__ import annotations

from pathlib import Path

from studyapp.pipelines.ttra.figure_drawing import BASE_COLOR, TUNED_COLOR, pyplot, save
from studyapp.pipelines.ttra.figure_runs import Models, Run, score


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
    plt = pyplot()
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
    return save(fig, out, "figure5", rows)


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
    plt = pyplot()
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
    return save(fig, out, "figure9", rows)


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
    plt = pyplot()
    fig, axes = plt.subplots(1, len(benches), figsize=(3.6 * len(benches), 3.2), squeeze=False)
    for ax, bench in zip(axes[0], benches, strict=True):
        mine = [r for r in rows if r["benchmark"] == bench]
        ax.bar(range(len(mine)), [r["accuracy"] or 0.0 for r in mine], color=TUNED_COLOR)
        ax.set_xticks(range(len(mine)), [r["data"] for r in mine], rotation=30, ha="right",
                      fontsize=7)  # fmt: skip
        ax.set_title(bench, fontsize=8)
    axes[0][0].set_ylabel("accuracy after SFT (%)")
    fig.tight_layout()
    return save(fig, out, "figure12", rows)
