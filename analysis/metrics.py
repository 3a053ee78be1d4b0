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
from games.experiment.summary import TABLE2_COLUMNS, t95, table2, wilson
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


def table2_rows(games: pd.DataFrame, baseline: str = "none") -> pd.DataFrame:
    """Table 2 in long form (``TABLE2_COLUMNS``: task, setting, model, score, improve_pct,
    ci_low, ci_high, n) for every non-human player: :func:`games.experiment.summary.table2`, the
    one computation that ``python -m games experiment`` prints and ``reproduce`` writes. Pass
    the scored games (:func:`scored`), as ``analysis.summary.summarize`` does."""
    agents = games[games["player_kind"] != "human"]
    columns = ["game", "setting", "player", "player_kind", "reward"]
    rows = table2(agents[columns].to_dict("records"), baseline) if len(agents) else []
    frame = pd.DataFrame(rows, columns=list(TABLE2_COLUMNS))
    floats = {name: "float64" for name in ("score", "improve_pct", "ci_low", "ci_high")}
    return frame.astype({**floats, "n": "int64"})


def _pivot(rows: pd.DataFrame, values: str) -> pd.DataFrame:
    table = rows.pivot_table(
        index=["task", "setting"], columns="model", values=values, aggfunc="first", dropna=False
    )
    table.index = table.index.set_names(["game", "setting"])
    table.columns.name = None
    return table


def settings_means(games: pd.DataFrame) -> pd.DataFrame:
    """Mean reward (win rate for Undercover) per game and setting (rows) and player (columns),
    over every non-human player; settings in the paper's order. From :func:`table2_rows`."""
    means = _pivot(table2_rows(games), "score")
    order = {name: i for i, name in enumerate(SETTING_ORDER)}
    rows = sorted(means.index, key=lambda key: (key[0], order.get(key[1], len(order)), key[1]))
    return means.loc[rows]


def settings_table(games: pd.DataFrame, baseline: str = "none") -> pd.DataFrame:
    """Table 2's shape: per game, the baseline's means, then each other setting's means followed by
    its Improve % against the baseline. Index ``(game, setting, row)`` with row ``mean`` or
    ``improve``; columns are players. Means and Improve % are :func:`table2_rows`'s (an offline
    agent, which plays the same whatever experience it is given, has no Improve %)."""
    rows = table2_rows(games, baseline)
    means = settings_means(games)
    changes = _pivot(rows, "improve_pct").reindex(columns=means.columns)
    blocks = []
    for game, block in means.groupby(level="game", sort=False):
        has_base = (game, baseline) in block.index
        for (_, setting), values in block.iterrows():
            blocks.append(((game, setting, "mean"), values))
            if has_base and setting != baseline:
                change = changes.loc[(game, setting)] if (game, setting) in changes.index else None
                if change is None:
                    change = pd.Series(math.nan, index=values.index)
                blocks.append(((game, setting, "improve"), change.astype("float64")))
    index = pd.MultiIndex.from_tuples([key for key, _ in blocks], names=["game", "setting", "row"])
    return pd.DataFrame(
        [values.to_numpy(dtype="float64") for _, values in blocks],
        index=index,
        columns=means.columns,
    )


def half_width(sd: pd.Series, n: pd.Series) -> pd.Series:
    """Half the width of the 95% t-interval of a mean: t(n-1) · sd / √n (NaN for n < 2)."""
    quantile = n.map(lambda k: t95(k - 1)).astype("float64")
    return quantile * sd / np.sqrt(n.astype("float64"))


def scored(games: pd.DataFrame) -> pd.DataFrame:
    """The games that count: those played to their end (not aborted or unfinished), whose
    answering seat did not fail, and whose person (if any) played to the end instead of an agent
    that took their seat over."""
    keep = pd.Series(True, index=games.index)
    if "ended" in games:
        keep &= games["ended"].astype("string").fillna("finished") == "finished"
    for flag in ("oracle_failed", "taken_over"):
        if flag in games:
            keep &= ~games[flag].fillna(False).astype(bool)
    return games[keep]


def model_curves(games: pd.DataFrame, base: str = "none") -> pd.DataFrame:
    """R(t) (equations 1-2) of every non-human player and setting, with a 95% band across samples.

    Each setting other than ``base`` is paired with ``base`` for the pooled first round; ``base``
    itself is paired with ``cumulative`` when that ran, else with the first other setting. Columns:
    game, player, setting, t, r, R, samples (games in round t), n (samples), low, high.
    """
    agents = games[games["player_kind"] != "human"]
    out = []
    for _, rows in agents.groupby(["game", "player"], observed=True, sort=True):
        present = list(dict.fromkeys(rows["setting"]))
        others = [s for s in present if s != base]
        others.sort(key=lambda s: (s != "cumulative", _setting_rank(s)))
        if not others:
            out.append(_curve_with_band(rows, base, base))
        for index, exp in enumerate(others):
            curve = _curve_with_band(rows, base, exp)
            if index > 0:
                curve = curve[curve["setting"] != base]
            out.append(curve)
    if not out:
        return pd.DataFrame(
            columns=["game", "player", "setting", "t", "r", "R", "samples", "n", "low", "high"]
        )
    return pd.concat(out, ignore_index=True)


