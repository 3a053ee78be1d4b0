"""``python -m analysis reproduce-figure4``: figure 4 of the test-time learning paper (people's
cumulative reward on Twenty Questions, split into a steady and a variable group by the variance
of their rewards across rounds, with the perfect-binary-questioning line, about 0.321 a round)
from a study's export, optionally beside a model's games (the paper draws Claude's).

    python -m analysis reproduce-figure4 EXPORT_DIR [more EXPORT_DIR or results.jsonl] --out DIR

EXPORT_DIR is a folder ``export_study`` wrote (its games frame); a ``.jsonl`` argument is an
experiment's records (the model arm, e.g. Claude's cumulative run). Writes ``figure4.png/.svg/
.pdf`` with the data drawn in ``figure4.csv`` (the same figure the study report draws,
:func:`analysis.report.study_figure`), ``figure4_people.csv`` (each person's rounds, final R,
variance and group) and ``figure4.md``, which names the split, the reference value and what was
left out. Fewer than four people with three rounds each cannot be split: one panel, and a note.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

from analysis import frames, metrics
from analysis.export import read_frames
from analysis.plots import save_figure
from analysis.report import study_figure, voided_games, voided_text
from analysis.safe_frames import safe_frame
from analysis.summary import summarize

GAME = "twenty-questions"


def add_command(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "reproduce-figure4",
        help="figure 4 of the test-time learning paper from a study's export",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("sources", nargs="+", help="export folders, or experiment JSONL files")
    parser.add_argument("--out", type=Path, required=True, help="folder to write into")
    parser.add_argument(
        "--include-all-people",
        action="store_true",
        help="count pilots and screened or withdrawn people too",
    )
    parser.set_defaults(func=run)


def load_games(sources: list[str]) -> pd.DataFrame:
    """The games frame of every source: an export folder's games, or a JSONL's records."""
    parts = []
    for source in sources:
        if Path(source, "datapackage.json").exists():
            parts.append(read_frames(source)["games"])
        else:
            parts.append(frames.games_frame(frames.read_jsonl(source)))
    return pd.concat(parts, ignore_index=True)


def write_figure4(
    games: pd.DataFrame, out: Path, include_all_people: bool = False
) -> tuple[list[Path], str]:
    """Figure 4, its data, the people's table and its notes; the paths and the notes' text."""
    summary = summarize(games, include_all_people=include_all_people)
    made = study_figure(summary, GAME)
    if made is None:
        raise ValueError("no Twenty Questions games of people or models to draw")
    out.mkdir(parents=True, exist_ok=True)
    written = save_figure(made[0], out / "figure4", made[1])
    people = summary.participants[summary.participants["game"] == GAME]
    written.append(out / "figure4_people.csv")
    safe_frame(people).to_csv(written[-1], index=False)
    lines = ["# Figure 4: people's cumulative reward on Twenty Questions"]
    if len(people) and (people["group"] != "").all():
        steady = people[people["group"] == "steady"]
        lines.append(
            f"{len(people)} people split by the variance of their reward across rounds: "
            f"{len(steady)} steady (lower variance, the upper panel), {len(people) - len(steady)} "
            "variable (the lower panel)."
        )
    elif len(people):
        lines.append(
            f"{len(people)} people, one panel: a split by variance needs at least four people with "
            "three rounds or more each, whose variances differ."
        )
    else:
        lines.append("No person's games in the sources: the model arm only.")
    if summary.reference is not None:
        lines.append(
            f"Reference line: {metrics.REFERENCE_LABEL}, {summary.reference:.3f} a round "
            "(the paper's black dotted line)."
        )
    if summary.people_left_out:
        lines.append(f"Left out: {metrics.left_out_text(summary.people_left_out)}.")
    if voided := voided_games(games):
        lines.append(voided_text(voided, len(games)))
    lines += [f"Not drawn together: {problem}" for problem in summary.problems]
    text = "\n\n".join(lines) + "\n"
    written.append(out / "figure4.md")
    written[-1].write_text(text, encoding="utf-8")
    return written, text


def run(args: argparse.Namespace) -> int:
    try:
        games = load_games(args.sources)
        written, text = write_figure4(games, args.out, args.include_all_people)
    except (OSError, ValueError, frames.RecordError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    for path in written:
        print(path)
    print(text, end="")
    return 0
