"""Direct evaluation and TTRA for several models on two benchmarks: the cost table and the rankings.

``python -m studyapp.pipelines.ttra.harmonize --model A --model B --benchmark gsm8k=FILE
--benchmark mathqa=FILE --out DIR`` runs the ``ttra`` experiment (direct evaluation, one-shot,
TTRL, evaluation after alignment) for every model on every benchmark, then writes

- ``cost.csv`` / ``cost.md``: per model and benchmark, each stage's wall time and GPU-seconds and
  TTRA's cost relative to direct evaluation (the paper's table 1, §6.2); where a benchmark has SFT
  data (``--sft-data FILE`` or ``--set BENCHMARK.sft_data=FILE``) its runs are the ``sft``
  experiment with TTRA beside it, and the ``sft_*`` columns carry table 1's middle row (SFT's
  wall time, GPU-seconds, training part and relative cost; empty without SFT data);
- ``ranking.json`` / ``ranking.md``: each model's score on both benchmarks, direct and after TTRA,
  and the rank correlation of the two benchmarks' rankings before and after (Kendall's τ, and
  Spearman's ρ, the figure the paper's figure 10 prints; §3.1);
- ``per_label.csv`` / ``per_label.md``: for a choice or word benchmark, accuracy per label and its
  macro average (appendix C's per-pathology figure), direct and after TTRA;
- the rank figures drawn from ``ranking.json`` (`rank_figures.draw`): ``rank_bump.png/.svg/.pdf``
  (figure 3), ``rank_scatter.png/.svg/.pdf`` (figures 10 and 11) and ``rank_figures.csv``.

``python -m studyapp.pipelines.ttra.harmonize figures RUNS --out DIR`` draws the paper's other
figures (1, 5, 6, 7, 8, 9 and 12) and its table 2 from a folder of runs instead
(`paper_figures`).

Each model-benchmark run keeps its own ``results.json`` under ``DIR/runs/``; a rerun with the same
options reuses it, so a killed command resumes where it stopped. Options apply to every run;
``--set BENCHMARK.option=value`` changes one for one benchmark (the paper trains MathQA's stage 2
at 5e-8, GSM8K's at 5e-7: appendix A.1), and ``--set BENCHMARK.preset=NAME`` gives one benchmark a
preset's values (``--set gsm8k.preset=a1-gsm8k --set mathqa.preset=a1-mathqa``).
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import dataclasses
import json
import re
import sys
import typing
import warnings
from pathlib import Path
from typing import Any

from studyapp.pipelines.ttra.config import TTRAOptions, _field_type, add_options, options_from_args
from studyapp.pipelines.ttra.presets import preset
from studyapp.pipelines.ttra.rank_figures import draw
from studyapp.pipelines.ttra.tasks import load_tasks
from studyapp.pipelines.ttra.timing import METHODS, SFT

COST_COLUMNS = (
    "model",
    "benchmark",
    "direct_wall_s",
    "direct_gpu_s",
    "sft_wall_s",
    "sft_gpu_s",
    "sft_training_wall_s",
    "sft_relative_cost",
    "one_shot_wall_s",
    "ttrl_wall_s",
    "aligned_eval_wall_s",
    "ttra_wall_s",
    "ttra_gpu_s",
    "relative_cost",
)


class HarmonizeError(ValueError):
    """A command line that cannot run: the message says which argument is wrong."""


def slug(text: str) -> str:
    """A folder name for a model spec or path: ``org/Model-1.5B`` → ``org_Model-1.5B``."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text.strip("/")).strip("_") or "model"


def parse_benchmarks(values: list[str]) -> dict[str, Path]:
    """``NAME=FILE`` pairs, exactly two, with distinct names and existing files."""
    found: dict[str, Path] = {}
    for value in values:
        name, sep, path = value.partition("=")
        if not sep or not name or not path:
            raise HarmonizeError(f"--benchmark takes NAME=FILE, not {value!r}")
        if name in found:
            raise HarmonizeError(f"benchmark {name!r} given twice")
        if not Path(path).is_file():
            raise HarmonizeError(f"benchmark {name!r}: no file {path}")
        found[name] = Path(path)
    if len(found) != 2:
        raise HarmonizeError(f"give exactly two --benchmark NAME=FILE, not {len(found)}")
    return found


