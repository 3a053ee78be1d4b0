"""``python -m analysis``: reports and frame exports from experiment files, without Django.

python -m analysis report results.jsonl [more.jsonl ...] --out DIR [--allow-mixed]
    [--include-all-people]
python -m analysis report EXPORT_DIR --out DIR   (a folder export_study wrote: its games frame)
python -m analysis export results.jsonl --format csv|parquet --out DIR
python -m analysis reproduce table1|table2|table3|table4|figure3 --model SPEC --out DIR [--dry-run]
python -m analysis reproduce-layout TARGET --out DIR
python -m analysis reproduce-figure4 EXPORT_DIR [results.jsonl ...] --out DIR   (the human study)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

from analysis import frames
from analysis.export import FORMATS, export_frames, read_frames
from analysis.report import write_report
from analysis.reproduce import add_commands as add_reproduce


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m analysis", description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    report = commands.add_parser("report", help="Table 2 (md, html, csv) and the figures")
    export = commands.add_parser("export", help="games and turns frames with a README")
    for command in (report, export):
        command.add_argument(
            "results", nargs="+", help="experiment JSONL files (report: or an export folder)"
        )
        command.add_argument("--out", required=True, help="folder to write into")
    export.add_argument("--format", choices=(*FORMATS, "both"), default="csv")
    report.add_argument(
        "--allow-mixed",
        action="store_true",
        help="draw people and models together even when their oracle or rules version differ",
    )
    report.add_argument(
        "--include-all-people",
        action="store_true",
        help="count pilots and screened or withdrawn people in the people's curves and means",
        dest="all_people",
    )
    add_reproduce(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if hasattr(args, "func"):  # reproduce, reproduce-layout
        return int(args.func(args) or 0)
    if args.command == "report" and all(Path(p, "datapackage.json").exists() for p in args.results):
        games = pd.concat([read_frames(p)["games"] for p in args.results], ignore_index=True)
        for path in write_report(
            games, args.out, allow_mixed=args.allow_mixed, include_all_people=args.all_people
        ):
            print(path)
        return 0
    try:
        records = [record for path in args.results for record in frames.read_jsonl(path)]
    except (OSError, frames.RecordError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    if args.command == "report":
        written = write_report(
            frames.games_frame(records), args.out, args.allow_mixed, args.all_people
        )
    else:
        written = export_frames(
            {"games": frames.games_frame(records), "turns": frames.turns_frame(records)},
            args.out,
            args.format,
            docs={"games": frames.GAME_COLUMNS, "turns": frames.TURN_COLUMNS},
            title="Experiment games and turns",
        )
    for path in written:
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
