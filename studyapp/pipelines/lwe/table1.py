"""Table 1 of the LWE paper in one command: every method on both benchmarks, with the cost column.

``python -m studyapp.pipelines.lwe.table1 --model openai:gpt-4.1 --benchmark VL=FILE
--benchmark MM=FILE --out DIR`` judges each benchmark with every method (vanilla first: it is the
cost unit), over three random orders for the order-sensitive ones, and writes

- ``DIR/table1.csv``: one row per method, accuracy / consistency / pair accuracy per benchmark
  (means; standard deviations over the orders beside them) and the relative inference cost
  (characters in and out over vanilla's), macro-averaged over the benchmarks as in the paper;
- ``DIR/table1.md``: the same in the paper's layout;
- ``DIR/runs/<benchmark>/<method>.json``: every pass with its per-case verdicts.

A finished method is not run again (delete its JSON to redo it); model calls go through a response
cache in ``DIR/cache.sqlite``, so a rerun after a crash pays only for what was not answered.
Benchmarks load from their published layouts (`data.load_cases`). Each case is shown in one
seeded random ordering of its two responses (§4.3; ``--response-order file`` keeps the file's),
recorded in every run and never mixed with another in one folder; ``--dry-run`` prints the
resolved options and calls nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import json
import os
import sys
from pathlib import Path
from typing import Any

from games.llm.cache import ResponseCache
from games.llm.providers import closing, config_from_env, get_provider
from studyapp.pipelines.lwe.algorithm import LweOptions
from studyapp.pipelines.lwe.benchmark_args import (
    DEFAULT_TEXTGRAD_SPLIT,
    TableError,
    add_benchmark_arguments,
    load_benchmarks,
    named_values,
    subset_sizes,
    textgrad_splits,
)
from studyapp.pipelines.lwe.data import (
    DEFAULT_RESPONSE_ORDER,
    RESPONSE_ORDERS,
    DatasetError,
    PairCase,
    orient,
)
from studyapp.pipelines.lwe.evaluate import cut_replies, cut_replies_note, evaluate
from studyapp.pipelines.lwe.judging import PromptDirError
from studyapp.pipelines.lwe.llm import Provider

# Table 1's rows, in the paper's order.
METHOD_ORDER = (
    "vanilla",
    "cot",
    "majority",
    "textgrad",
    "dynamic-cheatsheet",
    "sample-specific",
    "lwe",
    "selective-lwe",
)
FIGURES = ("accuracy", "consistency", "pair_accuracy")


async def run_table(
    provider: Provider,
    benchmarks: dict[str, list[PairCase]],
    out: Path,
    *,
    methods: tuple[str, ...] = METHOD_ORDER,
    orders: int = 3,
    seed: int = 0,
    options: LweOptions | None = None,
    textgrad_split: dict[str, tuple[int, int]] | None = None,
    labelled_pools: dict[str, list[PairCase]] | None = None,
    dc_orders: int = 1,
    say: Any = None,
    response_order: str = DEFAULT_RESPONSE_ORDER,
    response_seed: int = 0,
    model: str | None = None,
) -> list[dict[str, Any]]:
    """Every method on every benchmark (finished ones reused), then the table's rows. Each case
    is shown in ``response_order`` (the paper's: one seeded random ordering of its responses)."""
    textgrad_split = textgrad_split or {}
    wanted_order = {"order": response_order, "seed": response_seed}
    for bench in benchmarks:  # refuse a mismatched folder before any call is made
        for method in ("vanilla", *methods):
            path = out / "runs" / bench / f"{method}.json"
            if path.is_file():
                check_response_order(path, json.loads(path.read_text("utf-8")), wanted_order)
    results: dict[tuple[str, str], dict[str, Any]] = {}
    for bench, cases in benchmarks.items():
        folder = out / "runs" / bench
        folder.mkdir(parents=True, exist_ok=True)
        wanted = ("vanilla", *[m for m in methods if m != "vanilla"])
        vanilla_chars = None
        for method in wanted:
            saved = folder / f"{method}.json"
            if saved.is_file():
                result = json.loads(saved.read_text(encoding="utf-8"))
                check_response_order(saved, result, wanted_order)
                state = "reused"
            else:
                train, validation = textgrad_split.get(bench, DEFAULT_TEXTGRAD_SPLIT)
                result = await evaluate(
                    method,
                    cases,
                    provider,
                    orders=orders,
                    seed=seed,
                    options=options,
                    vanilla_chars=vanilla_chars,
                    textgrad_train=train,
                    textgrad_validation=validation,
                    labelled_pool=(labelled_pools or {}).get(bench),
                    dc_orders=dc_orders,
                    response_order=response_order,
                    response_seed=response_seed,
                )
                result["model"] = model  # the judge, for the per-order tables (lwe.orders)
                saved.write_text(json.dumps(result, indent=2), encoding="utf-8")
                state = "done"
            if method == "vanilla":
                vanilla_chars = result["vanilla_chars"]
            results[bench, method] = result
            if say is not None:
                acc = result["summary"]["accuracy"]["mean"]
                say(f"{bench} {method}: {state}, accuracy {acc:.3f}")
    rows = table_rows(results, list(benchmarks), [m for m in METHOD_ORDER if m in methods])
    notes = [ordering_note(wanted_order)]
    for (bench, method), result in results.items():
        cut = result.get("cut_replies") or cut_replies(result["runs"])
        if cut:
            notes.append(f"{bench} {method}: {cut_replies_note(cut)}.")
    write_table(out, rows, list(benchmarks), "\n\n".join(notes))
    return rows


def saved_order(result: dict[str, Any]) -> dict[str, Any]:
    """The response ordering a saved run was judged in (a run saved before it was recorded: the
    file's order)."""
    shown = result.get("response_order") or {"order": "file", "seed": None}
    return {"order": shown["order"], "seed": shown.get("seed")}


def check_response_order(path: Path, result: dict[str, Any], wanted: dict[str, Any]) -> None:
    """Refuse to reuse a run judged in another response ordering (its Accuracy would not be
    comparable with the new runs' in the same table)."""
    had = saved_order(result)
    want = {
        "order": wanted["order"],
        "seed": wanted["seed"] if wanted["order"] == "random" else None,
    }
    if had != want:
        raise TableError(
            f"{path} was judged with response order {had['order']}"
            + (f" (seed {had['seed']})" if had["seed"] is not None else "")
            + f", not {want['order']}"
            + (f" (seed {want['seed']})" if want["seed"] is not None else "")
            + ": pass the same --response-order/--response-seed, or use a new --out"
        )


def ordering_note(wanted: dict[str, Any]) -> str:
    if wanted["order"] == "random":
        return (
            "Accuracy on one random ordering of each case's two responses (seed "
            f"{wanted['seed']}, --response-seed); consistency and pair accuracy judge both orders."
        )
    return (
        "Accuracy in the benchmark file's response order (--response-order file); the paper "
        "measures it on one random ordering."
    )


def table_rows(
    results: dict[tuple[str, str], dict[str, Any]], benches: list[str], methods: list[str]
) -> list[dict[str, Any]]:
    rows = []
    for method in methods:
        row: dict[str, Any] = {"method": method}
        costs = []
        for bench in benches:
            summary = results[bench, method]["summary"]
            for figure in FIGURES:
                row[f"{bench}_{figure}"] = summary[figure]["mean"]
                row[f"{bench}_{figure}_std"] = summary[figure]["std"]
            row[f"{bench}_cases"] = results[bench, method]["cases"]
            cost = summary["relative_cost"]["mean"]
            row[f"{bench}_relative_cost"] = cost
            if cost is not None:
                costs.append(cost)
        row["relative_cost"] = sum(costs) / len(costs) if len(costs) == len(benches) else None
        rows.append(row)
    return rows


def write_table(out: Path, rows: list[dict[str, Any]], benches: list[str], note: str = "") -> None:
    columns = ["method"]
    for bench in benches:
        columns += [f"{bench}_{f}" for f in FIGURES] + [f"{bench}_{f}_std" for f in FIGURES]
        columns += [f"{bench}_cases", f"{bench}_relative_cost"]
    columns.append("relative_cost")
    with (out / "table1.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)

    def cell(row: dict[str, Any], bench: str, figure: str) -> str:
        mean, std = row[f"{bench}_{figure}"], row[f"{bench}_{figure}_std"]
        if mean is None:
            return "–"
        return f"{mean:.3f}" + (f" ± {std:.3f}" if std else "")

    head = ["Method"]
    for bench in benches:
        head += [f"{bench} Acc.", f"{bench} Cons.", f"{bench} PairAcc."]
    head.append("Relative Inference Cost")
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for row in rows:
        cells = [row["method"]]
        for bench in benches:
            cells += [cell(row, bench, f) for f in FIGURES]
        cost = row["relative_cost"]
        cells.append("–" if cost is None else f"{cost:.1f}×")
        lines.append("| " + " | ".join(cells) + " |")
    if note:
        lines.append(f"\n{note}")
    (out / "table1.md").write_text("\n".join(lines) + "\n", encoding="utf-8")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m studyapp.pipelines.lwe.table1",
        description="Table 1 of the LWE paper: every method on both benchmarks, cost included.",
    )
    parser.add_argument("--model", required=True, help="Judge model spec, e.g. openai:gpt-4.1.")
    add_benchmark_arguments(parser)
    parser.add_argument("--out", required=True, help="Output directory (finished runs reused).")
    parser.add_argument(
        "--methods",
        nargs="+",
        default=list(METHOD_ORDER),
        choices=METHOD_ORDER,
        help="Methods to run (default: all of table 1).",
    )
    parser.add_argument("--orders", type=int, default=3, help="Random orders (paper: 3).")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--batch-size", type=int, default=4, help="LWE's b (paper: 4).")
    parser.add_argument(
        "--textgrad-split",
        action="append",
        default=[],
        metavar="NAME=TRAIN,VALIDATION",
        help="TextGrad*'s labelled cases per benchmark (default the paper's: VL 10,10, MM 20,20; "
        "any other name 10,10).",
    )
    parser.add_argument(
        "--dc-orders",
        type=int,
        default=1,
        help="Dynamic Cheatsheet's orders (paper: 1, LWE's run0; up to --orders).",
    )
    parser.add_argument(
        "--selective-swap",
        choices=("vanilla", "lwe"),
        default="vanilla",
        help="Selective LWE, swapped verdict of an inconsistent case: vanilla (as published: the "
        "vanilla pass's) or lwe (the project's variant: re-judged with LWE).",
    )
    add_lwe_arguments(parser)
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="Print the resolved options, the cases and the runs still to do; call nothing.",
    )
    parser.add_argument("--quiet", action="store_true", help="No progress lines.")
    return parser


