"""The paper's outputs from a games frame: Table 2 (DataFrame, Markdown, HTML) and the two figures.

The Markdown and HTML follow the paper's marking: in each game's block, per player column, the
best setting mean is bold and the second best underlined (Improve % rows are not ranked).
:func:`write_report` is what ``python -m analysis report`` and the dashboard download call.
"""

from __future__ import annotations

import html
from pathlib import Path

import pandas as pd
from matplotlib.figure import Figure

from analysis import metrics
from analysis.plots import Line, curves_figure, save_figure

SETTING_LABELS = {
    "none": "w/o Policy",
    "rule-policy": "w/ Rule Policy",
    "experience-policy": "w/ Exp. Policy",
    "human-policy": "w/ Human Policy",
    "full-experience": "w/ Full Experience",
    "cumulative": "w/ Cumulative Policy",
}
GAME_LABELS = {"twenty-questions": "Twenty Questions", "undercover": "Who is Undercover"}


def marks(table: pd.DataFrame) -> pd.DataFrame:
    """``best``, ``second`` or empty for every cell of :func:`metrics.settings_table`. Equal
    values share a mark; the second best is the next lower distinct value."""
    out = pd.DataFrame("", index=table.index, columns=table.columns)
    means = table[table.index.get_level_values("row") == "mean"]
    for _, block in means.groupby(level="game", sort=False):
        for column in table.columns:
            ranked = sorted(set(block[column].dropna()), reverse=True)
            for mark, value in zip(("best", "second"), ranked, strict=False):
                out.loc[block.index[block[column] == value], column] = mark
    return out


def cell_text(value: float, row: str) -> str:
    """Means with four decimals, Improve % with two. A missing mean (the player never ran that
    setting) is a dash; a missing Improve % (a zero or missing baseline) is NA, as in the paper."""
    if pd.isna(value):
        return "NA" if row == "improve" else "–"
    return f"{value:.2f}" if row == "improve" else f"{value:.4f}"


def _rows(table: pd.DataFrame) -> list[tuple[str, str, str, list[tuple[str, str]]]]:
    """(game label or "", row label, row kind, [(text, mark)]) per row; the game once per block."""
    flags = marks(table)
    rows, previous = [], None
    for key, values in table.iterrows():
        game, setting, row = key
        label = "Improve (%)" if row == "improve" else SETTING_LABELS.get(setting, setting)
        cells = [(cell_text(v, row), flags.loc[key, c]) for c, v in values.items()]
        rows.append((GAME_LABELS.get(game, game) if game != previous else "", label, row, cells))
        previous = game
    return rows


def table_markdown(table: pd.DataFrame) -> str:
    """Table 2 as a Markdown table; best ``**bold**``, second ``<u>underlined</u>``."""
    wrap = {"best": "**{}**", "second": "<u>{}</u>", "": "{}"}
    rows = [["Game", "Setting", *table.columns], ["---", "---", *("---:" for _ in table.columns)]]
    for game, label, _, cells in _rows(table):
        rows.append([game, label, *(wrap[mark].format(text) for text, mark in cells)])
    return "".join("| " + " | ".join(row) + " |\n" for row in rows)


def table_html(table: pd.DataFrame) -> str:
    """Table 2 as an HTML table; best in ``<strong>``, second in ``<u>``."""
    wrap = {"best": "<strong>{}</strong>", "second": "<u>{}</u>", "": "{}"}
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in table.columns)
    body = []
    for game, label, row, cells in _rows(table):
        tds = "".join(f"<td>{wrap[mark].format(html.escape(text))}</td>" for text, mark in cells)
        body.append(
            f'<tr class="{row}"><th>{html.escape(game)}</th><th>{html.escape(label)}</th>{tds}</tr>'
        )
    return (
        '<table class="settings-table">\n'
        f"<thead><tr><th>Game</th><th>Setting</th>{head}</tr></thead>\n"
        "<tbody>\n" + "\n".join(body) + "\n</tbody>\n</table>\n"
    )


def cumulative_figure(
    games: pd.DataFrame,
    game: str = "twenty-questions",
    base: str = "none",
    exp: str = "cumulative",
) -> Figure | None:
    """Figure 3: per model, R(t) with experience against its baseline; None without such games."""
    agents = games[(games["game"] == game) & (games["player_kind"] != "human")]
    curves = metrics.cumulative_curves(agents, base=base, exp=exp)
    if not (curves["setting"] == exp).any():
        return None
    panels = {}
    for player, rows in curves.groupby("player", sort=True):
        panels[player] = [
            Line(SETTING_LABELS.get(setting, setting), part["t"], part["R"])
            for setting in (exp, base)
            if len(part := rows[rows["setting"] == setting])
        ]
    return curves_figure(panels)


def best_model_curve(games: pd.DataFrame, game: str, exp: str = "cumulative") -> pd.DataFrame:
    """The with-experience curve of the model that ends highest; empty when no model has one."""
    models = games[(games["game"] == game) & (games["player_kind"] == "model")]
    curves = metrics.cumulative_curves(models, exp=exp)
    curves = curves[curves["setting"] == exp]
    if curves.empty:
        return curves
    final = curves.groupby("player")["R"].last()
    return curves[curves["player"] == final.idxmax()]


def human_figure(games: pd.DataFrame, game: str = "twenty-questions") -> Figure | None:
    """Figure 4: each participant's curve, split into the steady and the variable half, with the
    best model and the reference line; None when there are no human games."""
    humans = games[(games["game"] == game) & (games["player_kind"] == "human")]
    if humans.empty:
        return None
    curves = metrics.player_curves(humans)
    groups = metrics.variance_groups(humans).set_index("player")["group"]
    rounds = int(curves["t"].max())
    best = best_model_curve(games, game)
    best = best[best["t"] <= rounds]
    reference = metrics.reference_reward(games, game)
    panels = {}
    for group in ("steady", "variable"):
        members = groups.index[groups == group]
        lines = [
            Line(player, rows["t"], rows["R"])
            for player, rows in curves[curves["player"].isin(members)].groupby("player")
        ]
        if not lines:
            continue
        if not best.empty:
            label = f"best model: {best['player'].iloc[0]}"
            lines.append(Line(label, best["t"], best["R"], kind="emphasis"))
        if reference is not None:
            value, source = reference
            lines.append(Line(f"reference: {source}", [1, rounds], [value] * 2, kind="reference"))
        panels[f"{group.capitalize()} participants"] = lines
    return curves_figure(panels, columns=1)


def write_report(games: pd.DataFrame, out: str | Path) -> list[Path]:
    """Write Table 2 (``table.md``, ``table.html``, ``table.csv``), the curve data
    (``curves.csv``), win rates when games have winners (``win_rates.csv``) and the figures (PNG
    and SVG) that the data supports; return the paths."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    table = metrics.settings_table(games)
    written = [out / "table.md", out / "table.html", out / "table.csv", out / "curves.csv"]
    written[0].write_text(table_markdown(table), encoding="utf-8")
    written[1].write_text(table_html(table), encoding="utf-8")
    table.to_csv(written[2])
    agents = games[games["player_kind"] != "human"]
    metrics.cumulative_curves(agents).to_csv(written[3], index=False)
    if games["win"].notna().any():
        written.append(out / "win_rates.csv")
        metrics.win_rates(games).to_csv(written[-1], index=False)
    for game in sorted(games["game"].unique()):
        figure = cumulative_figure(games, game)
        if figure is not None:
            written += save_figure(figure, out / f"cumulative-{game}")
        figure = human_figure(games, game)
        if figure is not None:
            written += save_figure(figure, out / f"humans-{game}")
    return written
