"""The curve figures: rounds on the x axis are whole numbers."""

from analysis.plots import Line, curves_figure


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
