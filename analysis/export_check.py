"""Cross-checks of a study export: do its files tell one story about the same people?

``manage.py export_study SLUG --out DIR --check`` (and every test that exports a study) runs
:func:`check_export` on the folder just written. Each problem is one line naming the file, the
column and the people or counts that disagree; an empty list means the files agree:

- every person seat of ``games`` and every person named in ``games`` or ``turns`` (a pseudonym)
  is a row of ``participants``, and no participant is credited with a move at an agent's seat;
- a participant's games played to the end by themselves (not taken over) are their
  ``rounds_finished``, and those games' rewards add up to their ``total_reward``;
- ``questionnaire`` names only participants, and its failed attention checks are exactly each
  participant's ``attention_failed``;
- ``consent_versions`` counts, per version, the participants who agreed to it;
- ``analysis/participants.csv`` names only participants (people whose every game was taken over,
  or who played none, are not in it: the README says so);
- with both formats written, each CSV file has as many rows as its parquet twin.

Pure pandas, no Django: it reads the folder as any collaborator would.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from pathlib import Path

import pandas as pd

from analysis.export import NA, read_frames

PEOPLE_FILES = ("games", "turns", "participants")


def _names(values: object) -> str:
    found = sorted({str(v) for v in values})  # type: ignore[union-attr]
    shown = ", ".join(found[:5])
    return shown + (f" and {len(found) - 5} more" if len(found) > 5 else "")


def _split(cell: object) -> set[str]:
    if cell is None or cell is pd.NA or (isinstance(cell, float) and pd.isna(cell)):
        return set()
    return {part.strip() for part in str(cell).split(";") if part.strip()}


def check_frames(frames: dict[str, pd.DataFrame]) -> list[str]:
    """The disagreements between the frames of one export (see the module)."""
    problems = [f"{name}: the file is missing" for name in PEOPLE_FILES if name not in frames]
    if problems:
        return problems
    games, turns, people = frames["games"], frames["turns"], frames["participants"]
    known = set(people["player"].dropna().astype(str))
    duplicated = people["player"][people["player"].duplicated()]
    if len(duplicated):
        problems.append(f"participants: {_names(duplicated)} listed more than once")

    human = games[games["player_kind"].astype("string") == "human"]
    missing = set(human["player"].dropna().astype(str)) - known
    if missing:
        problems.append(
            f"games: person seats played by {_names(missing)}, who are not in participants"
        )
    # A person appears as a pseudonym (``p`` and 16 hex digits); agents by their model spec.
    pseudonym = r"^p[0-9a-f]{16}$"
    named = games["player"].dropna().astype(str)
    strangers = set(named[named.str.match(pseudonym)]) - known
    if strangers:
        problems.append(f"games: rows of {_names(strangers)}, who are not in participants")
    moved = turns["player"].dropna().astype(str)
    strangers = set(moved[moved.str.match(pseudonym)]) - known
    if strangers:
        problems.append(f"turns: moves by {_names(strangers)}, who are not in participants")
    agent_seats = {
        (int(t), int(s))
        for t, s in games[games["player_kind"].astype("string") != "human"][["table", "seat"]]
        .dropna()
        .itertuples(index=False)
    }
    misplaced = {
        str(p)
        for t, s, p in turns[["table", "seat", "player"]].dropna().itertuples(index=False)
        if (int(t), int(s)) in agent_seats and str(p) in known
    }
    if misplaced:
        problems.append(f"turns: {_names(misplaced)} credited with moves at an agent's seat")

    own = human
    if "taken_over" in own:
        own = own[~own["taken_over"].fillna(False).astype(bool)]
    own = own[own["reward"].notna()]
    played = own.groupby(own["player"].astype(str)).size()
    rewards = own.groupby(own["player"].astype(str))["reward"].sum()
    for row in people.itertuples(index=False):
        player = str(row.player)
        if pd.isna(row.rounds_finished):
            continue
        if int(played.get(player, 0)) != int(row.rounds_finished):
            problems.append(
                f"participants: {player} has rounds_finished {int(row.rounds_finished)} but "
                f"{int(played.get(player, 0))} games of their own in games"
            )
        total = float(rewards.get(player, 0.0))
        if pd.notna(row.total_reward) and abs(total - float(row.total_reward)) > 1e-6:
            problems.append(
                f"participants: {player} has total_reward {row.total_reward} but their games in "
                f"games add up to {total}"
            )

    if "questionnaire" in frames:
        answers = frames["questionnaire"]
        missing = set(answers["player"].dropna().astype(str)) - known
        if missing:
            problems.append(f"questionnaire: answers of {_names(missing)}, not in participants")
        failed: dict[str, set[str]] = defaultdict(set)
        if "passed" in answers:
            wrong = answers[answers["passed"].fillna(True).astype(bool).eq(False)]
            for player, item in wrong[["player", "item"]].itertuples(index=False):
                failed[str(player)].add(str(item))
        for row in people.itertuples(index=False):
            flagged = _split(row.attention_failed)
            if "passed" in answers and flagged != failed.get(str(row.player), set()):
                problems.append(
                    f"participants: {row.player} has attention_failed {sorted(flagged)} but "
                    f"questionnaire shows {sorted(failed.get(str(row.player), set()))} failed"
                )

    if "consent_versions" in frames:
        versions = frames["consent_versions"]
        agreed = Counter(str(v) for v in people["consent_version"].dropna() if str(v) != NA)
        listed = {
            str(v): int(n) for v, n in versions[["version", "participants"]].itertuples(index=False)
        }
        for version in sorted(set(agreed) | set(listed)):
            if agreed.get(version, 0) != listed.get(version, 0):
                problems.append(
                    f"consent_versions: version {version} counts {listed.get(version, 0)} "
                    f"participants, participants has {agreed.get(version, 0)} who agreed to it"
                )
    return problems


def check_export(folder: str | Path) -> list[str]:
    """Read the export in ``folder`` (every format written) and return its disagreements."""
    folder = Path(folder)
    package = folder / "datapackage.json"
    if not package.exists():
        return [f"{folder}: no datapackage.json, so not an export"]
    resources = json.loads(package.read_text(encoding="utf-8"))["resources"]
    problems = [
        f"datapackage.json: {item['path']} is listed but missing"
        for item in resources
        if not (folder / item["path"]).exists()
    ]
    if problems:
        return problems
    formats = sorted({item["format"] for item in resources})
    read = {fmt: read_frames(folder, fmt) for fmt in formats}
    for fmt, frames in read.items():
        problems += [
            f"{fmt}: {line}" if len(formats) > 1 else line for line in check_frames(frames)
        ]
    if len(formats) > 1:
        first, *rest = formats
        for other in rest:
            for name, frame in read[first].items():
                twin = read[other].get(name)
                if twin is None or len(twin) != len(frame):
                    size = "missing" if twin is None else f"{len(twin)} rows"
                    problems.append(f"{name}: {len(frame)} rows in {first} but {size} in {other}")
    summary = folder / "analysis" / "participants.csv"
    if summary.exists() and "participants" in read[formats[0]]:
        known = set(read[formats[0]]["participants"]["player"].dropna().astype(str))
        analysed = pd.read_csv(summary, dtype=object, keep_default_na=False)
        if "player" in analysed:
            missing = set(analysed["player"]) - known - {""}
            if missing:
                problems.append(f"analysis/participants.csv: {_names(missing)} not in participants")
    return problems