def parse_overrides(values: list[str], benchmarks: dict[str, Path]) -> dict[str, dict[str, Any]]:
    """``BENCHMARK.option=value`` settings, converted to the option's type and checked."""
    hints = typing.get_type_hints(TTRAOptions)
    names = {f.name for f in dataclasses.fields(TTRAOptions)}
    out: dict[str, dict[str, Any]] = {name: {} for name in benchmarks}
    for value in values:
        target, sep, raw = value.partition("=")
        bench, dot, option = target.partition(".")
        option = option.replace("-", "_")
        if not sep or not dot:
            raise HarmonizeError(f"--set takes BENCHMARK.option=value, not {value!r}")
        if bench not in benchmarks:
            raise HarmonizeError(f"--set {value!r}: no benchmark named {bench!r}")
        if option not in names or option == "model":
            raise HarmonizeError(f"--set {value!r}: no option named {option!r}")
        kind = _field_type(hints[option])
        try:
            if kind is bool:
                if raw.lower() not in ("true", "false", "1", "0"):
                    raise ValueError(raw)
                converted: Any = raw.lower() in ("true", "1")
            else:
                converted = kind(raw)
        except ValueError:
            raise HarmonizeError(f"--set {value!r}: {raw!r} is not a {kind.__name__}") from None
        out[bench][option] = converted
    return out


def benchmark_options(
    base: TTRAOptions,
    model: str,
    overrides: dict[str, Any],
    explicit: frozenset[str] = frozenset(),
) -> TTRAOptions:
    """One benchmark's options: the command line's, where its ``--set BENCH.preset=NAME`` (e.g.
    a1-gsm8k for one benchmark, a1-mathqa for the other) gives values for the options not in
    ``explicit`` (the flags given), then its other ``--set`` values.

    The experiment is ttra, or sft with TTRA beside it (``sft_with_ttra``) where the benchmark has
    SFT data, so every run has the scores the ranking needs and SFT's cost where there is one. A
    preset of the SFT baseline (sft-a2, sft-s6.2) without SFT data is refused."""
    values = dict(overrides)
    name = values.pop("preset", None)
    if name:
        kept = {k: v for k, v in preset(name).values.items() if k not in explicit}
        values = kept | {"preset": name} | values
    sft_data = values.get("sft_data", base.sft_data)
    if values.get("experiment") == "sft" and not sft_data:
        raise HarmonizeError(
            f"preset {name} runs the SFT baseline: give its data (--sft-data FILE, or "
            "--set BENCHMARK.sft_data=FILE)"
        )
    experiment = (
        {"experiment": "sft", "sft_with_ttra": True} if sft_data else {"experiment": "ttra"}
    )
    return dataclasses.replace(base, **(values | {"model": model} | experiment))


def _comparable(options: dict[str, Any]) -> dict[str, Any]:
    """The options that change a run's numbers (not how it reports progress)."""
    return {k: v for k, v in options.items() if k not in ("progress_bars", "report_to")}


def run_one(
    options: TTRAOptions, task_file: Path, out: Path, progress: Any = None
) -> tuple[dict, bool]:
    """One model on one benchmark; reuses ``out/results.json`` made with the same options.

    Returns the results and whether they were reused.
    """
    from studyapp.pipelines.ttra.evaluate import run_experiment  # torch: only when a run starts

    saved = out / "results.json"
    if saved.is_file():
        previous = json.loads(saved.read_text(encoding="utf-8"))
        if _comparable(previous.get("options", {})) == _comparable(options.to_dict()):
            return previous, True
    return run_experiment(options, load_tasks(task_file), out, progress), False


def stage_seconds(results: dict, stage: str, key: str = "wall_s") -> float:
    return sum(float(t[key]) for t in results.get("times", []) if t["stage"] == stage)


SFT_METHOD = next(method for method, stages in METHODS if SFT in stages)  # table 1's middle row


def _rounded(value: Any, digits: int) -> float | None:
    return None if value is None else round(float(value), digits)


def cost_row(model: str, benchmark: str, results: dict) -> dict[str, Any]:
    """One model on one benchmark: direct evaluation, SFT where the run's ``cost_table`` has its
    row (empty otherwise), and TTRA by stage, each in seconds, with the relative costs."""
    cost = results["cost"]
    sft = next((row for row in results.get("cost_table", []) if row["method"] == SFT_METHOD), {})
    return {
        "model": model,
        "benchmark": benchmark,
        "direct_wall_s": round(cost["direct_wall_s"], 3),
        "direct_gpu_s": round(cost["direct_gpu_s"], 3),
        "sft_wall_s": _rounded(sft.get("wall_s"), 3),
        "sft_gpu_s": _rounded(sft.get("gpu_s"), 3),
        "sft_training_wall_s": _rounded(sft.get("training_wall_s"), 3),
        "sft_relative_cost": _rounded(sft.get("relative"), 2),
        "one_shot_wall_s": round(stage_seconds(results, "one-shot"), 3),
        "ttrl_wall_s": round(stage_seconds(results, "ttrl"), 3),
        "aligned_eval_wall_s": round(stage_seconds(results, "aligned-eval"), 3),
        "ttra_wall_s": round(cost["ttra_wall_s"], 3),
        "ttra_gpu_s": round(cost["ttra_gpu_s"], 3),
        "relative_cost": None if cost["relative"] is None else round(cost["relative"], 2),
    }