def add_lwe_arguments(parser: argparse.ArgumentParser) -> None:
    """``--response-order``, ``--response-seed``, ``--min-keep-ratio`` and the output limits."""
    parser.add_argument(
        "--response-order",
        choices=RESPONSE_ORDERS,
        default=DEFAULT_RESPONSE_ORDER,
        help="How each case's two responses are shown: random (the paper's §4.3: one seeded "
        "random ordering per case, which Accuracy reads) or file (the benchmark's order).",
    )
    parser.add_argument(
        "--response-seed",
        type=int,
        default=0,
        help="Seed of the random response ordering (recorded in every run's JSON).",
    )
    parser.add_argument(
        "--min-keep-ratio",
        type=float,
        default=0.0,
        help="LWE: discard a refined meta-prompt shorter than this share of the current one "
        "(not in the paper's Algorithm 1; default 0, off; earlier versions used 0.25).",
    )
    add_output_limit_arguments(parser)


def add_output_limit_arguments(parser: argparse.ArgumentParser) -> None:
    """``--refine-tokens`` and ``--summary-tokens``: LWE's output limits (shared with the subset
    analyses)."""
    parser.add_argument(
        "--refine-tokens",
        type=int,
        default=4096,
        help="LWE: output tokens a refinement gets beyond the current meta-prompt's length "
        "(default 4096; the paper gives no limit); a cut reply is counted in the run's notes.",
    )
    parser.add_argument(
        "--summary-tokens",
        type=int,
        default=4096,
        help="LWE: output tokens of the meta-prompt's summary (default 4096).",
    )