def _setting_rank(setting: str) -> int:
    return SETTING_ORDER.index(setting) if setting in SETTING_ORDER else len(SETTING_ORDER)


def _curve_with_band(rows: pd.DataFrame, base: str, exp: str) -> pd.DataFrame:
    curve = cumulative_curves(rows, base=base, exp=exp)
    per_sample = cumulative_curves(rows, base=base, exp=exp, by=("game", "player", "sample"))
    spread = per_sample.groupby(["setting", "t"], observed=True)["R"].agg(sd="std", n="count")
    curve = curve.join(spread, on=["setting", "t"])
    half = half_width(curve["sd"], curve["n"])
    curve["low"], curve["high"] = _bounded(curve["R"] - half), _bounded(curve["R"] + half)
    return curve.drop(columns="sd")


def _bounded(values: pd.Series) -> pd.Series:
    """An interval end clipped to the range rewards can take, [0, 1]."""
    return values.clip(lower=0.0, upper=1.0)


def variance_groups_supported(summary: pd.DataFrame, minimum: int = 4, rounds: int = 3) -> bool:
    """Whether a steady/variable split says something: at least ``minimum`` participants with
    ``rounds`` or more rounds each, whose variances are not all the same."""
    enough = summary[summary["rounds"] >= rounds]
    return len(enough) >= minimum and enough["variance"].nunique() > 1


def participant_summary(games: pd.DataFrame) -> pd.DataFrame:
    """The human study's Table 4: per game and participant the condition, rounds, total, mean and
    final cumulative reward R, the variance across rounds, and the steady/variable group when the
    data supports a split (else empty)."""
    humans = games[games["player_kind"] == "human"]
    columns = ["game", "player", "condition", "rounds", "total", "mean", "R", "variance", "group"]
    if humans.empty:
        return pd.DataFrame(columns=columns)
    per = humans.groupby(["game", "player"], observed=True)
    table = per["reward"].agg(rounds="size", total="sum", mean="mean")
    table["condition"] = per["condition"].first()
    table["R"] = player_curves(humans).groupby(["game", "player"], observed=True)["R"].last()
    groups = variance_groups(humans).set_index(["game", "player"])
    table = table.join(groups).reset_index()
    for _, block in table.groupby("game", observed=True):
        if not variance_groups_supported(block):
            table.loc[block.index, "group"] = ""
    table["total"] = table["total"].astype("float64")
    return table[columns]


def people_tables(games: pd.DataFrame) -> pd.Series:
    """Per row, whether its game was played at a table where a person sat (a study round, a
    visitor's game), as against a game of agents only (a model arm, an experiment). Agents' seats
    at people's tables and the model arm's games are different populations: never pooled."""
    if games.empty:
        return pd.Series(False, index=games.index, dtype=bool)
    human = (games["player_kind"] == "human").fillna(False).to_numpy(dtype=bool)
    codes, _ = pd.factorize(games["table"])  # compare integer codes, not text
    return pd.Series(np.isin(codes, np.unique(codes[human])), index=games.index)


def conditions_of(games: pd.DataFrame) -> pd.Series:
    """The study condition of each row as text, empty where there is none (one arm)."""
    if "condition" not in games:
        return pd.Series("", index=games.index, dtype=object)
    return games["condition"].astype("string").fillna("")


def condition_mean_curves(games: pd.DataFrame) -> pd.DataFrame:
    """Per game, condition and round t: the mean of the participants' R(t) in that condition,
    with a 95% t-interval and ``n``, the participants who played round t (columns game,
    condition, t, R, n, low, high). The condition is empty in a study of one arm."""
    columns = ["game", "condition", "t", "R", "n", "low", "high"]
    humans = games[games["player_kind"] == "human"]
    if humans.empty:
        return pd.DataFrame(columns=columns)
    humans = humans.assign(condition=conditions_of(humans))
    return mean_of_curves(player_curves(humans, by=("game", "condition", "player")))