def rank_correlation(first: list[float], second: list[float]) -> dict[str, float | None]:
    """Kendall's τ (τ-b, ties allowed) and Spearman's ρ between two score lists, with p-values.

    >>> rank_correlation([0.1, 0.2, 0.3], [0.5, 0.6, 0.9])["kendall_tau"]
    1.0
    >>> rank_correlation([0.1, 0.2, 0.3], [0.9, 0.6, 0.5])["kendall_tau"]
    -1.0
    """
    from scipy.stats import kendalltau, spearmanr

    if len(first) < 2:
        return {"kendall_tau": None, "kendall_p": None, "spearman_rho": None, "spearman_p": None}
    with warnings.catch_warnings():  # a constant list: undefined, reported as None below
        warnings.simplefilter("ignore")
        tau = kendalltau(first, second)
        rho = spearmanr(first, second)

    def number(x: float) -> float | None:
        return None if x != x else float(x)  # NaN (a constant list) → None

    return {
        "kendall_tau": number(tau.statistic),
        "kendall_p": number(tau.pvalue),
        "spearman_rho": number(rho.statistic),
        "spearman_p": number(rho.pvalue),
    }


def ranking(models: list[str], names: list[str], runs: dict[tuple[str, str], dict]) -> dict:
    """Each model's avg@k on both benchmarks, direct and aligned, and the correlations."""
    scores = {
        model: {
            bench: {
                "direct": runs[model, bench]["direct"]["avg_at_k"],
                "ttra": runs[model, bench]["aligned"]["avg_at_k"],
            }
            for bench in names
        }
        for model in models
    }
    a, b = names
    result: dict[str, Any] = {"benchmarks": names, "models": models, "scores": scores}
    for when in ("direct", "ttra"):
        result[when] = rank_correlation(
            [scores[m][a][when] for m in models], [scores[m][b][when] for m in models]
        )
    return result


