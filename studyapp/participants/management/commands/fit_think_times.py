"""``manage.py fit_think_times SOURCE [SOURCE ...] [--pilots-only | --no-pilots] [--file FILE]
[--min-moves N]``: fit a blinded study's agent think times (``agent_think_seconds``) per kind of
move to the moves people made in a pilot or an earlier study, and write them into a study file.

Each SOURCE is a study's slug; its people's own moves are read from the log
(:mod:`studyapp.participants.think_fit` says how). ``--pilots-only`` reads only the pilot
people's moves (a study's own pilot), ``--no-pilots`` only recruited people's. With ``--file`` the
bounds are written into that study file's ``agent_think_seconds`` (the file's other keys and its
opening comment are kept; a kind with too few moves keeps the file's value), to be applied with
``manage.py study apply FILE``; without it they are printed as the key to paste. Either way a
table says, per kind, how many moves it read, their median and the bounds.
"""

from __future__ import annotations

import argparse
import tomllib
from collections import defaultdict
from pathlib import Path
from typing import Any

import tomli_w
from django.core.management.base import BaseCommand, CommandError

from studyapp.participants.models import Round, Study
from studyapp.participants.think_fit import MIN_MOVES, Fit, fit, move_seconds
from studyapp.tables import think
from studyapp.tables.models import PERSON_ACTOR, Table, Turn


