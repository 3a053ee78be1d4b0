"""The paper's outputs from a games frame: Table 2 (DataFrame, Markdown, HTML) and the two figures.

The Markdown and HTML follow the paper's marking: in each game's block, per player column, the
best setting mean is bold and the second best underlined (Improve % rows are not ranked).
:func:`write_report` is what ``python -m analysis report`` and the dashboard download call.
"""

from __future__ import annotations

import html
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from analysis import metrics
from analysis.figure_data import (
    GAME_LABELS,
    SETTING_LABELS,
    band,
    drawn_data,
    model_label,
)
from analysis.left_out import left_out_text
from analysis.plots import Line, bars_figure, curves_figure, save_figure
from analysis.role_curves import role_curves_figure
from analysis.safe_frames import safe_frame
from analysis.summary import Summary, summarize


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


def cell_text(value: float, row: str, note: str = "") -> str:
    """Means with four decimals, Improve % with two. A missing mean (the player never ran that
    setting) is a dash; a missing Improve % (a zero or missing baseline) is NA, as in the paper.
    ``note`` follows an Improve %: ``within noise`` (its 95% interval holds 0) or ``reads no
    policy`` (an offline agent, whose differences are not gains)."""
    if pd.isna(value):
        text = "NA" if row == "improve" else "–"
    else:
        text = f"{value:.2f}" if row == "improve" else f"{value:.4f}"
    return f"{text} ({note})" if note else text


def notes(differences: pd.DataFrame | None) -> dict[tuple[str, str, str], str]:
    """(game, setting, player) -> the note of its Improve % cell."""
    out: dict[tuple[str, str, str], str] = {}
    if differences is None:
        return out
    for row in differences.itertuples(index=False):
        if not row.reads_policy:
            out[(row.game, row.setting, row.player)] = "reads no policy"
        elif row.within_noise:
            out[(row.game, row.setting, row.player)] = "within noise"
    return out


def _rows(
    table: pd.DataFrame, differences: pd.DataFrame | None = None
) -> list[tuple[str, str, str, list[tuple[str, str]]]]:
    """(game label or "", row label, row kind, [(text, mark)]) per row; the game once per block."""
    flags = marks(table)
    noted = notes(differences)
    rows, previous = [], None
    for key, values in table.iterrows():
        game, setting, row = key
        label = "Improve (%)" if row == "improve" else SETTING_LABELS.get(setting, setting)
        cells = [
            (
                cell_text(v, row, noted.get((game, setting, c), "") if row == "improve" else ""),
                flags.loc[key, c],
            )
            for c, v in values.items()
        ]
        rows.append((GAME_LABELS.get(game, game) if game != previous else "", label, row, cells))
        previous = game
    return rows


def table_markdown(table: pd.DataFrame, differences: pd.DataFrame | None = None) -> str:
    """Table 2 as a Markdown table; best ``**bold**``, second ``<u>underlined</u>``."""
    wrap = {"best": "**{}**", "second": "<u>{}</u>", "": "{}"}
    rows = [["Game", "Setting", *table.columns], ["---", "---", *("---:" for _ in table.columns)]]
    for game, label, _, cells in _rows(table, differences):
        rows.append([game, label, *(wrap[mark].format(text) for text, mark in cells)])
    return "".join("| " + " | ".join(row) + " |\n" for row in rows)


def table_html(table: pd.DataFrame, differences: pd.DataFrame | None = None) -> str:
    """Table 2 as an HTML table; best in ``<strong>``, second in ``<u>``."""
    wrap = {"best": "<strong>{}</strong>", "second": "<u>{}</u>", "": "{}"}
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in table.columns)
    body = []
    for game, label, row, cells in _rows(table, differences):
        tds = "".join(f"<td>{wrap[mark].format(html.escape(text))}</td>" for text, mark in cells)
        body.append(
            f'<tr class="{row}"><th>{html.escape(game)}</th><th>{html.escape(label)}</th>{tds}</tr>'
        )
    return (
        '<table class="settings-table">\n'
        f"<thead><tr><th>Game</th><th>Setting</th>{head}</tr></thead>\n"
        "<tbody>\n" + "\n".join(body) + "\n</tbody>\n</table>\n"
    )


_LATEX_SPECIAL = {c: f"\\{c}" for c in "&%$#_{}"} | {"~": r"\textasciitilde{}"}


def latex_escape(text: str) -> str:
    """Text safe inside a LaTeX table cell.

    >>> latex_escape("w/ 50% & more_x")
    'w/ 50\\% \\& more\\_x'
    """
    return "".join(_LATEX_SPECIAL.get(c, c) for c in text)


