"""The curve figures: rounds on the x axis are whole numbers."""

from analysis.plots import Line, curves_figure


def test_it_puts_only_whole_rounds_on_the_x_axis():
    # Three rounds: matplotlib's default ticks would be 1.0, 1.25, 1.5, ...
    fig = curves_figure({"Twenty Questions": [Line("P-a", [1, 2, 3], [0.5, 0.4, 0.45])]})
    fig.canvas.draw()
    ticks = fig.axes[0].get_xticks()
    assert len(ticks) >= 2
    assert all(float(t).is_integer() for t in ticks)
