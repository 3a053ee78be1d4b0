"""What every figure shares: the names of settings and games as figures print them, and the
numbers a figure draws in long form (its CSV, :data:`FIGURE_COLUMNS`)."""

from __future__ import annotations

import pandas as pd

from analysis.plots import Line

SETTING_LABELS = {
    "none": "w/o Policy",
    "rule-policy": "w/ Rule Policy",
    "experience-policy": "w/ Exp. Policy",
    "human-policy": "w/ Human Policy",
    "full-experience": "w/ Full Experience",
    "cumulative": "w/ Cumulative Policy",
}
GAME_LABELS = {
    "math": "Single-Turn Math",
    "twenty-questions": "Twenty Questions",
    "undercover": "Who is Undercover",
}


def model_label(player: str, setting: str) -> str:
    return f"{player}, {SETTING_LABELS.get(setting, setting)}"


def band(rows: pd.DataFrame) -> dict:
    if "low" not in rows or rows["low"].isna().all():
        return {}
    return {"low": rows["low"].tolist(), "high": rows["high"].tolist()}


# The columns of every figure's CSV, in long form: one row per panel, series and point.
FIGURE_COLUMNS = ["panel", "condition", "series", "kind", "t", "mean", "low", "high", "n"]


def drawn_data(lines: list[tuple[str, Line]]) -> pd.DataFrame:
    """The numbers drawn: one row per panel, series and point (:data:`FIGURE_COLUMNS`)."""
    rows = []
    for panel, line in lines:
        lows = line.low if line.low is not None else [None] * len(line.t)
        highs = line.high if line.high is not None else [None] * len(line.t)
        ns = line.n if line.n is not None else [None] * len(line.t)
        for t, value, low, high, n in zip(line.t, line.values, lows, highs, ns, strict=True):
            rows.append(
                {"panel": panel, "condition": line.condition, "series": line.label,
                 "kind": line.kind, "t": t, "mean": value, "low": low, "high": high, "n": n}
            )  # fmt: skip
    frame = pd.DataFrame(rows, columns=FIGURE_COLUMNS)
    return frame.astype({"t": "Int64", "n": "Int64", "mean": "float64", "low": "float64",
                         "high": "float64"})  # fmt: skip
