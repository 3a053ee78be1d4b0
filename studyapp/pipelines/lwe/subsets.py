"""LWE's analyses on the vanilla judge's inconsistent and consistent cases, after Table 1.

*Becoming Experienced Judges: Selective Test-Time Learning for Evaluators* (arXiv:2512.06751):

- ``figure3``: cumulative accuracy over the vanilla-inconsistent cases, in Selective LWE's first
  order (run 0), of the vanilla judge, the Sample-Specific Prompt and Selective LWE, with the
  vanilla curve's 95% binomial (Wilson) interval at each point. From Table 1's runs: no call.
- ``table3``: accuracy on the inconsistent cases (appendix I, Table 3, run 0): vanilla,
  Sample-Specific and Selective LWE from Table 1's runs, and LWE run on those cases alone.
- ``table4``: accuracy on the consistent cases (appendix I, Table 4): vanilla, and LWE run on them.
- ``figure4``: LWE against vanilla on subsets of a fixed size whose share of inconsistent cases
  is each of ``--ratios`` (0, 0.25, 0.5, 0.75, 1), drawn with the seed. The size is the number of
  vanilla-inconsistent cases of the benchmark (the paper's 248 and 137 are exactly its vanilla
  judge's inconsistent cases: 1,247 × (1 − 0.801) and 1,000 × (1 − 0.863)), so ratio 1 is every
  inconsistent case; ``--subset-size NAME=N`` sets another, and a ratio the pools cannot fill is
  reported (stderr, the dry run and ``figure4.csv``), never silently left out.
- ``figure7``: LWE on the inconsistent cases for each batch size b of ``--batch-sizes`` (1, 2, 4,
  8): accuracy, and cost (characters in and out) relative to b = 4.

    python -m studyapp.pipelines.lwe.subsets --model openai:gpt-4.1 --table1 var/table1 \\
        --benchmark VL=... --benchmark MM=... --ids MM=... --out var/subsets [--dry-run]

``--table1`` is the ``--out`` folder of ``python -m studyapp.pipelines.lwe.table1`` with at least
the vanilla, sample-specific and selective-lwe methods; which cases are inconsistent comes from
its vanilla run. New runs land under ``OUT/runs/<benchmark>/`` and are reused on a rerun, every
call is cached in ``OUT/cache.sqlite``, and ``--dry-run`` prints the calls, tokens and cost of
what is still to run, spending nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import random
import sys
from pathlib import Path
from typing import Any

from games.llm.cache import ResponseCache
from games.llm.providers import close_clients, config_from_env, get_provider
from studyapp.pipelines.lwe.algorithm import LweOptions
from studyapp.pipelines.lwe.data import DatasetError, PairCase
from studyapp.pipelines.lwe.evaluate import evaluate
from studyapp.pipelines.lwe.judging import PromptDirError
from studyapp.pipelines.lwe.subset_results import (
    SubsetError,
    saved,
    split,
    write_outputs,
)
from studyapp.pipelines.lwe.table1 import (
    TableError,
    add_benchmark_arguments,
    check_response_order,
    load_benchmarks,
    named_values,
    saved_order,
)

TARGETS = ("figure3", "table3", "table4", "figure4", "figure7")
PAPER_SUBSET_SIZE = {"VL": 248, "MM": 137}  # figure 4's totals: the paper's inconsistent cases
RATIOS = (0.0, 0.25, 0.5, 0.75, 1.0)
BATCH_SIZES = (1, 2, 4, 8)
# Dry-run sizes (docs/reproduce.md's estimate for Table 1): LWE makes about 5 calls per case plus
# one refinement per b cases, of some 1,300 input and 300 output tokens.
LWE_CALLS_PER_CASE = 5
INPUT_TOKENS, OUTPUT_TOKENS = 1300, 300


def ratio_subset(
    inconsistent: list[str], consistent: list[str], size: int, ratio: float, seed: int
) -> list[str] | None:
    """``size`` ids of which ``round(ratio * size)`` inconsistent, drawn with the seed; None when
    either pool is too small."""
    wanted = round(ratio * size)
    if wanted > len(inconsistent) or size - wanted > len(consistent):
        return None
    rng = random.Random(f"{seed}:{ratio}")
    chosen = rng.sample(inconsistent, wanted) + rng.sample(consistent, size - wanted)
    rng.shuffle(chosen)
    return chosen


def subset_size(args: argparse.Namespace, bench: str, inconsistent: list[str]) -> int:
    """Figure 4's subset size: ``--subset-size`` for the benchmark, else its inconsistent cases
    (what the paper's 248 and 137 are)."""
    return args.subset_size.get(bench) or len(inconsistent)


def unfilled(
    args: argparse.Namespace, bench: str, inconsistent: list[str], consistent: list[str]
) -> list[dict[str, Any]]:
    """Figure 4's ratios the pools cannot fill at the subset size, each with why."""
    if "figure4" not in args.targets:
        return []
    size = subset_size(args, bench, inconsistent)
    notes = []
    for ratio in args.ratios:
        if ratio_subset(inconsistent, consistent, size, ratio, args.seed) is None:
            wanted = round(ratio * size)
            notes.append(
                {"target": "figure4", "benchmark": bench, "method": "lwe", "cases": 0,
                 "ratio": ratio, "note": f"not run: {wanted} inconsistent and {size - wanted} "
                 f"consistent cases wanted, the vanilla run has {len(inconsistent)} and "
                 f"{len(consistent)}"}
            )  # fmt: skip
    return notes


def planned_runs(
    args: argparse.Namespace, bench: str, inconsistent: list[str], consistent: list[str]
) -> dict[str, tuple[list[str], int]]:
    """Name → (case ids, batch size) of every LWE run the targets need on one benchmark."""
    runs: dict[str, tuple[list[str], int]] = {}
    if {"table3", "figure7"} & set(args.targets):
        runs["lwe-inconsistent-b4"] = (inconsistent, 4)
    if "table4" in args.targets:
        runs["lwe-consistent-b4"] = (consistent, 4)
    if "figure7" in args.targets:
        for b in args.batch_sizes:
            runs[f"lwe-inconsistent-b{b}"] = (inconsistent, b)
    if "figure4" in args.targets:
        size = subset_size(args, bench, inconsistent)
        for ratio in args.ratios:
            ids = ratio_subset(inconsistent, consistent, size, ratio, args.seed)
            if ids is not None:
                runs[f"lwe-ratio{ratio:g}-n{size}"] = (ids, 4)
    return {name: spec for name, spec in runs.items() if spec[0]}


def table1_order(table1: Path, bench: str) -> dict[str, Any]:
    """The response ordering Table 1's vanilla run showed the cases in (the subsets' runs use the
    same, so a case's verdicts compare across them)."""
    return saved_order(saved(table1, bench, "vanilla"))


async def run_lwe(
    cases: list[PairCase],
    provider: Any,
    batch: int,
    seed: int,
    vanilla_chars: int,
    path: Path,
    response: dict[str, Any] | None = None,
    min_keep_ratio: float = 0.0,
) -> dict[str, Any]:
    """LWE in one order over ``cases`` (shown in ``response``'s ordering), saved to ``path``
    (reused when it is there and was judged in that ordering)."""
    response = response or {"order": "file", "seed": None}
    if path.is_file():
        result = json.loads(path.read_text(encoding="utf-8"))
        check_response_order(path, result, response)
        return result
    result = await evaluate(
        "lwe",
        cases,
        provider,
        orders=1,
        seed=seed,
        options=LweOptions(batch_size=batch, min_keep_ratio=min_keep_ratio),
        vanilla_chars=vanilla_chars,
        response_order=response["order"],
        response_seed=response["seed"] or 0,
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result, indent=2), encoding="utf-8")
    return result


