"""Who is Undercover round by round and role by role: the share of games won at round t by the
people (per condition) and by the model arm (per model and setting) when holding the different
word, and when holding the common one, drawn side by side in one panel per role.

A win rate pooled over roles mixes two very different games (the difference seat wins far less
often than a normal one); the people's twin holds the people's roles round by round, and these
curves let a reader check that each role's curve, not only the mix, is like with like.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from analysis.figure_data import drawn_data, model_label
from analysis.metrics import conditions_of, people_tables, rates_with_bounds
from analysis.plots import Line, curves_figure

COLUMNS = ["game", "who", "condition", "setting", "role", "t", "games", "wins", "win_rate",
           "low", "high"]  # fmt: skip
ROLE_TITLES = {"difference": "Holding the different word", "normal": "Holding the common word"}


def role_round_rates(games: pd.DataFrame) -> pd.DataFrame:
    """Per Undercover round t (1-based) and role: the win rate of the people (``who`` people, per
    condition) and of each model and setting of the model arm (games of agents only), with
    Wilson 95% intervals and the games behind each point. Agents seated at people's tables are
    another population and are left out."""
    played = games[(games["game"] == "undercover") & games["win"].notna()]
    played = played[played["role"].isin(list(ROLE_TITLES))]
    if played.empty:
        return pd.DataFrame(columns=COLUMNS)
    human = (played["player_kind"] == "human").to_numpy(dtype=bool)
    arm = ~human & ~people_tables(played).to_numpy(dtype=bool)
    chosen = played[human | arm].assign(
        who=np.where(human, "people", played["player"])[human | arm],
        condition=conditions_of(played)[human | arm],
        setting=np.where(human, "", played["setting"])[human | arm],
        t=played["round"].astype("int64")[human | arm] + 1,
        won=played["win"].astype("float64")[human | arm],
    )
    keys = ["game", "who", "condition", "setting", "role", "t"]
    return rates_with_bounds(chosen, keys)[COLUMNS]


def role_curves_figure(
    rates: pd.DataFrame, with_models: bool = True, note: str = ""
) -> tuple[Figure, pd.DataFrame] | None:
    """One panel per role: the people's win rate at each round per condition (in the condition's
    look) beside the model arm's per model and setting (``with_models``: False when the arm's
    games are not comparable, then ``note`` says why), each with its band and n. None without the
    people's games."""
    if rates.empty or not (rates["who"] == "people").any():
        return None
    panels: dict[str, list[Line]] = {}
    for role, title in ROLE_TITLES.items():
        mine = rates[rates["role"] == role]
        lines = []
        for (who, condition, setting), rows in mine.groupby(
            ["who", "condition", "setting"], sort=True
        ):
            people = who == "people"
            if not people and not with_models:
                continue
            label = f"people: {condition or 'all people'}" if people else model_label(who, setting)
            lines.append(
                Line(
                    label,
                    rows["t"].tolist(),
                    rows["win_rate"].tolist(),
                    kind="mean" if people else "normal",
                    condition=condition if people else "",
                    n=rows["games"].tolist(),
                    low=rows["low"].tolist(),
                    high=rows["high"].tolist(),
                )  # fmt: skip
            )
        if lines:
            panels[title] = lines
    figure = curves_figure(panels, ylabel="Win rate at round t", columns=2, note=note)
    return figure, drawn_data([(title, line) for title, lines in panels.items() for line in lines])
