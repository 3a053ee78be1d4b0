"""Table 2, computed once: per task (game), setting and player, the mean reward (NDCG@20 for Twenty
Questions, win rate for Undercover, accuracy for math), its 95% interval, the games counted and the
Improve % against ``none``.

:func:`table2` is the one computation. ``python -m games experiment`` prints it from its records
(:func:`summarize`), ``python -m analysis reproduce`` writes it as CSV, and the analysis
(``analysis.metrics.table2_rows`` and ``settings_table``, which the report, the dashboard and the
exports read) calls it on the games frame, so none can disagree. No pandas and no Django, because
dependencies point from ``analysis`` to ``games`` and never back; the quantiles and intervals are
scipy's. The games that count are the same everywhere (:func:`is_scored`): a game whose answering
seat failed, a game ended by failed model calls (an Undercover seat, a questioner), or a person's
seat an agent took over, is left out, and :func:`voided_note` says how many.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

from games.experience.context import SETTINGS

TABLE2_COLUMNS = ("task", "setting", "model", "score", "improve_pct", "ci_low", "ci_high", "n")


def t95(df: float) -> float:
    """The 0.975 quantile of Student's t with ``df`` degrees of freedom (scipy); NaN below 1 (or
    NaN)."""
    if df is None or df != df or df < 1:
        return math.nan
    from scipy.stats import t  # here, not at import: the site's processes load this module

    return float(t.ppf(0.975, df))


def wilson(wins: float, n: int) -> tuple[float, float]:
    """The Wilson score 95% interval of ``wins`` (a whole number) out of ``n`` (scipy's
    ``binomtest(...).proportion_ci(method="wilson")``). The one copy: the analysis's win-rate
    intervals call it too."""
    from scipy.stats import binomtest

    ci = binomtest(round(wins), int(n)).proportion_ci(0.95, method="wilson")
    return float(ci.low), float(ci.high)


def improve(value: float, baseline: float | None) -> float | None:
    """Relative change in percent, as in Table 2; None when there is no (or a zero) baseline.

    >>> round(improve(0.2563, 0.2422), 2)
    5.82
    """
    if baseline is None or baseline == 0 or baseline != baseline or value != value:
        return None
    return (value - baseline) / baseline * 100


def oracle_failed(record: Mapping[str, Any]) -> bool:
    """Whether a record says its answering seat failed (the game is then not scored)."""
    if record.get("oracle_failed"):
        return True
    outcome = record.get("outcome") or {}
    return any(isinstance(v, dict) and v.get("oracle_failed") for v in outcome.values())


def is_scored(record: Mapping[str, Any]) -> bool:
    """Whether a game counts: its answering seat did not fail, it was played to its end (not
    ended by failed model calls, ``ended`` "model_failed", nor stopped by its table), and a
    person's seat was not taken over by an agent (a missed deadline or a dropout)."""
    return (
        not oracle_failed(record)
        and (record.get("ended") or "finished") == "finished"
        and not record.get("taken_over")
    )


def void_reason(record: Mapping[str, Any]) -> str | None:
    """Why a game is not scored, in words (None for a scored game)."""
    if record.get("taken_over"):
        return "a person's seat was taken over"
    if oracle_failed(record):
        return "the oracle failed"
    ended = record.get("ended") or "finished"
    if ended == "model_failed":
        return f"ended by failed model calls (seat {record.get('failed_seat')})"
    if ended != "finished":
        return f"ended early ({ended})"
    return None


def voided_note(records: Iterable[Mapping[str, Any]]) -> str:
    """How many games were voided and why ("" when none was): they are counted in no n."""
    records = list(records)
    reasons: dict[str, int] = defaultdict(int)
    for record in records:
        reason = void_reason(record)
        if reason is not None:
            reasons[reason.split(" (seat")[0]] += 1
    if not reasons:
        return ""
    why = "; ".join(f"{what}: {n}" for what, n in sorted(reasons.items()))
    return f"{sum(reasons.values())} of {len(records)} games voided, counted in no n ({why})"


def player_kind(player: str) -> str:
    return "offline" if player.startswith("offline:") else "model"


def _order(setting: str) -> int:
    return SETTINGS.index(setting) if setting in SETTINGS else len(SETTINGS)


def table2(rows: Iterable[Mapping[str, Any]], baseline: str = "none") -> list[dict[str, Any]]:
    """Table 2 in long form from scored games, one row (:data:`TABLE2_COLUMNS`) per task,
    setting and non-human player, ordered by task, player and the paper's order of settings.

    Each input row needs ``game``, ``setting``, ``reward`` and ``player`` (or ``model``);
    ``player_kind`` defaults from the spec. ``score`` is the mean reward; ``improve_pct`` the
    Improve % against ``baseline`` (None for the baseline, a zero or missing baseline, and an
    offline agent, which reads no policy); the interval is Wilson's when every reward of the task
    is 0 or 1 (Undercover wins, math answers), else Student's t (None below two games)."""
    groups: dict[tuple[str, str, str], list[float]] = defaultdict(list)
    binary: dict[str, bool] = {}
    offline: set[str] = set()
    for row in rows:
        player = str(row.get("player") or row["model"])
        kind = row.get("player_kind") or player_kind(player)
        if kind == "human":
            continue
        if kind == "offline":
            offline.add(player)
        reward = float(row["reward"])
        game = str(row["game"])
        groups[(game, str(row["setting"]), player)].append(reward)
        binary[game] = binary.get(game, True) and reward in (0.0, 1.0)
    means = {key: sum(values) / len(values) for key, values in groups.items()}
    out = []
    for key in sorted(groups, key=lambda k: (k[0], k[2], _order(k[1]), k[1])):
        game, setting, player = key
        values = groups[key]
        n, score = len(values), means[key]
        if binary[game]:
            low, high = wilson(sum(values), n)
        elif n > 1:
            sd = math.sqrt(sum((v - score) ** 2 for v in values) / (n - 1))
            half = t95(n - 1) * sd / math.sqrt(n)
            low, high = score - half, score + half
        else:
            low = high = None
        change = None
        if setting != baseline and player not in offline:
            change = improve(score, means.get((game, baseline, player)))
        values = (game, setting, player, score, change, low, high, n)
        out.append(dict(zip(TABLE2_COLUMNS, values, strict=True)))
    return out


def summarize(records: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """:func:`table2` of the scored experiment records."""
    return table2(record for record in records if is_scored(record))


def format_summary(rows: list[dict[str, Any]]) -> str:
    """A plain-text table for the terminal."""
    header = (
        f"{'task':<17} {'model':<28} {'setting':<18} {'n':>5} {'score':>8} "
        f"{'95% interval':>17} {'improve%':>9}"
    )
    lines = [header, "-" * len(header)]
    for row in rows:
        change = "" if row["improve_pct"] is None else f"{row['improve_pct']:+.2f}"
        if row["improve_pct"] is None and row["setting"] != "none":
            change = "NA"
        low, high = row["ci_low"], row["ci_high"]
        interval = "" if low is None or high is None else f"[{low:.4f}, {high:.4f}]"
        lines.append(
            f"{row['task']:<17} {row['model']:<28} {row['setting']:<18} {row['n']:>5} "
            f"{row['score']:>8.4f} {interval:>17} {change:>9}"
        )
    return "\n".join(lines)