def table_latex(table: pd.DataFrame, differences: pd.DataFrame | None = None) -> str:
    """Table 2 as a LaTeX ``tabular`` (booktabs), best ``\\textbf``, second ``\\underline``,
    a rule between games, as the paper sets it."""
    wrap = {"best": "\\textbf{{{}}}", "second": "\\underline{{{}}}", "": "{}"}
    columns = " & ".join(latex_escape(str(c)) for c in table.columns)
    lines = [
        "\\begin{tabular}{ll" + "r" * len(table.columns) + "}",
        "\\toprule",
        f"Task & Setting & {columns} \\\\",
    ]
    for game, label, _, cells in _rows(table, differences):
        if game:
            lines.append("\\midrule")
        texts = " & ".join(wrap[mark].format(latex_escape(text)) for text, mark in cells)
        lines.append(f"{latex_escape(game)} & {latex_escape(label)} & {texts} \\\\")
    lines += ["\\bottomrule", "\\end{tabular}"]
    return "\n".join(lines) + "\n"


def model_lines(summary: Summary, game: str, settings: list[str] | None = None) -> list[Line]:
    curves = summary.curves[summary.curves["game"] == game]
    if settings is not None:
        curves = curves[curves["setting"].isin(settings)]
    return [
        Line(
            model_label(player, setting),
            rows["t"].tolist(),
            rows["R"].tolist(),
            n=rows["n"].tolist() if "n" in rows else None,
            **band(rows),
        )  # fmt: skip
        for (player, setting), rows in curves.groupby(["player", "setting"], sort=True)
    ]


def who(condition: str) -> str:
    """How a figure names the people of a condition ("" in a study of one arm)."""
    return f"condition {condition}" if condition else "all people"


def participant_lines(curves: pd.DataFrame, condition: str = "") -> list[Line]:
    """One faint line per participant (ordered by pseudonym), each in the order of its rows: the
    groups cut from one sorted array rather than a pandas group per person."""
    ordered = curves.sort_values(["player", "t"], kind="stable")
    players = ordered["player"].to_numpy()
    cuts = np.flatnonzero(players[1:] != players[:-1]) + 1
    return [
        Line(
            f"participant {name[0]}",
            t.tolist(),
            r.tolist(),
            kind="thin",
            condition=condition,
            n=[1] * len(t),
            legend=f"each person: {who(condition)}",
        )  # fmt: skip
        for name, t, r in zip(
            np.split(players, cuts),
            np.split(ordered["t"].to_numpy(), cuts),
            np.split(ordered["R"].to_numpy(), cuts),
            strict=True,
        )
        if len(t)
    ]


def mean_line(rows: pd.DataFrame, condition: str) -> Line:
    """A condition's mean R(t) with its 95% band and the people behind each point."""
    return Line(
        f"mean, 95% interval: {who(condition)}", rows["t"].tolist(), rows["R"].tolist(),
        kind="mean", condition=condition, n=rows["n"].tolist(), **band(rows),
    )  # fmt: skip


def study_figure(
    summary: Summary, game: str = "twenty-questions"
) -> tuple[Figure, pd.DataFrame] | None:
    """The human study's figure (the paper's fig. 4), per condition: each person's R(t) (faint,
    in the condition's colour), each condition's mean with its 95% band and n, in one panel of
    people (or a steady and a variable panel, when the per-participant table has groups); the
    model arm in a panel of its own, each model and setting in its own style with its band and
    number of samples; the perfect-binary-questioning line in every panel. Models are left out
    when their games are not comparable with the people's, and the figure says why (its note
    lists ``summary.problems``). None without any curve."""
    people = summary.participants[summary.participants["game"] == game]
    curves = summary.human_curves[summary.human_curves["game"] == game]
    every_model = model_lines(summary, game)
    models = every_model if summary.comparable or people.empty else []
    note = ""
    if every_model and not models:
        note = (
            "Model arm not drawn: its games differ from the people's ("
            + "; ".join([p for p in summary.problems if p.startswith(game)] or summary.problems)
            + ")."
        )
    if people.empty and not models:
        return None
    condition = dict(
        zip(people["player"], people["condition"].astype(object).fillna("").astype(str),
            strict=True)
    )  # fmt: skip
    curves = curves.assign(condition=curves["player"].map(condition).fillna(""))
    groups: dict[str, list[str]] = {}
    if len(people) and (people["group"] != "").all():
        for label, key in (("Steady", "steady"), ("Variable", "variable")):
            members = list(people.loc[people["group"] == key, "player"])
            groups[f"{label} participants (n = {len(members)})"] = members
    elif len(people):
        groups[f"People (n = {len(people)})"] = list(people["player"])
    reference = []
    if summary.reference is not None and game == "twenty-questions":
        label = f"reference: {metrics.REFERENCE_LABEL}"
        reference = [Line(label, [1], [summary.reference], kind="reference")]
    panels: dict[str, list[Line]] = {}
    order = sorted(set(condition.values()))
    for title, members in groups.items():
        chosen = curves[curves["player"].isin(members)]
        means = metrics.mean_of_curves(chosen)
        lines: list[Line] = []
        for name in order:
            mine = chosen[chosen["condition"] == name]
            if mine.empty:
                continue
            lines += participant_lines(mine, name)
            lines.append(mean_line(means[means["condition"] == name], name))
        panels[title] = lines + reference
    if models:
        panels["Model arm (games of agents only)"] = models + reference
    drawn = [(title, line) for title, lines in panels.items() for line in lines]
    figure = curves_figure(panels, columns=2, note=note)
    return figure, drawn_data(drawn)


