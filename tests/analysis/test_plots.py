"""The figures: whole rounds, conditions apart with their n, legends made from what is drawn,
and files a venue accepts."""

import re

from matplotlib.colors import to_hex
from matplotlib.container import BarContainer

from analysis import report
from analysis.frames import games_frame
from analysis.plots import ONE_COLUMN, TWO_COLUMNS, Line, curves_figure, save_figure
from analysis.summary import summarize
from tests.analysis.conftest import curve_records, make_record


def test_it_puts_only_whole_rounds_on_the_x_axis():
    # Three rounds: matplotlib's default ticks would be 1.0, 1.25, 1.5, ...
    fig = curves_figure({"Twenty Questions": [Line("P-a", [1, 2, 3], [0.5, 0.4, 0.45])]})
    fig.canvas.draw()
    ticks = fig.axes[0].get_xticks()
    assert len(ticks) >= 2
    assert all(float(t).is_integer() for t in ticks)


def test_a_single_round_keeps_the_axis_about_it_and_the_reference_spans_the_plot():
    lines = [
        Line("P-a", [1], [0.5]),
        Line("reference: perfect binary questioning", [1, 1], [0.32, 0.32], kind="reference"),
    ]
    fig = curves_figure({"Twenty Questions": lines})
    fig.canvas.draw()
    ax = fig.axes[0]
    assert ax.get_xlim() == (0.5, 1.5)
    assert ax.get_ylim()[0] == 0.0  # the y axis starts at 0
    reference = [line for line in ax.get_lines() if line.get_label().startswith("reference")]
    assert len(reference) == 1
    # Drawn in axes coordinates from the left edge to the right edge, not as a zero-length segment.
    assert list(reference[0].get_xdata()) == [0, 1]


# --- figures per condition, legends made from what is drawn, files a venue accepts -------------


def person(player, condition, rewards):
    return [
        make_record(
            model=None, player=player, player_kind="human", setting="cumulative", round=t,
            sample=0, reward=r, condition=condition, table=f"{player}-{t}", oracle="offline:kb",
        )
        for t, r in enumerate(rewards)
    ]  # fmt: skip


def two_conditions():
    """Two people without a policy, two with one (one of whom left after round 2; too few for
    steady and variable groups), and a model arm whose two settings play alike (their curves
    coincide)."""
    records = person("P-a", "no-policy", [0.2, 0.3, 0.25])
    records += person("P-b", "no-policy", [0.1, 0.2, 0.3])
    records += person("P-d", "human-policy", [0.5, 0.6, 0.55])
    records += person("P-e", "human-policy", [0.6, 0.4])
    arm = curve_records(
        "offline:infogain",
        {s: [[0.3, 0.3], [0.3, 0.3], [0.3, 0.3]] for s in ("none", "cumulative")},
    )
    for i, record in enumerate(arm):
        record |= {"oracle": "offline:kb", "table": f"arm-{i}"}
    return summarize(games_frame(records + arm))


def drawn_series(figure):
    """(panel title, artist label, colour, line style, marker) of every labelled artist."""
    out = []
    for ax in figure.axes:
        if not ax.get_visible():
            continue
        for line in ax.get_lines():
            if not line.get_label().startswith("_"):
                out.append((ax.get_title(), line.get_label(), to_hex(line.get_color()),
                            str(line.get_linestyle()), str(line.get_marker())))  # fmt: skip
        for collection in ax.collections:
            if not collection.get_label().startswith("_"):
                colour = to_hex(collection.get_edgecolor()[0], keep_alpha=False)
                out.append((ax.get_title(), collection.get_label(), colour, "-", "None"))
    return out


def legend_entries(figure):
    legend = figure.legends[0]
    return [text.get_text() for text in legend.get_texts()]


