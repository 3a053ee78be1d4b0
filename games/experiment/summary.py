"""The end-of-run summary in the shape of the paper's Table 2: per model and setting, the mean
reward (NDCG@20 for Twenty Questions, win rate for Undercover) and the change against ``none``."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import Any


def improve(value: float, baseline: float | None) -> float | None:
    """Relative change in percent, as in Table 2; None when there is no (or a zero) baseline.

    >>> round(improve(0.2563, 0.2422), 2)
    5.82
    """
    if baseline is None or baseline == 0:
        return None
    return (value - baseline) / baseline * 100


def summarize(records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per (game, model, setting) with games, mean reward, win rate and Improve %."""
    groups: dict[tuple[str, str, str], list[dict[str, Any]]] = defaultdict(list)
    for record in records:
        groups[(record["game"], record["model"], record["setting"])].append(record)
    means = {key: sum(r["reward"] for r in rows) / len(rows) for key, rows in groups.items()}
    table = []
    for (game, model, setting), rows in sorted(groups.items()):
        wins = [r["win"] for r in rows if r["win"] is not None]
        mean = means[(game, model, setting)]
        table.append(
            {
                "game": game,
                "model": model,
                "setting": setting,
                "games": len(rows),
                "mean_reward": mean,
                "win_rate": sum(wins) / len(wins) if wins else None,
                "improve_pct": None
                if setting == "none"
                else improve(mean, means.get((game, model, "none"))),
            }
        )
    return table


def format_summary(rows: list[dict[str, Any]]) -> str:
    """A plain-text table for the terminal."""
    header = f"{'game':<17} {'model':<28} {'setting':<18} {'games':>5} {'reward':>8} {'win':>6} {'improve%':>9}"
    lines = [header, "-" * len(header)]
    for row in rows:
        win = "" if row["win_rate"] is None else f"{row['win_rate']:.4f}"
        change = "NA" if row["improve_pct"] is None else f"{row['improve_pct']:+.2f}"
        if row["setting"] == "none":
            change = ""
        lines.append(
            f"{row['game']:<17} {row['model']:<28} {row['setting']:<18} {row['games']:>5} "
            f"{row['mean_reward']:>8.4f} {win:>6} {change:>9}"
        )
    return "\n".join(lines)