class Command(BaseCommand):
    help = (
        "Fit the blinded think-time bounds per kind of move (clue, vote, question, answer) to "
        "people's recorded moves in a pilot or earlier study, and write them into a study file."
    )

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("sources", nargs="+", metavar="SOURCE", help="a study's slug")
        pilots = parser.add_mutually_exclusive_group()
        pilots.add_argument(
            "--pilots-only", action="store_true", help="read only the pilot people's moves"
        )
        pilots.add_argument(
            "--no-pilots", action="store_true", help="read only recruited people's moves"
        )
        parser.add_argument(
            "--file", help="a study file whose agent_think_seconds to set (else printed)"
        )
        parser.add_argument(
            "--min-moves",
            type=int,
            default=MIN_MOVES,
            help=f"fewest moves of a kind to fit it (default {MIN_MOVES})",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if options["min_moves"] < 2:
            raise CommandError("--min-moves must be at least 2")
        seconds: dict[str, list[float]] = defaultdict(list)
        for slug in options["sources"]:
            study = Study.objects.filter(slug=slug).first()
            if study is None:
                raise CommandError(f"no study {slug!r}")
            for kind, values in people_seconds(
                study, pilots=_pilots(options["pilots_only"], options["no_pilots"])
            ).items():
                seconds[kind].extend(values)
        fits = [fit(seconds.get(kind, []), kind, options["min_moves"]) for kind in think.MOVE_KINDS]
        missed = moves = 0
        for slug in options["sources"]:
            study_missed, study_moves = people_missed(
                Study.objects.get(slug=slug),
                pilots=_pilots(options["pilots_only"], options["no_pilots"]),
            )
            missed, moves = missed + study_missed, moves + study_moves
        share = timed_out_share(missed, moves, options["min_moves"])
        for line in report(fits):
            self.stdout.write(line)
        self.stdout.write(
            f"turns missed (moves made in turn): {missed} of {moves}"
            + (
                f" -> {think.TIMED_OUT} = {share}"
                if share is not None
                else " (too few: not fitted)"
            )
        )
        if not any(f.bounds for f in fits):
            raise CommandError(
                f"no kind of move has {options['min_moves']} people's moves in "
                f"{', '.join(options['sources'])}: nothing to fit"
            )
        if options["file"]:
            path = Path(options["file"])
            before, after = write_file(path, fits, share)
            self.stdout.write(f"{path}: agent_think_seconds {before} -> {after}")
            self.stdout.write(f"apply it with: manage.py study apply {path}")
        else:
            fitted: dict[str, Any] = {f.kind: f.bounds for f in fits if f.bounds}
            if share:
                fitted[think.TIMED_OUT] = share
            self.stdout.write(tomli_w.dumps({"agent_think_seconds": fitted}).rstrip())


def _pilots(only: bool, none: bool) -> bool | None:
    return True if only else (False if none else None)


def people_seconds(study: Study, pilots: bool | None = None) -> dict[str, list[float]]:
    """Every kind of move's times of the people of ``study`` (``pilots``: only pilots, True;
    only recruited people, False; everyone, None), read from their tables' logs."""
    rounds = Round.objects.filter(participant__study=study)
    if pilots is not None:
        rounds = rounds.filter(participant__is_pilot=pilots)
    seats: dict[int, set[int]] = defaultdict(set)
    for table_id, seat in rounds.values_list("table_id", "seat"):
        seats[table_id].add(seat)
    started = dict(Table.objects.filter(pk__in=list(seats)).values_list("pk", "started_at"))
    logs: dict[int, list[tuple]] = defaultdict(list)
    rows = (
        Turn.objects.filter(table_id__in=list(seats))
        .order_by("table_id", "seq")
        .values_list("table_id", "seq", "seat", "event", "actor", "created_at")
    )
    for table_id, seq, seat, event, actor, at in rows.iterator(chunk_size=2000):
        person = actor == PERSON_ACTOR and seat in seats[table_id]
        logs[table_id].append((seq, (event or {}).get("type", ""), at, person))
    found: dict[str, list[float]] = defaultdict(list)
    for table_id, turns in logs.items():
        for kind, values in move_seconds(turns, started.get(table_id)).items():
            found[kind].extend(values)
    return found


def people_missed(study: Study, pilots: bool | None = None) -> tuple[int, int]:
    """How many of the people's moves made in turn (clues, questions, answers: not ballots) the
    table made for them because they let the deadline pass (``missed``), and how many there were
    in all, at the seats the people of ``study`` held (``pilots`` as for :func:`people_seconds`)."""
    rounds = Round.objects.filter(participant__study=study)
    if pilots is not None:
        rounds = rounds.filter(participant__is_pilot=pilots)
    missed = moves = 0
    for table_id, seat in rounds.values_list("table_id", "seat"):
        rows = Turn.objects.filter(table_id=table_id, seat=seat).values_list("event", "actor")
        for event, actor in rows:
            event = event or {}
            if event.get("type") in (None, "vote") or event.get("type") not in think.MOVE_KINDS:
                continue
            if actor == PERSON_ACTOR:
                moves += 1
            elif event.get("missed"):
                moves += 1
                missed += 1
    return missed, moves


def timed_out_share(missed: int, moves: int, min_moves: int) -> float | None:
    """The share of turns a blinded agent lets run out (None: too few moves to tell)."""
    if moves < min_moves:
        return None
    return round(min(missed / moves, think.MOST_TIMED_OUT), 3)


def report(fits: list[Fit]) -> list[str]:
    lines = ["kind      moves  median_s  bounds"]
    for f in fits:
        median = "-" if f.n == 0 else f"{f.median_s:.1f}"
        bounds = f.bounds if f.bounds else "(too few moves: not fitted)"
        lines.append(f"{f.kind:<9} {f.n:>5}  {median:>8}  {bounds}")
    return lines


def write_file(
    path: Path, fits: list[Fit], share: float | None = None
) -> tuple[Any, dict[str, Any]]:
    """Set ``agent_think_seconds`` in the study file at ``path``: the fitted kinds' bounds, the
    others kept as the file had them (its pair, or its table's, or the defaults). The file's
    opening comment and every other key are kept. Returns (before, after)."""
    try:
        text = path.read_text(encoding="utf-8")
        data = tomllib.loads(text)
    except OSError as err:
        raise CommandError(f"cannot read {path}: {err}") from None
    except tomllib.TOMLDecodeError as err:
        raise CommandError(f"{path} is not valid TOML: {err}") from None
    before = data.get("agent_think_seconds")
    after = think.resolved(before) if before is not None else think.default_bounds()
    for f in fits:
        if f.bounds:
            after[f.kind] = f.bounds
    if share:  # people let deadlines pass: the agents do as often
        after[think.TIMED_OUT] = share
    problem = think.bounds_problem(after)
    if problem:  # cannot happen with fitted bounds; guard what goes into a study
        raise CommandError(f"fitted bounds refused: {problem}")
    data["agent_think_seconds"] = after
    header = []
    for line in text.splitlines():
        if not line.startswith("#"):
            break
        header.append(line)
    body = tomli_w.dumps(data, multiline_strings=True)
    path.write_text("\n".join(header) + ("\n" if header else "") + body, encoding="utf-8")
    return before, after
