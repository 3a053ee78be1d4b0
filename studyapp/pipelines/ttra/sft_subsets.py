"""Appendix A.2's SFT data: a fixed budget of 1,000 examples from each source, drawn with a seed
and recorded.

§3.2 of the TTRA paper fine-tunes Qwen2.5-Math-1.5B on 1,000 examples subsampled at random from
AM-DeepSeek-Distilled, Eurus-2-SFT and OpenThoughts-3, and on s1K-1.1 whole (it holds exactly
1,000). With each source exported as JSONL (one example a line, in any form ``--sft-data`` reads:
``{question, response}``, ``{prompt, completion}`` or ``{messages}``):

    python -m studyapp.pipelines.ttra.sft_subsets --source am=am.jsonl --source eurus=eurus.jsonl \\
        --source openthoughts=ot3.jsonl --source s1k=s1k-1.1.jsonl --size 1000 --seed 0 --out DIR

writes ``DIR/<name>.jsonl`` per source (the chosen lines, as written, in file order) and
``DIR/subsets.json``: the seed, and per source its file's sha256, its line count, the line numbers
chosen and whether it was taken whole (a source of at most ``--size`` examples is). Each source's
draw depends only on the seed and its name, so adding a source never changes another's subset.
Every written file is read back as SFT data before the command ends, so a source whose lines
``--sft-data`` cannot read is refused here.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
from pathlib import Path
from typing import Any

from games.tasks import TaskFileError


def parse_sources(values: list[str]) -> dict[str, Path]:
    """``NAME=FILE`` pairs with distinct names."""
    found: dict[str, Path] = {}
    for value in values:
        name, sep, path = value.partition("=")
        if not sep or not name.strip() or not path.strip():
            raise ValueError(f"--source takes NAME=FILE, not {value!r}")
        if name in found:
            raise ValueError(f"source {name!r} given twice")
        found[name.strip()] = Path(path.strip())
    if not found:
        raise ValueError("give at least one --source NAME=FILE")
    return found


def _lines(path: Path) -> list[tuple[int, str]]:
    with path.open(encoding="utf-8") as handle:
        return [(n, line) for n, line in enumerate(handle, start=1) if line.strip()]


def draw(name: str, path: Path, size: int, seed: int) -> tuple[list[tuple[int, str]], dict]:
    """The chosen lines of one source (in file order) and its record."""
    lines = _lines(path)
    whole = len(lines) <= size
    if whole:
        chosen = lines
    else:
        picks = random.Random(f"{seed}:{name}").sample(range(len(lines)), size)
        chosen = [lines[i] for i in sorted(picks)]
    record: dict[str, Any] = {
        "file": str(path),
        "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
        "examples": len(lines),
        "chosen": len(chosen),
        "whole": whole,
        "lines": [n for n, _ in chosen],
    }
    return chosen, record


def sample_subsets(sources: dict[str, Path], size: int, seed: int, out: Path) -> dict:
    """Draw, write and check every subset; return what subsets.json holds."""
    from studyapp.pipelines.ttra.sft import read_sft_data

    if size < 1:
        raise ValueError("--size must be at least 1")
    out.mkdir(parents=True, exist_ok=True)
    report: dict[str, Any] = {"seed": seed, "size": size, "subsets": {}}
    for name, path in sources.items():
        chosen, record = draw(name, path, size, seed)
        target = out / f"{name}.jsonl"
        target.write_text("".join(line if line.endswith("\n") else line + "\n"
                                  for _, line in chosen), encoding="utf-8")  # fmt: skip
        read_sft_data(target)  # refused here when --sft-data could not read it
        record["out"] = str(target)
        report["subsets"][name] = record
    (out / "subsets.json").write_text(json.dumps(report, indent=2), encoding="utf-8")
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m studyapp.pipelines.ttra.sft_subsets",
        description="Appendix A.2's fixed-budget SFT subsets, drawn with a seed and recorded.",
    )
    parser.add_argument("--source", action="append", default=[], metavar="NAME=FILE")
    parser.add_argument("--size", type=int, default=1000, help="Examples per subset (1000).")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    try:
        report = sample_subsets(parse_sources(args.source), args.size, args.seed, args.out)
    except (OSError, ValueError, TaskFileError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    brief = {n: {k: v for k, v in r.items() if k != "lines"} for n, r in report["subsets"].items()}
    print(json.dumps({"seed": args.seed, "size": args.size, "subsets": brief}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
