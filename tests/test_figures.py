"""Figure builders (core/figures.py): bins on a bound, one colour per mechanism, the chosen setting on the map."""

from __future__ import annotations

import numpy as np
import pytest

from core import figures
from core.figures import BOUND_TOLERANCE, bound_bins, bound_histograms


def _brute_counts(values, left, width):
    """Values in each right-closed bin (left, left + width], counted one by one."""
    return np.array([sum(1 for v in values if a + 1e-12 < v <= a + width + 1e-12) for a in left])


@pytest.mark.parametrize("values, bound", [
    (np.full(2828, 0.1), 0.1),  # QA: every group at beta = 0.1 drew one bar over [0, 1], right of the line
    (np.array([0.1, 0.1, 0.05, 0.02]), 0.1),
    (np.array([0.3, 0.1, 0.683, 0.2, 0.1]), 0.1),  # Mondrian-like: most above
    (np.array([0.0208, 0.0192, 0.0125, 0.1]), 0.1),
    (np.array([1 / 3, 4 / 9]), 0.5),
    (np.array([0.1 + 1e-15, 0.1 - 1e-15]), 0.1),  # float noise around the bound counts as at the bound
])
def test_bins_end_on_the_bound_and_count_every_value(values, bound):
    left, width, counts = bound_bins(values, bound)
    assert counts.sum() == len(values)
    assert np.isclose(left, bound).any() or np.isclose(left + width, bound).any()
    snapped = np.where(np.abs(values - bound) <= BOUND_TOLERANCE, bound, values)
    np.testing.assert_array_equal(counts, _brute_counts(snapped, left, width))
    at = np.abs(snapped - bound) <= BOUND_TOLERANCE
    if at.any():
        # the bin holding the values at the bound ends at the bound
        i = int(np.flatnonzero(np.isclose(left + width, bound))[0])
        assert counts[i] >= at.sum()


def test_groups_at_the_bound_are_drawn_left_of_the_line_as_meeting_it():
    fig = bound_histograms(np.full(50, 0.02), np.full(50, 0.1), 0.1, 0.1)
    for trace in fig.data:
        right = np.asarray(trace.x) + trace.width / 2
        if trace.name == "groups meeting the bound":
            assert (right <= 0.1 + 1e-12).all()
    assert [t.name for t in fig.data] == ["groups meeting the bound"] * 2
    assert all(sum(t.y) == 50 for t in fig.data)


def test_groups_above_the_bound_are_drawn_right_of_the_line_in_the_warning_colour():
    fig = bound_histograms(np.array([0.05, 0.2]), np.array([0.1, 0.5, 0.683]), 0.1, 0.1)
    above = [t for t in fig.data if t.name == "groups above the bound"]
    assert sum(sum(t.y) for t in above) == 3  # presence 0.2, association 0.5 and 0.683
    for t in above:
        assert (np.asarray(t.x) - t.width / 2 >= 0.1 - 1e-12).all()
        assert t.marker.color == figures.BREAKS


# ------------------------------------------------------------------ one colour per mechanism
def _point(mechanism, x, y, **params):
    from core.risk import Point

    return Point(mechanism, params, 0, 0.3, x, 0.1, 1.0, y, 0.5)


def test_every_mechanism_has_its_own_colour():
    from core.mechanisms import MECHANISMS

    assert set(figures.MECHANISM_COLOURS) == set(MECHANISMS)
    colours = [c.lower() for c in figures.MECHANISM_COLOURS.values()]
    assert len(set(colours)) == len(colours)
    assert figures.TRUTH.lower() not in colours  # the truth / Pareto front stays apart from every mechanism
    for name, mech in MECHANISMS.items():
        assert figures.mechanism_colour(name) == figures.mechanism_colour(mech.title)


def test_map_and_band_errors_colour_a_mechanism_alike_whatever_the_order():
    from core.mechanisms import MECHANISMS

    names = list(MECHANISMS)
    points = [_point(n, 1 + i / 10, 0.1 + i / 100) for i, n in enumerate(names)]
    titles = {n: MECHANISMS[n].title for n in names}
    on_map = {t.name: t.marker.color for t in figures.risk_utility_map(points, titles=titles).data}
    # the Query error page and the report key band errors by title, in the order the user chose
    bars = {t.name: t.marker.color
            for t in figures.band_errors(["a"], {titles[n]: [0.5] for n in reversed(names)}).data}
    for n in names:
        assert on_map[titles[n]] == bars[titles[n]] == figures.MECHANISM_COLOURS[n]
    assert len(set(on_map.values())) == len(names)  # QA: UP and Mondrian were both blue on the map


