"""Everything the product says about a set of games, computed once, by one function.

:func:`summarize` takes a games frame (``analysis.frames``) and returns a :class:`Summary`: the
model curves with their bands (equations 1-2), the settings table (Table 2) with the differences
and whether each is within noise, the per-participant table (the paper's Table 4), the
participants' curves and their mean with a 95% interval, Undercover win rates by role, and the
reasons, if any, why the people's and the models' games cannot share a figure.

``python -m analysis report``, the dashboard's cached pages and ``manage.py export_study`` all call
it, so the three cannot disagree: a test feeds them the same games and compares every number.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from analysis import metrics
from analysis.comparability import comparability
from analysis.left_out import people_left_out
from analysis.role_curves import role_round_rates

FRAMES = (
    "curves",
    "table",
    "differences",
    "participants",
    "human_curves",
    "human_mean",
    "condition_means",
)


@dataclass
class Summary:
    games: int  # games in the frame (a game per evaluated seat)
    scored: int  # of those, the games scored (the others' answering seat failed)
    curves: pd.DataFrame  # model curves with bands: metrics.model_curves
    table: pd.DataFrame  # Table 2: metrics.settings_table
    differences: pd.DataFrame  # metrics.setting_differences
    participants: pd.DataFrame  # Table 4: metrics.participant_summary
    human_curves: pd.DataFrame  # metrics.player_curves of the people
    human_mean: pd.DataFrame  # metrics.human_mean_curve
    condition_means: pd.DataFrame  # metrics.condition_mean_curves
    win_rates: pd.DataFrame  # metrics.role_win_rates
    problems: list[str] = field(default_factory=list)  # analysis.comparability
    mixed: bool = False  # drawn together although the problems say they differ
    reference: float | None = None  # the reference line of Twenty Questions
    rows: pd.DataFrame = field(default_factory=pd.DataFrame)  # Table 2, long: metrics.table2_rows
    # People left out of every measure, by reason (analysis.left_out): pilot, screened,
    # withdrawn; empty when everyone was asked for (include_all_people) or none was.
    people_left_out: dict[str, int] = field(default_factory=dict)
    # Undercover: win rate per round and role, people and model arm (analysis.role_curves)
    role_rounds: pd.DataFrame = field(default_factory=pd.DataFrame)

    @property
    def comparable(self) -> bool:
        return not self.problems or self.mixed

    def frames(self) -> dict[str, pd.DataFrame]:
        """Every table of the summary by name, the way the report writes them as CSV."""
        out = {name: getattr(self, name) for name in FRAMES}
        out["table"] = self.table.reset_index()
        out["win_rates"] = self.win_rates
        if len(self.role_rounds):  # Undercover only
            out["role_rounds"] = self.role_rounds
        if self.people_left_out:  # written only when someone was left out
            out["people_left_out"] = pd.DataFrame(
                sorted(self.people_left_out.items()), columns=["reason", "people"]
            )
        return out


def summarize(
    games: pd.DataFrame,
    allow_mixed: bool = False,
    include_all_people: bool = False,
    also_left_out: dict[str, int] | None = None,
) -> Summary:
    """The one computation behind every page, report and export (see the module). Pilots and
    screened or withdrawn people are left out of every curve, mean, win rate and the
    per-participant table, and counted, unless ``include_all_people``. ``also_left_out``: people
    the frame does not hold at all, by reason (a study's pilots whose tables were not read, the
    people who withdrew and whose data was deleted), added to the counts."""
    left: dict[str, int] = {}
    if not include_all_people:
        games, left = people_left_out(games)
    for reason, n in (also_left_out or {}).items():
        if n:
            left[reason] = left.get(reason, 0) + int(n)
    scored = metrics.scored(games)
    humans = scored[scored["player_kind"] == "human"]
    # The model measures read the games of agents only: an agent seated at a people's table
    # (Undercover) plays another population's games, counted apart in the win rates.
    agents = scored[(scored["player_kind"] != "human") & ~metrics.people_tables(scored)]
    reference = metrics.reference_reward(scored)
    return Summary(
        games=len(games),
        scored=len(scored),
        curves=metrics.model_curves(agents),
        table=metrics.settings_table(agents) if len(agents) else _empty_table(),
        differences=metrics.setting_differences(agents),
        participants=metrics.participant_summary(humans),
        human_curves=metrics.player_curves(humans)
        if len(humans)
        else pd.DataFrame(columns=["game", "player", "t", "r", "R", "samples"]),
        human_mean=metrics.human_mean_curve(humans),
        condition_means=metrics.condition_mean_curves(humans),
        win_rates=metrics.role_win_rates(scored),
        problems=comparability(scored),
        mixed=allow_mixed,
        rows=metrics.table2_rows(agents),
        people_left_out=left,
        role_rounds=role_round_rates(scored),
        reference=reference[0]
        if reference and (scored["game"] == "twenty-questions").any()
        else None,
    )


def _empty_table() -> pd.DataFrame:
    index = pd.MultiIndex.from_tuples([], names=["game", "setting", "row"])
    return pd.DataFrame(index=index)