def test_the_study_figure_draws_each_condition_apart_with_its_n_and_band():
    figure, data = report.study_figure(two_conditions())
    assert set(data.columns) >= {"condition", "series", "t", "mean", "low", "high", "n"}
    means = data[data["kind"] == "mean"]
    assert set(means["condition"]) == {"no-policy", "human-policy"}
    n = means.set_index(["condition", "t"])["n"]
    assert n[("no-policy", 1)] == 2 and n[("human-policy", 1)] == 2 and n[("human-policy", 3)] == 1
    # The band is drawn: a filled area per mean curve, and the y axis reaches its top.
    ax = next(a for a in figure.axes if a.get_title().startswith("People"))
    assert len([c for c in ax.collections if c.get_label().startswith("_band")]) == 2
    assert ax.get_ylim()[1] >= data["high"].max()
    # Each person's curve, faint, in the colour of their condition's mean.
    drawn = drawn_series(figure)
    colours = {label: colour for _, label, colour, *_ in drawn}
    for condition in ("no-policy", "human-policy"):
        mean = report.who(condition)
        assert colours[f"each person: {mean}"] == colours[next(k for k in colours if
                                                             k.startswith(f"mean, 95% interval: {mean}"))]  # fmt: skip
    assert (
        colours[next(k for k in colours if "no-policy" in k)]
        != colours[next(k for k in colours if "human-policy" in k)]
    )
    # n: constant in no-policy (in the legend), varying in human-policy (at each point).
    texts = legend_entries(figure)
    assert "mean, 95% interval: condition no-policy (n = 2)" in texts
    assert "mean, 95% interval: condition human-policy (n at each point)" in texts
    assert {t.get_text() for t in ax.texts} >= {"n=2", "n=1"}
    # The model arm in a panel of its own, titled so; the coinciding curves said in the legend.
    titles = [a.get_title() for a in figure.axes if a.get_visible()]
    assert titles == ["People (n = 4)", "Model arm (games of agents only)"]
    assert any("[same curve as offline:infogain" in text for text in texts)
    assert any(text.startswith("reference: perfect binary") for text in texts)


def test_every_drawn_series_is_in_the_csv_and_every_legend_entry_names_one_look():
    """The legend is made from the artists drawn: each entry's look is the look of every artist of
    that series, no two entries share a look, and each artist's series is a row of the CSV."""
    summary = two_conditions()
    for stem, (figure, data) in report.figures(summary).items():
        drawn = drawn_series(figure)
        looks = {}
        for panel, label, *look in drawn:
            assert looks.setdefault(label, tuple(look)) == tuple(look), (stem, label)
            base = re.sub(r" \((n = \d+|n at each point)\)", "", label).split(" [same")[0]
            rows = data[data["panel"] == panel]
            assert base in set(rows["series"]) or base in {
                f"each person: {report.who(c)}" for c in rows["condition"]
            }, (stem, panel, base)
        assert set(legend_entries(figure)) == set(looks), stem
        assert len(set(looks.values())) == len(looks), stem


def test_a_panel_with_only_the_baseline_draws_it_in_the_baseline_look():
    """The bug this guards: offline:random ran only w/o Policy, and its one line took the look
    the shared legend gave "w/ Cumulative Policy"."""
    records = curve_records("openai:m", {"none": [[0.2], [0.3]], "cumulative": [[0.4], [0.5]]})
    records += curve_records("offline:random", {"none": [[0.1], [0.1]]})
    records += curve_records("offline:z", {"cumulative": [[0.1], [0.1]]})
    figure, data = report.cumulative_figure(summarize(games_frame(records)))
    drawn = drawn_series(figure)
    looks = {label: tuple(look) for _, label, *look in drawn}
    assert len(looks) == 2  # one look per setting, whichever panel draws it
    for panel, label, *look in drawn:
        assert tuple(look) == looks[label]
        assert label in set(data.loc[data["panel"] == panel, "series"])
    assert legend_entries(figure) == list(looks)


