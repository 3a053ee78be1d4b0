"""A study's export, the archive a lab keeps: streamed to files, never built whole in memory.

``<out>/`` gets ``games``, ``turns`` and ``participants`` (and a study's ``questionnaire`` and
``consent_versions``, each version's text) as formula-safe CSV and as parquet (or one of them), a
Frictionless ``datapackage.json`` describing every column, a ``README.md``, and
``analysis/``: the tables and figures of :func:`analysis.report.write_report` for the same games,
the very numbers the study page shows. Tables are read in chunks
(:func:`studyapp.dashboard.records.games_and_turns`); each chunk's games and turns frames are
appended to the files and dropped, and only the games frame (one row per game) is kept for the
analysis.

With ``processes=2`` (``manage.py export_study`` on PostgreSQL) the turns, most of the work, are
read and written by a second process forked for the export: this process builds each chunk's
games and sends the keys that label its turns (player, round, ...) over a queue, the other reads
the chunk's turns from the database itself and writes them. The files are the same either way.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import queue
import shutil
import tempfile
import traceback
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
from django.db import connection, connections
from django.db.models import QuerySet
from tqdm import tqdm

from analysis.export import FORMATS, FrameWriter, readme, resource, write_datapackage
from analysis.frames import (
    GAME_COLUMNS,
    TURN_COLUMNS,
    games_frame,
    turns_frame,
    turns_from_log,
    typed,
)
from analysis.report import write_report
from studyapp.dashboard.records import (
    AGENT_TABLES,
    CHUNK,
    CONSENT_VERSION_COLUMNS,
    PARTICIPANT_COLUMNS,
    QUESTIONNAIRE_COLUMNS,
    consent_versions_frame,
    games_and_keys,
    games_and_turns,
    left_out,
    participants_frame,
    people_outside,
    questionnaire_frame,
    started,
    study_tables,
    table_chunks,
    turn_log,
)
from studyapp.participants import budget
from studyapp.participants.models import Study
from studyapp.providers import site_provenance
from studyapp.tables.models import Seat, Table

# usage.csv: what the study's models spent (studyapp.participants.spend), beside the plan.
USAGE_COLUMNS: dict[str, tuple[str, str]] = {
    "study": ("string", "study slug"),
    "model": ("string", "model spec; the row 'total' adds up every model"),
    "calls": ("Int64", "model calls made at the study's tables, pilots' included (paid too)"),
    "input_tokens": ("Int64", "input tokens of those calls"),
    "output_tokens": ("Int64", "output tokens of those calls"),
    "cost": ("string", "their cost at the study's prices, in its currency; empty without a price"),
    "currency": ("string", "the study's currency"),
    "planned_calls": ("Int64", "the plan's calls for the study's places (empty without places)"),
    "planned_cost": ("string", "the plan's cost for the study's places"),
}


def usage_frame(study: Study) -> pd.DataFrame:
    """One row per model the study called, and a total, with the plan beside each."""
    shown = budget.page_context(study)
    spent, plan = shown["spend"], shown["plan"] or {}
    rows = [
        {
            "study": study.slug,
            "model": spec,
            "calls": row.get("calls", 0),
            "input_tokens": row.get("input_tokens", 0),
            "output_tokens": row.get("output_tokens", 0),
            "cost": row.get("cost"),
            "currency": study.currency,
            "planned_calls": row.get("planned_calls"),
            "planned_cost": row.get("planned_cost"),
        }
        for spec, row in shown["spend_rows"]
    ]
    rows.append(
        {
            "study": study.slug,
            "model": "total",
            "calls": spent["calls"],
            "input_tokens": spent["input_tokens"],
            "output_tokens": spent["output_tokens"],
            "cost": spent["cost"],
            "currency": study.currency,
            "planned_calls": plan.get("calls"),
            "planned_cost": plan.get("cost"),
        }
    )
    return typed(pd.DataFrame(rows, columns=list(USAGE_COLUMNS)), USAGE_COLUMNS)


def export_study(
    study: Study,
    out: str | Path,
    formats: tuple[str, ...] = FORMATS,
    include_pilots: bool = False,
    allow_mixed: bool = False,
    processes: int = 1,
    chunk: int = CHUNK,
    progress: bool = False,
    include_all_people: bool = False,
) -> list[Path]:
    """The study's export (see the module); ``include_pilots`` keeps the pilot tables' games in
    the files (every row of such a table flagged ``pilot``), ``include_all_people`` counts pilots
    and screened people in ``analysis/``'s curves and means (by default left out, and counted)."""
    people = started(study, include_pilots)
    written = export_tables(
        study_tables(study, include_pilots),
        out,
        formats,
        experiment=study.slug,
        people=participants_frame(people),
        extra={
            "questionnaire": (questionnaire_frame(people), QUESTIONNAIRE_COLUMNS),
            "consent_versions": (
                consent_versions_frame(study, include_pilots),
                CONSENT_VERSION_COLUMNS,
            ),
            "usage": (usage_frame(study), USAGE_COLUMNS),
        },
        title=f"Study {study.slug}: {study.title}",
        name=f"study-{study.slug}",
        allow_mixed=allow_mixed,
        processes=processes,
        chunk=chunk,
        progress=progress,
        include_all_people=include_all_people,
        count_pilots=include_pilots,
        people_outside=people_outside(study, include_pilots),
        readme_note=lambda folder: _people_note(
            folder, left_out(study, include_pilots), include_pilots
        ),
    )
    return written