def _cell(value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


def markdown_table(columns: tuple[str, ...] | list[str], rows: list[dict[str, Any]]) -> str:
    lines = ["| " + " | ".join(columns) + " |", "|" + " --- |" * len(columns)]
    lines += ["| " + " | ".join(_cell(row[c]) for c in columns) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def ranking_markdown(result: dict) -> str:
    a, b = result["benchmarks"]
    columns = ["model", f"{a} direct", f"{b} direct", f"{a} TTRA", f"{b} TTRA"]
    rows = [
        {
            "model": model,
            f"{a} direct": s[a]["direct"],
            f"{b} direct": s[b]["direct"],
            f"{a} TTRA": s[a]["ttra"],
            f"{b} TTRA": s[b]["ttra"],
        }
        for model, s in result["scores"].items()
    ]
    corr = [
        {"evaluation": when, **{k: result[when][k] for k in result[when]}}
        for when in ("direct", "ttra")
    ]
    return (
        f"Scores (avg@k) of {len(rows)} models on {a} and {b}\n\n"
        + markdown_table(columns, rows)
        + f"\nRank correlation between the {a} and {b} rankings\n\n"
        + markdown_table(
            ["evaluation", "kendall_tau", "kendall_p", "spearman_rho", "spearman_p"], corr
        )
    )


def write_outputs(out: Path, rows: list[dict[str, Any]], result: dict) -> None:
    with (out / "cost.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=COST_COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    (out / "cost.md").write_text(
        "Direct evaluation, SFT (where the benchmark has SFT data) and TTRA: seconds per stage "
        "and the relative costs (GPU-seconds when on GPUs, else wall time)\n\n"
        + markdown_table(COST_COLUMNS, rows),
        encoding="utf-8",
    )
    (out / "ranking.json").write_text(json.dumps(result, indent=2), encoding="utf-8")
    (out / "ranking.md").write_text(ranking_markdown(result), encoding="utf-8")


LABEL_COLUMNS = (
    "model",
    "benchmark",
    "evaluation",
    "label",
    "questions",
    "avg_at_k",
    "majority_accuracy",
)


def label_rows(model: str, benchmark: str, results: dict) -> list[dict[str, Any]]:
    """Accuracy per label, then the macro average (label ``(macro)``), direct and after TTRA, for
    a run of choice or word tasks (`evaluate.per_label`); none for math."""
    rows = []
    for evaluation, key in (("direct", "direct"), ("ttra", "aligned")):
        found = (results.get(key) or {}).get("per_label")
        if not found:
            continue
        for label, figures in found["labels"].items():
            rows.append(
                {"model": model, "benchmark": benchmark, "evaluation": evaluation, "label": label}
                | figures
            )
        rows.append(
            {
                "model": model,
                "benchmark": benchmark,
                "evaluation": evaluation,
                "label": "(macro)",
                "questions": found["questions"],
                "avg_at_k": found["macro_avg_at_k"],
                "majority_accuracy": found["macro_majority_accuracy"],
            }
        )
    return rows


def write_label_tables(out: Path, rows: list[dict[str, Any]]) -> None:
    """``per_label.csv`` / ``per_label.md``: accuracy per label and macro accuracy (appendix C's
    figure) of every model on every categorical benchmark, direct and after TTRA."""
    with (out / "per_label.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=LABEL_COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    (out / "per_label.md").write_text(
        "Accuracy (avg@k, majority vote) per label and their macro average, for the choice and "
        "word benchmarks\n\n" + markdown_table(LABEL_COLUMNS, rows),
        encoding="utf-8",
    )


def _main_process() -> bool:
    try:
        from accelerate import PartialState
    except ImportError:
        return True
    return PartialState().is_main_process


def harmonize(
    models: list[str],
    benchmarks: dict[str, Path],
    base: TTRAOptions,
    out: Path,
    overrides: dict[str, dict[str, Any]] | None = None,
    *,
    progress: Any = None,
    say: Any = None,
    explicit: frozenset[str] = frozenset(),
) -> dict:
    """Run every model on both benchmarks (reusing finished runs) and write the tables and the
    rank figures."""
    if len(models) < 2:
        raise HarmonizeError("give at least two --model to rank")
    if len({slug(m) for m in models}) != len(models):
        raise HarmonizeError("two --model values share one folder name; give distinct models")
    overrides = overrides or {}
    out.mkdir(parents=True, exist_ok=True)
    runs: dict[tuple[str, str], dict] = {}
    rows = []
    labels: list[dict[str, Any]] = []
    for model in models:
        for bench, task_file in benchmarks.items():
            options = benchmark_options(base, model, overrides.get(bench, {}), explicit)
            results, reused = run_one(
                options, task_file, out / "runs" / slug(model) / bench, progress
            )
            if say is not None:
                state = "reused" if reused else "done"
                say(
                    f"{model} on {bench}: {state}, avg@k {results['direct']['avg_at_k']:.3f} → "
                    f"{results['aligned']['avg_at_k']:.3f}"
                )
            runs[model, bench] = results
            rows.append(cost_row(model, bench, results))
            labels.extend(label_rows(model, bench, results))
    result = ranking(models, list(benchmarks), runs)
    figures: list[str] = []
    if _main_process():  # under accelerate launch, one process writes the tables and figures
        write_outputs(out, rows, result)
        write_label_tables(out, labels)
        figures = [str(path) for path in draw(result, out)]
    return {"cost": rows, "ranking": result, "per_label": labels, "figures": figures}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m studyapp.pipelines.ttra.harmonize",
        description="Direct evaluation and TTRA for several models on two benchmarks: the "
        "relative-cost table and the rank correlation of the benchmarks before and after TTRA.",
    )
    parser.add_argument(
        "--benchmark",
        action="append",
        default=[],
        metavar="NAME=FILE",
        help="A benchmark's task JSONL; give two.",
    )
    parser.add_argument("--out", required=True, help="Output directory (runs are resumed).")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="BENCHMARK.option=value",
        help="An option for one benchmark only, e.g. mathqa.ttrl_learning_rate=5e-8.",
    )
    parser.add_argument("--quiet", action="store_true", help="No progress bars or progress lines.")
    parser.add_argument(
        "--model",
        action="append",
        required=True,
        help="A model to rank (a local directory or a cached hub id); repeat it.",
    )
    add_options(parser, exclude=("model", "experiment"))
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["figures"]:  # the paper's other figures and table 2, from a folder of runs
        from studyapp.pipelines.ttra.paper_figures import main as figures

        return figures(argv[1:])
    args = build_parser().parse_args(argv)
    models = args.model
    args.model, args.experiment = models[0], "ttra"
    if args.quiet:
        args.progress_bars = False
    try:
        base = options_from_args(args)
        benchmarks = parse_benchmarks(args.benchmark)
        overrides = parse_overrides(args.set, benchmarks)
        explicit = frozenset(vars(args)) - {"model", "experiment"}  # flags given (SUPPRESS)
        for values in overrides.values():
            benchmark_options(base, base.model, values, explicit)  # checks values, preset names
        say = None if args.quiet else (lambda line: print(line, file=sys.stderr, flush=True))
        if args.quiet:
            from studyapp.pipelines.ttra.train import silence_library_bars

            silence_library_bars()
        with contextlib.redirect_stdout(sys.stderr):  # library log lines; stdout is the result
            summary = harmonize(
                models, benchmarks, base, Path(args.out), overrides, say=say, explicit=explicit
            )
    except (HarmonizeError, ValueError, OSError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    if _main_process():
        ranking_only = {k: summary["ranking"][k] for k in ("direct", "ttra")}
        print(json.dumps({"ranking": ranking_only}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
