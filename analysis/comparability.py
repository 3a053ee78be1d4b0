"""Whether the people's games and the model arm's are like with like, and where not, every
difference in words: the game, the number of players, the language, the agents at the other seats
(opponents), how the scored seat's role was chosen, the oracle and the rules version. A figure
draws the two together only when the list is empty (or the researcher asks for it anyway); the
study page, the report's ``notes.md`` and the figure itself say what differs.

A model arm's game names its study condition when it was played from the condition's seat plan
(:mod:`games.experiment.seating`); it is compared with the people of that condition. An arm game
without a condition (a job started before arms had one) is compared with every condition.
"""

from __future__ import annotations

import pandas as pd

from analysis.metrics import conditions_of, people_tables

# (column, how a sentence names it), in the order the problems are listed
ASPECTS = (
    ("players", "players"),
    ("language", "language"),
    ("opponents", "agents at the other seats"),
    ("oracle", "oracle"),
    ("rules_version", "rules version"),
)
TWIN_ROLES = "people"  # an arm game whose scored seat held its person's role (seating.PEOPLE_ROLES)


def comparability(games: pd.DataFrame) -> list[str]:
    """Why the people's games and the model arm's (games of agents only) cannot share a figure,
    one sentence per difference; empty when they are like with like or one side is missing."""
    if games.empty:
        return []
    human = (games["player_kind"] == "human").fillna(False).astype(bool)
    arm = ~human & ~people_tables(games)
    people, models = games[human], games[arm]
    if people.empty or models.empty:
        return []
    problems = []
    played = sorted(set(people["game"].astype(str)))
    for game in sorted(set(models["game"].astype(str)) - set(played)):
        problems.append(
            f"the model arm played {game} and the people {', '.join(played)}: another game"
        )
    for game in played:
        ours_all = people[people["game"] == game]
        theirs_all = models[models["game"] == game]
        if theirs_all.empty:
            continue
        ours_by = conditions_of(ours_all)
        theirs_by = conditions_of(theirs_all)
        for condition in sorted(set(ours_by)):
            label = f"{game}, condition {condition}" if condition else game
            ours = ours_all[ours_by == condition]
            theirs = theirs_all[theirs_by == condition]
            if theirs.empty:
                theirs = theirs_all[theirs_by == ""]
            if theirs.empty:
                problems.append(
                    f"{label}: no model arm game was played from this condition's design"
                )
                continue
            problems += _differences(label, ours, theirs)
            if game == "undercover":
                problems += _roles(label, ours, theirs)
            elif "role" in ours and _values(ours["role"]) != _values(theirs["role"]):
                problems.append(
                    f"{label}: the people played as {', '.join(sorted(_values(ours['role'])))} "
                    f"and the model arm as {', '.join(sorted(_values(theirs['role'])))}"
                )
    return problems


def _differences(label: str, ours: pd.DataFrame, theirs: pd.DataFrame) -> list[str]:
    out = []
    for column, what in ASPECTS:
        if column not in ours or column not in theirs:
            continue
        mine = _values(ours[column])
        arm = _values(theirs[column])
        if mine and arm and mine != arm:
            out.append(
                f"{label}: the people played with {what} {', '.join(sorted(mine))} and the model "
                f"arm with {', '.join(sorted(arm))}"
            )
    return out


def _roles(label: str, ours: pd.DataFrame, theirs: pd.DataFrame) -> list[str]:
    """An arm whose scored seat did not hold its person's role round by round: its win rate
    carries another mix of roles (a uniformly drawn seat holds the different word 1/players of
    the time, whatever the people held)."""
    if "evaluated_role" not in theirs:
        return []
    rules = _values(theirs["evaluated_role"]) or {"any"}
    if rules == {TWIN_ROLES}:
        return []
    return [
        f"{label}: the people held the different word in {_share(ours)} of their games and the "
        f"model arm's scored seat in {_share(theirs)} (its seat chosen as "
        f"{', '.join(sorted(rules))}, not the role each person held round by round)"
    ]


def _share(rows: pd.DataFrame) -> str:
    roles = rows["role"].astype("string").dropna() if "role" in rows else pd.Series(dtype=str)
    if roles.empty:
        return "an unknown share"
    return f"{(roles == 'difference').mean():.0%}"


def _values(column: pd.Series) -> set[str]:
    return set(column.dropna().astype(str)) - {""}