def cumulative_figure(
    summary: Summary, game: str = "twenty-questions", base: str = "none", exp: str = "cumulative"
) -> tuple[Figure, pd.DataFrame] | None:
    """Figure 3: per model, R(t) with experience against its baseline, with bands across
    samples; None without a with-experience curve. Each setting has one look in every panel and
    the legend names only what is drawn."""
    curves = summary.curves[(summary.curves["game"] == game)]
    if not (curves["setting"] == exp).any():
        return None
    panels, drawn = {}, []
    for player, rows in curves.groupby("player", sort=True):
        lines = [
            Line(SETTING_LABELS.get(setting, setting), part["t"].tolist(), part["R"].tolist(),
                 n=part["n"].tolist(), say_n=False, **band(part))
            for setting in (exp, base)
            if len(part := rows[rows["setting"] == setting])
        ]  # fmt: skip
        samples = sorted({int(k) for line in lines for k in line.n or () if pd.notna(k)})
        most = samples[-1] if samples else 0
        title = f"{player} (n = {most} sample{'' if most == 1 else 's'})"
        panels[title] = lines
        drawn += [(title, line) for line in lines]
    return curves_figure(panels), drawn_data(drawn)


def roles_figure(summary: Summary, game: str = "undercover") -> tuple[Figure, pd.DataFrame] | None:
    """Undercover: win rate by role with Wilson 95% error bars, the games at people's tables (the
    people, per condition, and the agents seated with them) apart from the model arm's games of
    agents only; None without games that have winners."""
    rates = summary.win_rates[summary.win_rates["game"] == game]
    if rates.empty:
        return None
    series = []
    for row in rates.itertuples(index=False):
        if row.who == "people":
            series.append(f"people, {row.condition}" if row.condition else "people")
        else:
            series.append(model_label(row.who, row.setting))
    rates = rates.assign(series=series)
    panels: dict[str, dict[str, list[tuple]]] = {}
    titles = {metrics.PEOPLE_TABLES: "At people's tables", metrics.MODEL_ARM: "Model arm"}
    arms = {metrics.PEOPLE_TABLES: 0, metrics.MODEL_ARM: 1}
    roles = sorted(set(rates["role"]), key=lambda role: (role == "all", role))
    rates = rates.assign(
        _arm=rates["arm"].map(arms).fillna(2), _role=rates["role"].map(roles.index)
    ).sort_values(["_arm", "_role"], kind="stable")
    rates = rates.drop(columns=["_arm", "_role"]).reset_index(drop=True)
    for row in rates.itertuples(index=False):
        panel = f"{titles.get(row.arm, row.arm)}: {GAME_LABELS.get(game, game)}"
        panels.setdefault(panel, {}).setdefault(row.role, []).append(
            (row.series, row.win_rate, row.low, row.high, row.games)
        )
    data = pd.DataFrame(
        {
            "panel": [f"{titles.get(a, a)}: {GAME_LABELS.get(game, game)}" for a in rates["arm"]],
            "condition": rates["condition"].to_numpy(),
            "series": rates["series"].to_numpy(),
            "kind": "bar",
            "t": pd.array([None] * len(rates), dtype="Int64"),
            "role": rates["role"].to_numpy(),
            "mean": rates["win_rate"].astype("float64").to_numpy(),
            "low": rates["low"].astype("float64").to_numpy(),
            "high": rates["high"].astype("float64").to_numpy(),
            "n": rates["games"].astype("Int64").to_numpy(),
            "wins": rates["wins"].astype("Int64").to_numpy(),
        }
    )
    return bars_figure(panels=panels), data


def figures(summary: Summary) -> dict[str, tuple[Figure, pd.DataFrame]]:
    """Every figure the data supports, by file stem."""
    out = {}
    games = sorted(
        set(summary.curves["game"])
        | set(summary.participants["game"])
        | set(summary.win_rates["game"])
    )
    for game in games:
        if game == "undercover":
            made = roles_figure(summary, game)
            if made is not None:
                out[f"roles-{game}"] = made
            if not summary.participants[summary.participants["game"] == game].empty:
                # the people's R(t) next to the model arm's, as Twenty Questions has
                made = study_figure(summary, game)
                if made is not None:
                    out[f"study-{game}"] = made
                # and role by role, round by round, side by side
                made = role_curves_figure(
                    summary.role_rounds, summary.comparable, "" if summary.comparable else
                    "Model arm not drawn: its games differ from the people's (see the notes).",
                )  # fmt: skip
                if made is not None:
                    out[f"rounds-{game}"] = made
            continue
        made = study_figure(summary, game)
        if made is not None:
            out[f"study-{game}"] = made
        made = cumulative_figure(summary, game)
        if made is not None:
            out[f"cumulative-{game}"] = made
    return out


