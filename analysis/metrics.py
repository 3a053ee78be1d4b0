"""The paper's measures, computed from the games frame with vectorised groupbys.

Equations (1)-(2) of §3.2.2, the Table 2 means with Improve %, win rates, the human study's
per-participant curves and variance groups, and the perfect-binary-questioning reference. Each
function takes a games frame (``analysis.frames.GAME_COLUMNS``) and returns a plain DataFrame, so
reports, plots and the dashboard share one implementation.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import cache, lru_cache

import numpy as np
import pandas as pd

from games.experience.context import SETTINGS
from games.twenty_questions import CANDIDATES as WORDS
from games.twenty_questions import ndcg_reward

MAX_QUESTIONS = 20
SETTING_ORDER = SETTINGS  # the paper's order of the experience settings


def ndcg_rewards(found_at: pd.Series, max_questions: int = MAX_QUESTIONS) -> pd.Series:
    """Vectorised :func:`ndcg_reward`: question index of the correct guess (NA: not found)."""
    k = pd.to_numeric(found_at, errors="coerce").astype("float64")
    reward = 1.0 / np.log2(k + 1.0)
    return reward.where((k >= 1) & (k <= max_questions), 0.0)


def turn_totals(turns: pd.DataFrame) -> pd.DataFrame:
    """Per game (``table``): events, questions asked and characters written, from the turns frame."""
    counted = turns.assign(question=turns["type"] == "question")
    return counted.groupby("table", observed=True).agg(
        turns=("seq", "size"), questions=("question", "sum"), chars=("chars", "sum")
    )


def improve_percent(value: float, baseline: float) -> float:
    """Table 2's Improve %: ``(value - baseline) / baseline × 100``; NaN (shown NA) when the
    baseline is 0 or missing."""
    if baseline == 0 or pd.isna(baseline) or pd.isna(value):
        return math.nan
    return (value - baseline) / baseline * 100.0


def cumulative_curves(
    games: pd.DataFrame,
    base: str = "none",
    exp: str = "cumulative",
    by: Sequence[str] = ("game", "player"),
) -> pd.DataFrame:
    """R(t) of equations (1)-(2) for the agent with experience (``exp``) and its baseline.

    Per round, r(t) is the mean reward over samples; at t = 1 both curves take the pooled mean of
    base and exp games, as eq. (1) says; R(t) is the running mean of r up to t (eq. 2).
    Returns one row per ``by`` group, setting and round: ``t`` (1-based), ``r``, ``R``, ``samples``.
    """
    chosen = games[games["setting"].isin([base, exp])]
    keys = [*by, "setting", "round"]
    sums = (
        chosen.groupby(keys, observed=True)["reward"]
        .agg(total="sum", samples="count")
        .reset_index()
    )
    first = sums["round"] == sums.groupby(list(by), observed=True)["round"].transform("min")
    pooled = sums[first].groupby(list(by), observed=True)[["total", "samples"]].transform("sum")
    sums.loc[pooled.index, ["total", "samples"]] = pooled
    return _running_mean(sums, [*by, "setting"])


def player_curves(games: pd.DataFrame, by: Sequence[str] = ("game", "player")) -> pd.DataFrame:
    """Each player's cumulative average reward over its own rounds (eq. 2; no pooling), averaged
    over samples: the human study's per-participant curves."""
    sums = (
        games.groupby([*by, "round"], observed=True)["reward"]
        .agg(total="sum", samples="count")
        .reset_index()
    )
    return _running_mean(sums, list(by))


def _running_mean(sums: pd.DataFrame, group: list[str]) -> pd.DataFrame:
    sums = sums.sort_values([*group, "round"], kind="stable").reset_index(drop=True)
    sums["r"] = sums["total"] / sums["samples"]
    grouped = sums.groupby(group, observed=True)
    sums["R"] = grouped["r"].cumsum() / (grouped.cumcount() + 1)
    sums["t"] = sums["round"] + 1
    return sums[[*group, "t", "r", "R", "samples"]]


def variance_groups(
    games: pd.DataFrame, labels: tuple[str, str] = ("steady", "variable")
) -> pd.DataFrame:
    """Split each game's players into two halves by the variance of their reward across rounds, as
    the human study does: the lower half (the larger one when odd) is ``labels[0]``. Ties break by
    player id, so the split is stable."""
    per_round = games.groupby(["game", "player", "round"], observed=True)["reward"].mean()
    variance = per_round.groupby(level=["game", "player"], observed=True).var(ddof=0)
    out = variance.rename("variance").reset_index()
    out = out.sort_values(["game", "variance", "player"], kind="stable").reset_index(drop=True)
    within = out.groupby("game", observed=True)
    steady = within.cumcount() < np.ceil(within["variance"].transform("size") / 2)
    out["group"] = np.where(steady, labels[0], labels[1])
    return out