def test_seed004_colours_are_the_mechanisms_colours():
    from core.experiments import seed004

    assert seed004.COLOURS == {"PriView": figures.MECHANISM_COLOURS["priview"],
                               "Ambiguity": figures.MECHANISM_COLOURS["ambiguity"],
                               "Mondrian": figures.MECHANISM_COLOURS["mondrian"]}


def test_seed002_colours_pp_up_and_anatomy_as_the_mechanisms():
    # QA: PP and UP swapped colours between the Query error chart and the error-against-L figure
    from core.experiments import seed002

    assert seed002.COLOURS["PP"] == figures.MECHANISM_COLOURS["sdr"]
    assert seed002.COLOURS["UP"] == figures.MECHANISM_COLOURS["uniform"]
    assert seed002.COLOURS["Ana"] == figures.MECHANISM_COLOURS["anatomy"]


def test_seed003_colours_anatomy_as_the_mechanism():
    from core.experiments import seed003

    assert seed003.COLOURS["Anatomy"] == figures.MECHANISM_COLOURS["anatomy"]


def test_line_labels_on_log_axes_sit_at_their_value_and_the_axis_spans_the_data():
    # issue 13 §5: add_vline's label on a log axis was placed at 10^100, stretching the x axis to 1e99
    import math

    from core.bounds import compute
    from core.figures import curve_figure

    curve = compute("differential-inference", {"epsilon": 0.1, "ratio": 0.99, "x": 100.0})
    fig = curve_figure(curve)
    lo, hi = fig.layout.xaxis.range
    assert math.log10(min(curve.x)) - 0.2 < lo < math.log10(min(curve.x)) and \
        math.log10(max(curve.x)) < hi < math.log10(max(curve.x)) + 0.2
    labels = {a.text: a for a in fig.layout.annotations}
    assert labels["x = 100"].x == 2.0 and labels["x = 100"].xref == "x"
    assert labels["y/x (no bias) = 1"].y == 0.0  # log10(1) on the log y axis


def test_user_data_in_charts_is_text_not_markup():
    """Issue 12 item 7: plotly reads <a href> in labels as a link; values and names are escaped."""
    import json

    import numpy as np

    from core import figures

    labels = np.array(["<a href='https://evil.example'>click</a>", "A & B", "plain"])
    fig = figures.sa_distribution(labels, np.array([3, 2, 1]), "<b>sa</b>")
    spec = json.dumps(json.loads(fig.to_json()), ensure_ascii=False)
    assert "<a href" not in spec and "<b>sa</b>" not in spec
    assert "&lt;a href='https://evil.example'&gt;click&lt;/a&gt;" in spec and "A &amp; B" in spec
    scatter = figures.estimate_scatter(np.array([5.0, 7.0]), np.array([4.0, 8.0]), np.array([0, 0]), ["band"],
                                       text=["<a href='https://x'>q</a>", "age = 3"])
    assert "<a href" not in json.dumps(json.loads(scatter.to_json()), ensure_ascii=False)


def test_charts_of_sensitive_values_keep_their_legend_off_the_slanted_labels():
    # issue 13 §5: a legend below the plot hid "Prof-specialty" and "Exec-managerial" at 1,400 px
    import numpy as np

    from core.figures import sa_before_after, sa_overlay

    labels = np.array(["Craft-repair", "Prof-specialty", "Exec-managerial"])
    counts = np.array([30.0, 20.0, 10.0])
    for fig in (sa_before_after(labels, counts, counts * 0.9, "occupation"),
                sa_overlay(labels, counts, {"pin 1": counts * 0.8}, "occupation")):
        legend = fig.layout.legend
        assert legend.y >= 1 and legend.yanchor == "bottom" and legend.xanchor == "right"
        assert fig.layout.title.x == 0  # the title keeps the left, the legend the right