def voided_games(games: pd.DataFrame) -> dict[str, int]:
    """The games left out of every score, by reason: the oracle failed, failed model calls ended
    the game (``ended`` "model_failed": an Undercover seat or a questioner failing three times in
    a row), another early end, or a person's seat taken over."""
    if not len(games):
        return {}
    ended = (
        games["ended"].astype("string").fillna("finished")
        if "ended" in games
        else pd.Series("finished", index=games.index)
    )

    def flag(name: str) -> pd.Series:
        if name not in games:
            return pd.Series(False, index=games.index)
        return games[name].fillna(False).astype(bool)

    taken, oracle = flag("taken_over"), flag("oracle_failed")
    reasons = {
        "the oracle failed": oracle & ~taken,
        "ended by failed model calls": (ended == "model_failed") & ~oracle & ~taken,
        "ended early (aborted or unfinished)": ~ended.isin(["finished", "model_failed"])
        & ~oracle
        & ~taken,
        "a person's seat was taken over": taken,
    }
    return {why: int(rows.sum()) for why, rows in reasons.items() if rows.any()}


def voided_text(voided: dict[str, int], games: int) -> str:
    why = "; ".join(f"{what}: {n}" for what, n in voided.items())
    return f"{sum(voided.values())} of {games} games voided, counted in no n ({why})."


def write_tables(
    summary: Summary, out: str | Path, voided: dict[str, int] | None = None
) -> list[Path]:
    """Table 2 (``table.md``, ``table.html``, ``table.csv``) and every other table of the summary
    as formula-safe CSV (``curves``, ``differences``, ``participants``, ``human_curves``,
    ``human_mean``, ``win_rates``; ``people_left_out`` when someone was), plus ``notes.md`` when people were left
    out (pilots, screened, withdrawn), games were voided (``voided``, :func:`voided_games`; also
    named under ``table.md``) or the people and the models cannot share a figure."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    written = [out / "table.md", out / "table.html"]
    voided_line = voided_text(voided, summary.games) if voided else ""
    table = table_markdown(summary.table, summary.differences)
    written[0].write_text(table + (f"\n{voided_line}\n" if voided_line else ""), encoding="utf-8")
    written[1].write_text(table_html(summary.table, summary.differences), encoding="utf-8")
    for name, frame in summary.frames().items():
        path = out / f"{name}.csv"
        safe_frame(frame).to_csv(path, index=False)
        written.append(path)
    lines = []
    if voided_line:
        lines += ["# Games voided\n\n", voided_line + "\n\n"]
    if summary.people_left_out:
        lines += [
            "# People left out\n\n",
            f"Left out of the people's curves, means and tables: "
            f"{left_out_text(summary.people_left_out)} (pilots, and people screened out "
            "or withdrawn; `people_left_out.csv`). Pass --include-all-people to count them.\n",
        ]
    if summary.problems:
        lines += ["\n" if lines else "", "# Not drawn together\n\n"]
        lines += [f"- {problem}\n" for problem in summary.problems]
        lines.append(
            "\nThe people's and the models' games differ as above, so the figures show the people "
            "only. Pass --allow-mixed to draw them together anyway.\n"
            if not summary.mixed
            else "\nDrawn together anyway, as asked (--allow-mixed).\n"
        )
    if lines:
        written.append(out / "notes.md")
        written[-1].write_text("".join(lines), encoding="utf-8")
    return written


def write_report(
    games: pd.DataFrame,
    out: str | Path,
    allow_mixed: bool = False,
    include_all_people: bool = False,
    also_left_out: dict[str, int] | None = None,
) -> list[Path]:
    """Summarise the games (:func:`analysis.summary.summarize`) and write its tables and every
    figure it supports (PNG, SVG, PDF, and the figure's data as CSV); return the paths.
    ``include_all_people``: pilots and screened or withdrawn people count too;
    ``also_left_out``: people the frame does not hold, by reason, added to the counts."""
    summary = summarize(
        games,
        allow_mixed=allow_mixed,
        include_all_people=include_all_people,
        also_left_out=also_left_out,
    )
    written = write_tables(summary, out, voided_games(games))
    for stem, (figure, data) in figures(summary).items():
        written += save_figure(figure, Path(out) / stem, data)
    return written
