"""A study's export, the archive a lab keeps: streamed to files, never built whole in memory.

``<out>/`` gets ``games``, ``turns`` and ``participants`` as formula-safe CSV and as parquet (or
one of them), a Frictionless ``datapackage.json`` describing every column, a ``README.md``, and
``analysis/``: the tables and figures of :func:`analysis.report.write_report` for the same games,
the very numbers the study page shows. Tables are read in chunks
(:func:`studyapp.dashboard.records.iter_games_and_turns`); each chunk's games and turns frames are
appended to the files and dropped, and only the games frame (one row per game) is kept for the
analysis.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from django.db.models import QuerySet

from analysis.export import FORMATS, FrameWriter, readme, resource, write_datapackage
from analysis.frames import GAME_COLUMNS, TURN_COLUMNS, games_frame, turns_frame, typed
from analysis.report import write_report
from studyapp.dashboard.records import (
    AGENT_TABLES,
    PARTICIPANT_COLUMNS,
    iter_games_and_turns,
    participants_frame,
    started,
    study_tables,
)
from studyapp.participants.models import Study
from studyapp.tables.models import Table


def export_study(
    study: Study,
    out: str | Path,
    formats: tuple[str, ...] = FORMATS,
    include_pilots: bool = False,
    allow_mixed: bool = False,
) -> list[Path]:
    return export_tables(
        study_tables(study, include_pilots),
        out,
        formats,
        experiment=study.slug,
        people=participants_frame(started(study, include_pilots)),
        title=f"Study {study.slug}: {study.title}",
        name=f"study-{study.slug}",
        allow_mixed=allow_mixed,
    )


def export_tables(
    tables: QuerySet[Table],
    out: str | Path,
    formats: tuple[str, ...] = FORMATS,
    experiment: str = AGENT_TABLES,
    people: pd.DataFrame | None = None,
    title: str = "Tables outside studies",
    name: str = "tables",
    allow_mixed: bool = False,
) -> list[Path]:
    """Stream the games and turns of ``tables`` (and ``people``, when given) to ``out``."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    names = ("games", "turns") if people is None else ("games", "turns", "participants")
    writers = {frame: [FrameWriter(out, frame, fmt) for fmt in formats] for frame in names}
    games_parts = []
    for games, turns in iter_games_and_turns(tables, experiment=experiment):
        for writer in writers["games"]:
            writer.write(games)
        for writer in writers["turns"]:
            writer.write(turns)
        games_parts.append(games)
        del turns
    for writer in writers.get("participants", []):
        writer.write(people)
    empty = {"games": games_frame([]), "turns": turns_frame([]), "participants": people}
    docs = {"games": GAME_COLUMNS, "turns": TURN_COLUMNS, "participants": PARTICIPANT_COLUMNS}
    resources, written = [], []
    for frame, group in writers.items():
        for writer in group:
            writer.close(empty[frame])
            resources.append(resource(writer, docs[frame]))
            written.append(writer.path)
    written.append(write_datapackage(out, resources, title, name=name))
    (out / "README.md").write_text(readme(resources, title), encoding="utf-8")
    written.append(out / "README.md")
    parts = [p for p in games_parts if len(p)]
    games = typed(pd.concat(parts, ignore_index=True), GAME_COLUMNS) if parts else empty["games"]
    written += write_report(games, out / "analysis", allow_mixed=allow_mixed)
    return written