def dry_run(
    args: argparse.Namespace,
    needed: dict[str, dict[str, tuple[list[str], int]]],
    notes: list[dict[str, Any]] = (),
) -> str:
    lines = ["lwe subsets: plan (estimate; nothing is spent)"]
    for bench in needed:
        shown = table1_order(args.table1, bench)
        seed = f" (seed {shown['seed']})" if shown["order"] == "random" else ""
        size = ""
        if "figure4" in args.targets:
            inconsistent, _ = split(args.table1, bench)
            size = f"; figure 4 subsets of {subset_size(args, bench, inconsistent)} cases"
        lines.append(f"{bench}: response order {shown['order']}{seed}, from Table 1{size}")
    lines.append(
        f"min keep ratio {args.min_keep_ratio:g}"
        + (" (off, as Algorithm 1)" if args.min_keep_ratio == 0 else "")
    )
    lines += [f"{n['benchmark']} figure4 ratio {n['ratio']:g}: {n['note']}" for n in notes]
    lines.append("benchmark  run                        cases  calls")
    calls = 0
    for bench, runs in needed.items():
        for name, (ids, batch) in runs.items():
            done = (args.out / "runs" / bench / f"{name}.json").is_file()
            n = 0 if done else len(ids) * LWE_CALLS_PER_CASE + math.ceil(len(ids) / batch)
            calls += n
            lines.append(f"{bench:<10} {name:<26} {len(ids):>5} {n:>6}{'  (done)' if done else ''}")
    tokens_in, tokens_out = calls * INPUT_TOKENS, calls * OUTPUT_TOKENS
    cost = "? (pass --price IN,OUT)"
    if args.price:
        low, high = args.price
        cost = f"{(tokens_in * low + tokens_out * high) / 1e6:.2f}"
    lines.append(
        f"total: {calls:,} calls, {tokens_in:,} input and {tokens_out:,} output tokens, cost ${cost}"
        " (figure3 and the Table 1 rows need no call)"
    )
    return "\n".join(lines)