def _people_note(out: Path, omitted: dict[str, int], include_pilots: bool) -> str:
    """The README's section on who is in which file, with the counts of this export."""
    people = (
        pd.read_csv(out / "participants.csv", dtype=object, keep_default_na=False)
        if (out / "participants.csv").exists()
        else pd.read_parquet(out / "participants.parquet")
    )
    statuses = people["status"].value_counts().sort_index()
    lines = [
        "\n## Who is in which file\n",
        f"`participants` lists everyone who consented ({len(people)} people), whatever became "
        "of them; `status` and `reason` say how their study ended:\n",
    ]
    lines += [f"- {status}: {count}" for status, count in statuses.items()]
    lines.append("")
    left = ", ".join(f"{n} {status}" for status, n in sorted(omitted.items()))
    lines.append(
        "Not in any file: visitors who did not consent or declined (nothing of theirs is kept) "
        "and people who withdrew and asked for their data to be deleted"
        + (f" ({left})." if left else " (none here).")
    )
    lines.append(
        "Pilots (simulated participants) are included, flagged in `pilot`, and counted in the "
        "analysis (--include-pilots)."
        if include_pilots
        else "Pilots (simulated participants) are left out."
    )
    summary = out / "analysis" / "participants.csv"
    if summary.exists():
        analysed = set(pd.read_csv(summary, dtype=object, keep_default_na=False)["player"])
        apart = sorted(set(people["player"]) - analysed)
        counted = len(analysed - {""})
        lines.append(
            f"\n`analysis/participants.csv` summarises the {counted} "
            f"{'person' if counted == 1 else 'people'} counted in the analysis with at "
            "least one game played to the end by themselves (a game an agent took over, or one "
            "still being played, is not theirs to score; pilots, screened and withdrawn people are "
            "counted in `analysis/people_left_out.csv` instead); "
            + (
                f"the other {len(apart)} ({', '.join(apart[:10])}"
                f"{' ...' if len(apart) > 10 else ''}) are in `participants` only."
                if apart
                else "that is everyone in `participants`."
            )
        )
    lines.append(
        "\n`manage.py export_study SLUG --out DIR --check` checks that the files agree (every "
        "person in games and turns is in participants, games and rewards match "
        "`rounds_finished` and `total_reward`, attention checks and consent counts match).\n"
    )
    return "\n".join(lines)