@lru_cache
def perfect_binary_reward(
    candidates: int = len(WORDS), max_questions: int = MAX_QUESTIONS
) -> float:
    """Expected NDCG reward of the best yes/no questioning over equally likely candidates.

    Each question either splits the remaining set (a answers Yes) or names one candidate (a guess,
    which ends the game when right). Dynamic programming over (remaining, asked); about 0.321 for
    the 157 words, a little above plain halving-then-guessing (about 0.317).
    """

    @cache
    def value(remaining: int, asked: int) -> float:
        if asked >= max_questions:
            return 0.0
        if remaining == 1:
            return ndcg_reward(asked + 1)
        guess = ndcg_reward(asked + 1) + (remaining - 1) * value(remaining - 1, asked + 1)
        best = guess / remaining
        for yes in range(1, remaining // 2 + 1):
            split = yes * value(yes, asked + 1) + (remaining - yes) * value(
                remaining - yes, asked + 1
            )
            best = max(best, split / remaining)
        return best

    return value(candidates, 0)


REFERENCE_LABEL = "perfect binary questioning, computed optimum"


def reference_reward(
    games: pd.DataFrame | None = None, game: str = "twenty-questions"
) -> tuple[float, str] | None:
    """The reference line of the human figure and its label: the expected reward of perfect
    binary questioning, the play the ``offline:infogain`` questioner aims at. It is computed
    rather than averaged over whatever infogain games a frame holds, so every page, report and
    figure draws the same line; infogain's own games show as a model next to it. Only Twenty
    Questions has such a line: None for any other game."""
    if game != "twenty-questions":
        return None
    return perfect_binary_reward(), REFERENCE_LABEL


def win_rates(
    games: pd.DataFrame, by: Sequence[str] = ("game", "player", "setting")
) -> pd.DataFrame:
    """Win rate per role and overall (role ``all``) for games that have a winner (Undercover)."""
    played = games[games["win"].notna()].assign(win=lambda f: f["win"].astype("float64"))
    per_role = played.groupby([*by, "role"], observed=True)["win"].agg(
        games="size", win_rate="mean"
    )
    overall = played.groupby(list(by), observed=True)["win"].agg(games="size", win_rate="mean")
    overall = overall.reset_index().assign(role="all")
    out = pd.concat([per_role.reset_index(), overall], ignore_index=True)
    return out.sort_values([*by, "role"], kind="stable").reset_index(drop=True)


def settings_means(games: pd.DataFrame) -> pd.DataFrame:
    """Mean reward (win rate for Undercover) per game and setting (rows) and player (columns),
    over every non-human player; settings in the paper's order."""
    agents = games[games["player_kind"] != "human"]
    means = agents.pivot_table(
        index=["game", "setting"], columns="player", values="reward", aggfunc="mean", observed=True
    )
    order = {name: i for i, name in enumerate(SETTING_ORDER)}
    rows = sorted(means.index, key=lambda key: (key[0], order.get(key[1], len(order)), key[1]))
    means = means.loc[rows]
    means.columns.name = None
    return means


def settings_table(games: pd.DataFrame, baseline: str = "none") -> pd.DataFrame:
    """Table 2's shape: per game, the baseline's means, then each other setting's means followed by
    its Improve % against the baseline. Index ``(game, setting, row)`` with row ``mean`` or
    ``improve``; columns are players."""
    means = settings_means(games)
    blocks = []
    for game, block in means.groupby(level="game", sort=False):
        base = block.loc[(game, baseline)] if (game, baseline) in block.index else None
        for (_, setting), values in block.iterrows():
            blocks.append(((game, setting, "mean"), values))
            if base is not None and setting != baseline:
                improve = [improve_percent(v, b) for v, b in zip(values, base, strict=True)]
                blocks.append(((game, setting, "improve"), pd.Series(improve, index=values.index)))
    index = pd.MultiIndex.from_tuples([key for key, _ in blocks], names=["game", "setting", "row"])
    return pd.DataFrame(
        [values.to_numpy() for _, values in blocks], index=index, columns=means.columns
    )
