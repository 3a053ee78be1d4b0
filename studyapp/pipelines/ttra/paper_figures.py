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
from pathlib import Path
from typing import Any

from studyapp.pipelines.ttra.figure_runs import (
    Models,
    discover,
    parse_splits,
    split_runs,
    ttra_scores,
)
from studyapp.pipelines.ttra.model_figures import figure1, figure6, figure7, figure8, table2
from studyapp.pipelines.ttra.variant_figures import figure5, figure9, figure12


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