def mean_of_curves(curves: pd.DataFrame) -> pd.DataFrame:
    """The mean R(t) of players' curves (:func:`player_curves` with a ``condition`` column) per
    game, condition and t, with a 95% t-interval and ``n``, the players behind each point."""
    columns = ["game", "condition", "t", "R", "n", "low", "high"]
    if curves.empty:
        return pd.DataFrame(columns=columns)
    out = curves.groupby(["game", "condition", "t"], observed=True)["R"].agg(
        R="mean", sd="std", n="count"
    )
    out = out.reset_index()
    half = half_width(out["sd"], out["n"])
    out["low"], out["high"] = _bounded(out["R"] - half), _bounded(out["R"] + half)
    return out[columns]


def human_mean_curve(games: pd.DataFrame) -> pd.DataFrame:
    """Per game and round t: the participants' mean cumulative reward with a 95% t-interval over
    the participants who played round t (columns game, t, R, n, low, high)."""
    humans = games[games["player_kind"] == "human"]
    if humans.empty:
        return pd.DataFrame(columns=["game", "t", "R", "n", "low", "high"])
    curves = player_curves(humans)
    out = curves.groupby(["game", "t"], observed=True)["R"].agg(R="mean", sd="std", n="count")
    out = out.reset_index()
    half = half_width(out["sd"], out["n"])
    out["low"], out["high"] = _bounded(out["R"] - half), _bounded(out["R"] + half)
    return out.drop(columns="sd")


def setting_differences(games: pd.DataFrame, baseline: str = "none") -> pd.DataFrame:
    """Per game, non-human player and setting other than ``baseline``: the difference of mean
    reward against the baseline with its 95% interval (Welch's standard error, t with the smaller
    group's degrees of freedom), ``within_noise`` when the interval holds 0, and ``reads_policy``:
    False for an offline agent, which plays the same whatever experience it is given, so its
    differences are not gains."""
    agents = games[games["player_kind"] != "human"]
    stats = agents.groupby(["game", "player", "setting"], observed=True)["reward"].agg(
        mean="mean", var="var", n="count"
    )
    rows = []
    for (game, player, setting), row in stats.iterrows():
        if setting == baseline or (game, player, baseline) not in stats.index:
            continue
        base = stats.loc[(game, player, baseline)]
        se = math.sqrt(row["var"] / row["n"] + base["var"] / base["n"])
        half = t95(min(row["n"], base["n"]) - 1) * se
        diff = row["mean"] - base["mean"]
        kind = agents.loc[agents["player"] == player, "player_kind"].iloc[0]
        rows.append(
            {
                "game": game,
                "player": player,
                "setting": setting,
                "difference": diff,
                "low": diff - half,
                "high": diff + half,
                "within_noise": not (abs(diff) > half),
                "reads_policy": kind != "offline",
            }
        )
    columns = ["game", "player", "setting", "difference", "low", "high", "within_noise"]
    return pd.DataFrame(rows, columns=[*columns, "reads_policy"])


def role_win_rates(games: pd.DataFrame) -> pd.DataFrame:
    """Undercover: win rate per role, with Wilson 95% intervals, for the people (per condition
    when the study has several) and for each agent and setting, keeping apart the games at
    people's tables (``arm`` ``people's tables``: the people, and the agents seated with them)
    and the games of agents only (``arm`` ``model arm``). Columns game, arm, who, condition,
    setting, role, games, wins, win_rate, low, high."""
    played = games[games["win"].notna()].copy()
    columns = [
        "game", "arm", "who", "condition", "setting", "role", "games", "wins", "win_rate",
        "low", "high",
    ]  # fmt: skip
    if played.empty:
        return pd.DataFrame(columns=columns)
    human = (played["player_kind"] == "human").to_numpy()
    played["arm"] = np.where(people_tables(played), PEOPLE_TABLES, MODEL_ARM)
    played["who"] = np.where(human, "people", played["player"])
    played["condition"] = np.where(human, conditions_of(played), "")
    played["setting"] = np.where(human, "", played["setting"])
    played["won"] = played["win"].astype("float64")
    keys = ["game", "arm", "who", "condition", "setting", "role"]
    return rates_with_bounds(played, keys)[columns]


def rates_with_bounds(played: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Per group of ``keys``: ``games``, ``wins`` (of the ``won`` column), ``win_rate`` and its
    95% Wilson interval (``low``, ``high``)."""
    out = played.groupby(keys, observed=True)["won"].agg(games="size", wins="sum").reset_index()
    out["win_rate"] = out["wins"] / out["games"]
    bounds = [wilson(wins, n) for wins, n in zip(out["wins"], out["games"], strict=True)]
    out["low"] = [low for low, _ in bounds]
    out["high"] = [high for _, high in bounds]
    return out


PEOPLE_TABLES = "people's tables"
MODEL_ARM = "model arm"