def test_undercover_keeps_peoples_tables_and_the_model_arm_apart_with_wilson_intervals():
    def seat(table, player, kind, role, win, setting="none"):
        return make_record(
            game="undercover", model=None, player=player, player_kind=kind, setting=setting,
            table=table, role=role, win=win, reward=float(win), config={},
            events=[{"type": "clue", "seat": 0, "text": "red"}],
        )  # fmt: skip

    records = [seat("t1", "P-a", "human", "normal", True),
               seat("t1", "offline:kb", "offline", "undercover", False)]  # fmt: skip
    records += [seat(f"a{i}", "offline:kb", "offline", "normal", i % 2 == 0) for i in range(4)]
    summary = summarize(games_frame(records))
    rates = summary.win_rates.set_index(["arm", "who", "role"])
    assert rates.loc[("model arm", "offline:kb", "normal"), "games"] == 4
    assert rates.loc[("people's tables", "offline:kb", "undercover"), "games"] == 1
    low, high = rates.loc[("model arm", "offline:kb", "normal"), ["low", "high"]]
    assert 0.0 < low < 0.5 < high < 1.0  # Wilson, not a clipped normal interval
    figure, data = report.roles_figure(summary)
    assert {a.get_title() for a in figure.axes} == {
        "At people's tables: Who is Undercover",
        "Model arm: Who is Undercover",
    }
    assert set(data.columns) >= {"condition", "series", "t", "mean", "low", "high", "n"}
    # Every bar drawn is a row of the CSV, in its panel, and the legend names what is drawn.
    for ax in figure.axes:
        rows = data[data["panel"] == ax.get_title()]
        bars = [c for c in ax.containers if isinstance(c, BarContainer)]
        assert {c.get_label() for c in bars} == set(rows["series"]), ax.get_title()
        assert sum(len(c.patches) for c in bars) == len(rows)
    assert set(legend_entries(figure)) == set(data["series"])
    # The settings table (the model arm) reads the agents-only games only.
    assert summary.table.loc[("undercover", "none", "mean"), "offline:kb"] == 0.5


def test_figures_are_sized_for_venues_and_a_pdf_made_twice_is_the_same_bytes(tmp_path):
    summary = two_conditions()
    made = report.figures(summary)
    study, data = made["study-twenty-questions"]
    assert study.get_figwidth() == TWO_COLUMNS
    single, _ = report.curves_figure({"one": [report.Line("a", [1, 2], [0.1, 0.2])]}), None
    assert single.get_figwidth() == ONE_COLUMN
    first = save_figure(study, tmp_path / "a" / "study", data)
    again, again_data = report.study_figure(two_conditions())
    second = save_figure(again, tmp_path / "b" / "study", again_data)
    for one, two in zip(first, second, strict=True):
        assert one.read_bytes() == two.read_bytes(), one.name
    pdf = first[2].read_bytes()
    assert b"/Type3" not in pdf and b"/Subtype /Type3" not in pdf
    assert b"/FontFile2" in pdf  # TrueType embedded
    assert b"CreationDate" not in pdf
    sizes = {text.get_fontsize() for ax in study.axes for text in (ax.title, ax.xaxis.label)}
    assert sizes == {8.0}


def test_model_curves_that_hide_one_another_say_so_in_the_legend():
    lines = [
        Line("a, w/o Policy", [1, 2], [0.30, 0.31], n=[3, 3]),
        Line("a, w/ Cumulative Policy", [1, 2], [0.305, 0.312], n=[3, 3]),
        Line("b, w/o Policy", [1, 2], [0.10, 0.50], n=[3, 3]),
    ]
    texts = legend_entries(curves_figure({"Model arm": lines}))
    assert texts == [
        "a, w/o Policy (n = 3)",
        "a, w/ Cumulative Policy (n = 3) [within 0.01 of a, w/o Policy]",
        "b, w/o Policy (n = 3)",
    ]