def price(value: str) -> tuple[float, float]:
    try:
        low, high = (float(x) for x in value.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{value!r}: expected IN,OUT dollars per M tokens"
        ) from None
    return low, high


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m studyapp.pipelines.lwe.subsets",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--model", required=True, help="Judge model spec (Table 1's).")
    parser.add_argument("--table1", type=Path, required=True, help="Table 1's --out folder.")
    add_benchmark_arguments(parser)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--targets", nargs="+", choices=TARGETS, default=list(TARGETS))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--ratios", nargs="+", type=float, default=list(RATIOS))
    parser.add_argument("--batch-sizes", nargs="+", type=int, default=list(BATCH_SIZES))
    parser.add_argument(
        "--subset-size",
        action="append",
        default=[],
        metavar="NAME=N",
        help="figure 4's subset size per benchmark (default: the benchmark's vanilla-"
        "inconsistent cases, which were 248 on VL and 137 on MM in the paper)",
    )
    parser.add_argument(
        "--min-keep-ratio",
        type=float,
        default=0.0,
        help="LWE: discard a refined meta-prompt shorter than this share of the current one "
        "(not in Algorithm 1; default 0, off). The response ordering is Table 1's.",
    )
    parser.add_argument("--price", type=price, help="dry run: dollars per M tokens IN,OUT")
    parser.add_argument("--dry-run", action="store_true")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        args.subset_size = {
            k: int(v) for k, v in named_values(args.subset_size, "--subset-size").items()
        }
        benchmarks, _ = load_benchmarks(args)
        splits = {bench: split(args.table1, bench) for bench in benchmarks}
    except (TableError, DatasetError, PromptDirError, SubsetError, ValueError, OSError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    needed = {bench: planned_runs(args, bench, *splits[bench]) for bench in benchmarks}
    notes = [n for bench in benchmarks for n in unfilled(args, bench, *splits[bench])]
    if args.dry_run:
        print(dry_run(args, needed, notes))
        return 0
    for note in notes:
        print(f"warning: {note['benchmark']} figure4 ratio {note['ratio']:g}: {note['note']}",
              file=sys.stderr)  # fmt: skip
    args.out.mkdir(parents=True, exist_ok=True)
    try:
        lwe_runs = asyncio.run(play(args, benchmarks, needed))
    except TableError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    for path in write_outputs(args, benchmarks, splits, lwe_runs, notes):
        print(path)
    return 0


async def play(
    args: argparse.Namespace,
    benchmarks: dict[str, list[PairCase]],
    needed: dict[str, dict[str, tuple[list[str], int]]],
) -> dict[tuple[str, str], dict[str, Any]]:
    if not any(needed.values()):
        return {}
    cache = ResponseCache(args.out / "cache.sqlite")
    provider = get_provider(args.model, config_from_env(args.model, os.environ), cache=cache)
    done: dict[tuple[str, str], dict[str, Any]] = {}
    try:
        for bench, runs in needed.items():
            by_id = {case.id: case for case in benchmarks[bench]}
            vanilla_chars = saved(args.table1, bench, "vanilla")["vanilla_chars"]
            for name, (ids, batch) in runs.items():
                path = args.out / "runs" / bench / f"{name}.json"
                cases = [by_id[i] for i in ids]
                done[bench, name] = await run_lwe(
                    cases,
                    provider,
                    batch,
                    args.seed,
                    vanilla_chars,
                    path,
                    table1_order(args.table1, bench),
                    args.min_keep_ratio,
                )
    finally:
        await close_clients()
        cache.close()
    return done


if __name__ == "__main__":
    sys.exit(main())
