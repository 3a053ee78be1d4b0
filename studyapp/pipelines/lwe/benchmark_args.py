"""The benchmarks of the LWE commands (``table1``, ``subsets``) as the command line names them:
``--benchmark NAME=FILE`` with ``--ids``, ``--image-root``, ``--limit`` and ``--prompts``, the
seeded 1,000-case subset that stands in for the paper's Multimodal RewardBench cases when no ids
are given, and TextGrad*'s labelled cases per benchmark (``--textgrad-split``)."""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

from studyapp.pipelines.lwe.data import PairCase, load_cases
from studyapp.pipelines.lwe.judging import use_prompts

# The paper's Multimodal RewardBench: 1,000 of its 4,711 cases (§4.2, appendix B); the authors
# list theirs (--ids). Without a list a benchmark of this name is cut to a seeded subset of this
# size (--subset NAME=N, --subset-seed), its other cases TextGrad*'s labelled pool.
MM = "MM"
PAPER_SUBSET = {MM: 1000}
# TextGrad*'s labelled cases (train, validation) per benchmark (appendix B: VL 10 + 10 from its
# test set; MM 20 + 20 from the cases outside the 1,000); any other name 10 + 10.
PAPER_TEXTGRAD_SPLIT = {"VL": (10, 10), MM: (20, 20)}
DEFAULT_TEXTGRAD_SPLIT = (10, 10)


class TableError(ValueError):
    """A command line that cannot run; the message names the argument."""


def named_values(values: list[str], option: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for value in values:
        name, sep, rest = value.partition("=")
        if not sep or not name or not rest:
            raise TableError(f"{option} takes NAME=VALUE, not {value!r}")
        out[name] = rest
    return out


def textgrad_splits(args: argparse.Namespace) -> dict[str, tuple[int, int]]:
    """``--textgrad-split NAME=TRAIN,VALIDATION`` over each benchmark's paper default."""
    names = list(named_values(args.benchmark, "--benchmark"))
    splits = {name: PAPER_TEXTGRAD_SPLIT.get(name, DEFAULT_TEXTGRAD_SPLIT) for name in names}
    for name, value in named_values(args.textgrad_split, "--textgrad-split").items():
        train, _, validation = value.partition(",")
        if not (train.isdigit() and validation.isdigit()):
            raise TableError(f"--textgrad-split {name}={value}: give TRAIN,VALIDATION")
        if name not in splits:
            raise TableError(f"--textgrad-split: no benchmark named {name}")
        splits[name] = (int(train), int(validation))
    return splits


def subset_sizes(args: argparse.Namespace, names: list[str]) -> dict[str, int]:
    """Per benchmark without ``--ids``: the cases to keep (0 = all), ``--subset`` over the
    paper's (:data:`PAPER_SUBSET`)."""
    sizes = {name: PAPER_SUBSET.get(name, 0) for name in names}
    for name, value in named_values(args.subset, "--subset").items():
        if name not in sizes:
            raise TableError(f"--subset: no benchmark named {name}")
        if not value.isdigit():
            raise TableError(f"--subset {name}={value}: give a number of cases (0: all)")
        sizes[name] = int(value)
    return sizes


def seeded_subset(cases: list[PairCase], size: int, seed: int) -> list[PairCase]:
    """``size`` cases drawn with ``random.Random(seed)``, in the file's order (all when
    ``size`` is 0 or the file holds no more).

    >>> [c.id for c in seeded_subset([PairCase(str(i), "", "", "", "A") for i in range(6)], 3, 0)]
    ['0', '3', '5']
    """
    if not size or size >= len(cases):
        return list(cases)
    chosen = set(random.Random(seed).sample(range(len(cases)), size))
    return [case for index, case in enumerate(cases) if index in chosen]


def load_benchmarks(
    args: argparse.Namespace,
) -> tuple[dict[str, list[PairCase]], dict[str, list[PairCase]]]:
    """The benchmarks of ``--benchmark`` (``--ids``, ``--image-root``, ``--subset``,
    ``--limit``) with the prompts of ``--prompts`` in force, and per benchmark cut to ``--ids``
    or to a seeded subset the file's other cases (TextGrad*'s labelled pool). Shared with
    ``lwe.subsets``, so both commands judge the same cases."""
    files = named_values(args.benchmark, "--benchmark")
    if not files:
        raise TableError("give at least one --benchmark NAME=FILE")
    id_files = named_values(args.ids, "--ids")
    roots = named_values(args.image_root, "--image-root")
    for option, names in (("--ids", id_files), ("--image-root", roots)):
        unknown = set(names) - set(files)
        if unknown:
            raise TableError(f"{option}: no benchmark named {', '.join(sorted(unknown))}")
    sizes = subset_sizes(args, list(files))
    use_prompts(args.prompts)
    benchmarks, pools = {}, {}
    for name, file in files.items():
        if name in id_files:
            ids = json.loads(Path(id_files[name]).read_text())
            cases = load_cases(file, image_root=roots.get(name), ids=ids)
            everything = load_cases(file, image_root=roots.get(name))
        else:
            everything = load_cases(file, image_root=roots.get(name))
            cases = seeded_subset(everything, sizes[name], args.subset_seed)
        if len(cases) < len(everything):  # TextGrad*'s labelled cases: the file's others
            kept = {case.id for case in cases}
            pools[name] = [case for case in everything if case.id not in kept]
        benchmarks[name] = cases[: args.limit] if args.limit else cases
    return benchmarks, pools


def add_benchmark_arguments(parser: argparse.ArgumentParser) -> None:
    """``--benchmark``, ``--ids``, ``--image-root``, ``--limit`` and ``--prompts``."""
    parser.add_argument(
        "--benchmark",
        action="append",
        default=[],
        metavar="NAME=FILE",
        help="A benchmark file (VL-RewardBench parquet, Multimodal RewardBench JSON/JSONL).",
    )
    parser.add_argument(
        "--ids",
        action="append",
        default=[],
        metavar="NAME=FILE",
        help="A JSON list of case ids to keep for a benchmark, in order (the paper's 1,000 "
        "Multimodal RewardBench cases).",
    )
    parser.add_argument(
        "--image-root",
        action="append",
        default=[],
        metavar="NAME=DIR",
        help="Where a benchmark's relative image paths start (default: the file's folder).",
    )
    parser.add_argument(
        "--subset",
        action="append",
        default=[],
        metavar="NAME=N",
        help="Without --ids, judge a seeded subset of N cases of a benchmark (0: the whole file); "
        "default MM=1000, the paper's share of Multimodal RewardBench; the rest are TextGrad*'s "
        "labelled cases.",
    )
    parser.add_argument(
        "--subset-seed", type=int, default=0, help="Seed of the --subset draw (default 0)."
    )
    parser.add_argument("--limit", type=int, help="Only the first N cases of each benchmark.")
    parser.add_argument(
        "--prompts",
        help="Directory of prompt files overriding the built-in ones by name (their sha256 are "
        "recorded in every run's JSON).",
    )
