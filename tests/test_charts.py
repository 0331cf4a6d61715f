"""Every chart has a text alternative: a one-sentence summary and the same numbers as a table (pages and report)."""

from __future__ import annotations

import re

import numpy as np
import plotly.graph_objects as go
import pytest

from conftest import plotly_array, open_box

from core import figures


def test_the_table_holds_the_numbers_drawn():
    fig = figures.band_errors(["1-10", "11-100"], {"uniform": [0.5, None], "splu": [0.4, 0.2]})
    table = figures.figure_table(fig)
    assert list(table.columns) == ["series", "query band (true count or selectivity)", "mean relative error (log scale)"]
    assert table.astype(object).fillna("none").values.tolist() == [["uniform", "1-10", 0.5], ["uniform", "11-100", "none"],
                                     ["splu", "1-10", 0.4], ["splu", "11-100", 0.2]]
    summary = figures.figure_summary(fig)
    assert summary.startswith('Bar chart "Mean relative error by query band": 2 series (uniform, splu)')
    assert "x axis: query band (true count or selectivity) (2 values)" in summary and summary.endswith(".")


def test_subplots_are_told_apart_and_user_text_is_plain():
    fig = figures.bound_histograms(np.array([0.05, 0.2, 0.2]), np.array([0.1, 0.5, 0.683]), 0.1, 0.1)
    table = figures.figure_table(fig)
    assert set(table["panel"]) == {"Pr(t ∈ T), presence", "Pr((t, s) ∈ T | t ∈ T), association"}
    assert table[table["panel"].str.contains("presence")]["groups"].sum() == 3
    labels = ["<a href='x'>A & B</a>", "c"]
    bars = figures.figure_table(figures.sa_distribution(labels, np.array([3, 1]), "<b>sa</b>"))
    assert bars.iloc[:, 1].tolist() == ["<a href='x'>A & B</a>", "c"]  # as typed: escapes read back, no tags kept
    assert "<b>sa</b>" in figures.figure_summary(figures.sa_distribution(labels, np.array([3, 1]), "<b>sa</b>"))


def test_raw_histograms_are_tabulated_by_bin_and_placeholders_left_out():
    fig = go.Figure(go.Histogram(x=[1, 1, 2, 3, 3, 3], nbinsx=3, name="Y/X"))
    fig.add_trace(go.Scatter(x=[np.nan], y=[np.nan], name="legend only"))
    table = figures.figure_table(fig)
    assert table["series"].unique().tolist() == ["Y/X"] and table.iloc[:, 2].tolist() == [2, 1, 3]
    assert "1 series (Y/X)" in figures.figure_summary(fig)


def test_the_map_table_carries_each_points_details():
    from core.risk import Point

    pts = [Point("sdr", {"x": 1}, 1, 0.3, 1.2, 0.1, 1.0, 0.2, 1.0, verdict="fails", verdict_plain=False)]
    table = figures.figure_table(figures.risk_utility_map(pts))
    first = table.iloc[0]
    assert first["series"] == "sdr" and first.iloc[1] == 1.2 and "x = 1" in first["details"]
    assert "does not meet" in " ".join(table["series"])  # the crossed marker is a row of its own


def test_long_tables_are_thinned_and_say_so():
    fig = go.Figure(go.Scatter(x=np.arange(50), y=np.arange(50)))
    table = figures.figure_table(fig, max_rows=10)
    assert len(table) == 11 and "of 50 rows shown" in table["series"].iloc[-1]


@pytest.mark.slow
def test_every_chart_on_a_page_has_its_summary_and_table():
    from conftest import app, charts, no_exception

    at = app("pages/2_Bounds.py", {"bound": "splu-privacy"})
    no_exception(at)
    drawn = charts(at)
    assert drawn
    boxes = [e for e in at.expander if e.label.startswith("Show as table: ")]
    assert len(boxes) == len(drawn)
    assert not any(box.table or box.dataframe for box in boxes)  # closed: the table is not built (pages.ui.lazy)
    for key in drawn:
        open_box(at, f"{key}__open")
    at.run()
    no_exception(at)
    boxes = [e for e in at.expander if e.label.startswith("Show as table: ")]
    assert len(boxes) == len(drawn)
    for (key, spec), box in zip(drawn.items(), boxes):  # each chart's box follows it, in page order
        table = (box.table or box.dataframe)[0].value.reset_index()
        ys = [float(y) for t in spec["data"] if t.get("y") is not None for y in plotly_array(t["y"]) if np.isfinite(y)]
        y_title = figures.plain_text(spec["layout"]["yaxis"]["title"]["text"])
        assert len(ys) > 3 and table[y_title].dropna().tolist() == pytest.approx(ys)
        assert spec["layout"]["title"]["text"].split(":")[0] in box.label


@pytest.mark.slow
def test_the_report_carries_every_figures_table():
    from core.experiments.seed002 import subset
    from core.report import build
    from core.table import load_dataset

    small = subset(load_dataset("adult", "occupation"), np.arange(2000), "first 2000")
    html = build(small, "uniform", {"p": 0.5}, 1, ["dbr"], queries=200, records=200)
    plots = re.findall(r'<div class="fig" role="group" aria-label="([^"]+)">', html)
    tables = re.findall(r"<details class=\"cap\"><summary>Show as table: ([^<]+)</summary><div class=\"wide\"><table",
                        html)
    assert plots and plots == tables


def _kinds():
    """A figure of each kind the pages draw: single axes, subplots, shapes, a map's scatter, an empty one."""
    from test_figures_layout import _figures

    yield from _figures()
    yield "bound_histograms", figures.bound_histograms(np.array([0.05, 0.2, 0.2]), np.array([0.1, 0.5, 0.683]),
                                                       0.1, 0.1)
    from plotly.subplots import make_subplots

    panels = make_subplots(rows=1, cols=3, shared_yaxes=True, subplot_titles=("(a)", "(b)", "(c)"))
    for col in (1, 2, 3):
        panels.add_trace(go.Scatter(x=[1, 2], y=[col, col * 2], name=f"panel {col}"), row=1, col=col)
    panels.add_vline(x=1.5, line_dash="dot")
    yield "three panels", panels
    yield "empty", go.Figure()


@pytest.mark.parametrize("name, fig", list(_kinds()), ids=lambda v: v if isinstance(v, str) else "")
def test_the_unvalidated_copy_draws_what_the_validated_one_did(name, fig):
    """pages.ui.charts.tidied_copy skips plotly's second validation and its relayout: the laid-out figure is the
    same, key for key."""
    import json

    import plotly.io as pio

    from pages.ui.charts import tidied_copy

    validated = json.loads(pio.to_json(figures.tidy(go.Figure(fig)), validate=False))
    copied = json.loads(pio.to_json(tidied_copy(fig), validate=False))
    assert copied == validated
    assert copied["layout"]["margin"]["t"] > 0  # tidied
    before = json.loads(pio.to_json(fig, validate=False))
    tidied_copy(fig)
    assert json.loads(pio.to_json(fig, validate=False)) == before  # the figure given is left as it was
    out = tidied_copy(fig)
    tidied = figures.tidy(go.Figure(fig))
    assert figures.figure_summary(out) == figures.figure_summary(tidied)
    assert figures.figure_table(out).equals(figures.figure_table(tidied))