def export_tables(
    tables: QuerySet[Table],
    out: str | Path,
    formats: tuple[str, ...] = FORMATS,
    experiment: str = AGENT_TABLES,
    people: pd.DataFrame | None = None,
    title: str = "Tables outside studies",
    name: str = "tables",
    allow_mixed: bool = False,
    processes: int = 1,
    chunk: int = CHUNK,
    extra: dict[str, tuple[pd.DataFrame, dict[str, tuple[str, str]]]] | None = None,
    progress: bool = False,
    readme_note: Callable[[Path], str] | None = None,
    include_all_people: bool = False,
    count_pilots: bool = False,
    people_outside: dict[str, int] | None = None,
) -> list[Path]:
    """:func:`_export_tables` into a staging folder beside ``out``, moved into place only when
    whole: a failure (a full disk, a killed process) leaves ``out`` as it was, never a 0-byte or
    partial file or a missing manifest; the staging folder is removed. ``readme_note``, given the
    written folder, returns a section appended to its README before the move. Into a new ``out`` the
    folder is renamed in one step; into an existing one each file is moved, the manifest
    (``datapackage.json``) last."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.partial-", dir=out.parent))
    try:
        written = _export_tables(
            tables,
            staging,
            formats,
            experiment,
            people,
            title,
            name,
            allow_mixed,
            processes,
            chunk,
            extra,
            progress,
            include_all_people,
            count_pilots,
            people_outside,
        )
        if readme_note is not None:
            with (staging / "README.md").open("a", encoding="utf-8") as readme_file:
                readme_file.write(readme_note(staging))
        move_into_place(staging, out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return [out / path.relative_to(staging) for path in written]


MANIFEST = "datapackage.json"


def move_into_place(staging: Path, out: Path) -> None:
    """Move a finished export from ``staging`` to ``out`` (see :func:`export_tables`)."""
    if not out.exists():
        staging.rename(out)
        return
    files = sorted(p for p in staging.rglob("*") if p.is_file())
    files.sort(key=lambda p: p.relative_to(staging).as_posix() == MANIFEST)  # manifest last
    for path in files:
        target = out / path.relative_to(staging)
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(path, target)
    shutil.rmtree(staging, ignore_errors=True)


def _export_tables(
    tables: QuerySet[Table],
    out: str | Path,
    formats: tuple[str, ...] = FORMATS,
    experiment: str = AGENT_TABLES,
    people: pd.DataFrame | None = None,
    title: str = "Tables outside studies",
    name: str = "tables",
    allow_mixed: bool = False,
    processes: int = 1,
    chunk: int = CHUNK,
    extra: dict[str, tuple[pd.DataFrame, dict[str, tuple[str, str]]]] | None = None,
    progress: bool = False,
    include_all_people: bool = False,
    count_pilots: bool = False,
    people_outside: dict[str, int] | None = None,
) -> list[Path]:
    """Stream the games and turns of ``tables`` (and ``people``, when given) to ``out``, in
    chunks of ``chunk`` tables; ``processes=2`` writes the turns in a second process (see the
    module; used only on PostgreSQL outside a transaction, where that process sees the rows).
    ``progress`` shows a bar of the tables written on stderr (the command's, not the page's)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    names = ("games", "turns") if people is None else ("games", "turns", "participants")
    writers = {frame: [FrameWriter(out, frame, fmt) for fmt in formats] for frame in names}
    empty = {"games": games_frame([]), "turns": turns_frame([]), "participants": people}
    games_parts = []
    chunks = table_chunks(tables, chunk)
    forked = processes > 1 and len(chunks) > 1 and _can_fork()
    turns_process = _TurnsProcess(chunks, out, formats) if forked else None
    bar = tqdm(
        total=sum(len(part) for part in chunks), desc="export", unit="table", disable=not progress
    )
    try:
        visitors: dict[tuple, int] = defaultdict(int)
        for part in chunks:
            if turns_process is not None:  # it reads and writes the chunk's turns itself
                games, keys = games_and_keys(part, experiment, visitors)
                turns_process.send(keys)
            else:
                games, turns = games_and_turns(part, experiment, visitors)
                for writer in writers["turns"]:
                    writer.write(turns)
                del turns
            for writer in writers["games"]:
                writer.write(games)
            games_parts.append(games)
            bar.update(len(part))
        for writer in writers.get("participants", []):
            writer.write(people)
        parts = [p for p in games_parts if len(p)]
        del games_parts
        all_games = (
            typed(pd.concat(parts, ignore_index=True), GAME_COLUMNS) if parts else empty["games"]
        )
        # pilots asked for (--include-pilots) count in the analysis too; the files keep the flag
        counted = (
            all_games.assign(pilot=False) if count_pilots and "pilot" in all_games else all_games
        )
        report = write_report(
            counted,
            out / "analysis",
            allow_mixed=allow_mixed,
            include_all_people=include_all_people,
            also_left_out=people_outside,
        )
        if turns_process is not None:
            writers["turns"] = turns_process.result()
    finally:
        bar.close()
        if turns_process is not None:
            turns_process.stop()
    docs = {"games": GAME_COLUMNS, "turns": TURN_COLUMNS, "participants": PARTICIPANT_COLUMNS}
    for frame, (data, columns) in (extra or {}).items():  # small frames, written whole
        writers[frame] = [FrameWriter(out, frame, fmt) for fmt in formats]
        for writer in writers[frame]:
            writer.write(data)
        empty[frame], docs[frame] = data, columns
    resources, written = [], []
    for frame, group in writers.items():
        for writer in group:
            writer.close(empty[frame])
            resources.append(resource(writer, docs[frame]))
            written.append(writer.path)
    # What produced the export: code, lock, packages, prompt set, and the tables' models with the
    # servers this site reaches them at; in datapackage.json and in a file of its own.
    specs = Seat.objects.filter(table__in=tables).exclude(agent_spec="")
    block = site_provenance(specs.values_list("agent_spec", flat=True).distinct())
    written.append(write_datapackage(out, resources, title, name=name, provenance=block))
    (out / "provenance.json").write_text(
        json.dumps(block, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    written.append(out / "provenance.json")
    drawn = {p.stem for p in report if p.suffix == ".png"}
    figures = sorted(p.name for p in report if p.suffix == ".csv" and p.stem in drawn)
    (out / "README.md").write_text(readme(resources, title) + _analysis_note(figures), "utf-8")
    written.append(out / "README.md")
    return written + report


def _analysis_note(figures: list[str]) -> str:
    """The README's section on ``analysis/``: the tables and the figures with their data."""
    listed = "".join(f"- `analysis/{name}`\n" for name in figures)
    return (
        "\n## analysis/\n\nThe tables and figures of the study page for the same games (PNG, SVG, "
        "PDF). Each figure's data is the CSV of the same name, in long form: panel, condition, "
        "series, kind, t, mean, low, high, n (the people or samples behind the point).\n\n" + listed
    )


def _can_fork() -> bool:
    """A forked process opens its own connection: it sees committed rows only, so not inside a
    transaction (a test's), and not an in-memory SQLite database."""
    return (
        connection.vendor == "postgresql"
        and not connection.in_atomic_block
        and "fork" in multiprocessing.get_all_start_methods()
    )


class _TurnsProcess:
    """The second process of an export: for each chunk of ``chunks``, in order, it reads the
    chunk's turns from the database, takes the chunk's keys from :meth:`send`, and appends the
    turns frame to ``turns.<format>``; :meth:`result` hands back its closed writers."""

    def __init__(self, chunks: list[list[int]], out: Path, formats: tuple[str, ...]) -> None:
        context = multiprocessing.get_context("fork")
        self.keys: Any = context.Queue()
        self.done: Any = context.Queue()
        connections.close_all()  # each process opens its own connection
        self.process = context.Process(
            target=_write_turns, args=(chunks, out, formats, self.keys, self.done), daemon=True
        )
        self.process.start()

    def send(self, keys: pd.DataFrame) -> None:
        self.keys.put(keys)

    def result(self) -> list[FrameWriter]:
        while True:
            try:
                outcome = self.done.get(timeout=1.0)
                break
            except queue.Empty:  # still writing, unless it died
                if not self.process.is_alive():
                    raise RuntimeError(
                        f"the export's turns process stopped (exit code {self.process.exitcode})"
                    ) from None
        if isinstance(outcome, str):
            raise RuntimeError(f"the export's turns process failed:\n{outcome}")
        return outcome

    def stop(self) -> None:
        if self.process.is_alive():
            self.process.terminate()
        self.process.join()
        self.keys.close()
        self.done.close()


def _next(keys: Any) -> pd.DataFrame:
    """The next chunk's keys; if the exporting process is gone, this one stops too."""
    while True:
        try:
            return keys.get(timeout=5.0)
        except queue.Empty:
            parent = multiprocessing.parent_process()
            if parent is not None and not parent.is_alive():
                raise


def _write_turns(
    chunks: list[list[int]], out: Path, formats: tuple[str, ...], keys: Any, done: Any
) -> None:
    """The turns process's work (:class:`_TurnsProcess`); a failure goes back as its traceback."""
    try:
        writers = [FrameWriter(out, "turns", fmt) for fmt in formats]
        for part in chunks:
            log = turn_log(part)
            turns = turns_from_log(_next(keys), log)
            del log
            for writer in writers:
                writer.write(turns)
            del turns
        for writer in writers:
            writer.close(turns_frame([]))
        done.put(writers)
    except BaseException:
        done.put(traceback.format_exc())
    finally:
        connections.close_all()
