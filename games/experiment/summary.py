"""The end-of-run summary in the shape of the paper's Table 2: per task, model and setting, the mean
reward (NDCG@20 for Twenty Questions, win rate for Undercover, accuracy for math), its 95% interval
and the change against ``none``.

There is one computation of that table: :func:`analysis.summary.summarize` (its ``rows`` frame,
``analysis.metrics.table2_rows``). This module only turns records into the analysis's games frame
and formats the rows, so the printed summary, ``reproduce``'s ``table2.csv`` and
``python -m analysis report`` leave out the same games (an oracle that failed) and agree.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from analysis.metrics import improve_percent


def improve(value: float, baseline: float | None) -> float | None:
    """Relative change in percent, as in Table 2; None when there is no (or a zero) baseline.

    >>> round(improve(0.2563, 0.2422), 2)
    5.82
    """
    if baseline is None:
        return None
    change = improve_percent(value, baseline)
    return None if change != change else change


def summarize(records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Table 2 rows (``analysis.metrics.TABLE2_COLUMNS``) as dicts, None for a missing value,
    from experiment records, scored as the analysis scores them."""
    from analysis import frames
    from analysis.summary import summarize as analyse

    records = list(records)
    if not records:
        return []
    rows = analyse(frames.games_frame(records)).rows
    out = []
    for row in rows.to_dict("records"):
        out.append({k: (None if isinstance(v, float) and v != v else v) for k, v in row.items()})
    return out


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