def dry_run(args: argparse.Namespace, benchmarks: dict[str, list[PairCase]]) -> str:
    """The resolved options and, per benchmark, the cases as shown and the methods still to run."""
    out = Path(args.out)
    ids = named_values(args.ids, "--ids")
    lines = [
        "lwe table1: plan (nothing is called)",
        f"model {args.model}; methods {' '.join(args.methods)}; orders {args.orders} "
        f"(seed {args.seed}); batch size {args.batch_size}; selective swap {args.selective_swap}",
        f"response order {args.response_order}"
        + (f" (seed {args.response_seed})" if args.response_order == "random" else "")
        + f"; min keep ratio {args.min_keep_ratio:g}"
        + (" (off, as Algorithm 1)" if args.min_keep_ratio == 0 else ""),
        "cases: "
        + "; ".join(
            f"{name} "
            + (
                "--ids"
                if name in ids
                else f"seeded subset of {size} (seed {args.subset_seed})"
                if size
                else "the whole file"
            )
            for name, size in subset_sizes(args, list(benchmarks)).items()
        )
        + "; TextGrad* train,validation "
        + ", ".join(f"{name} {t},{v}" for name, (t, v) in textgrad_splits(args).items()),
        f"output limits: refinement = meta-prompt length + {args.refine_tokens} tokens; "
        f"summary {args.summary_tokens} tokens; other calls 2048",
    ]
    for name, cases in benchmarks.items():
        _, shown = orient(cases, args.response_order, args.response_seed)
        labels = shown["labels"]
        todo = [m for m in args.methods if not (out / "runs" / name / f"{m}.json").is_file()]
        lines.append(
            f"{name}: {len(cases)} cases, {len(shown['swapped'])} shown swapped; labels A "
            f"{labels['A']}, B {labels['B']}; to run: {' '.join(todo) or 'nothing'}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        splits = textgrad_splits(args)
        benchmarks, pools = load_benchmarks(args)
        config = config_from_env(args.model, os.environ)
    except (TableError, DatasetError, PromptDirError, ValueError, OSError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    try:
        options = LweOptions(
            batch_size=args.batch_size,
            inconsistent_swap=args.selective_swap,
            min_keep_ratio=args.min_keep_ratio,
            refine_tokens=args.refine_tokens,
            summary_tokens=args.summary_tokens,
        )
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    if args.dry_run:
        print(dry_run(args, benchmarks))
        return 0
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    cache = ResponseCache(out / "cache.sqlite")
    provider = get_provider(args.model, config, cache=cache)
    say = None if args.quiet else (lambda line: print(line, file=sys.stderr, flush=True))
    try:
        rows = asyncio.run(
            closing(
                run_table(
                    provider,
                    benchmarks,
                    out,
                    methods=tuple(args.methods),
                    orders=args.orders,
                    seed=args.seed,
                    options=options,
                    textgrad_split=splits,
                    labelled_pools=pools,
                    dc_orders=args.dc_orders,
                    say=say,
                    response_order=args.response_order,
                    response_seed=args.response_seed,
                    model=args.model,
                )
            )
        )
    except TableError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    finally:
        cache.close()
    print((out / "table1.md").read_text(encoding="utf-8"), end="")
    return 0 if rows else 1


if __name__ == "__main__":
    sys.exit(main())
