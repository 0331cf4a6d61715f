"""core.figures.tidy: the one layout rule of every figure (issue 23 §4), checked on each kind the pages draw.

From the top: the title (lines of at most TITLE_CHARS), the legend under it, then the plot; the top
margin holds both, so the legend is never under the plot where slanted labels and the axis title are.
The drawn result is checked in chromium by tests/test_browser_layout.py.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import pytest

from core import figures
from core.figures import LEGEND_ROW_PX, TITLE_CHARS, TITLE_LINE_PX, TOP_PAD_PX, legend_rows, tidy

SA = ["Craft-repair", "Prof-specialty", "Exec-managerial", "Adm-clerical", "Sales"]
BANDS = ["small counts (1-10)", "[0.5%, 1%)", "[1%, 2%)", ">= 5%"]


def _figures():
    counts = np.array([60, 50, 40, 30, 20])
    yield "sa_distribution", figures.sa_distribution(SA, counts, "occupation")
    yield "sa_before_after", figures.sa_before_after(SA, counts, counts + 3, "occupation")
    yield "sa_overlay", figures.sa_overlay(SA, counts, {"SPLU γ=5": counts + 1, "SPLU γ=7": counts - 1},
                                           "occupation")
    yield "band_errors", figures.band_errors(BANDS, {f"mechanism number {i}": [0.5, 0.2, 0.1, 0.05]
                                                     for i in range(9)})
    yield "sweep_errors", figures.sweep_errors([1, 2, 3], {b: [0.3, 0.2, 0.1] for b in BANDS}, "γ (gamma)")
    plain = go.Figure([go.Bar(x=[1], y=[1], name="a"), go.Bar(x=[1], y=[2], name="b")])
    plain.update_layout(title={"text": "A figure a page builds itself, with a long title over many words"},
                        legend={"y": -0.3})  # placed under the plot, as the experiments' figures were
    yield "a page's own figure", plain


@pytest.mark.parametrize("name, fig", list(_figures()), ids=lambda v: v if isinstance(v, str) else "")
def test_title_then_legend_then_plot(name, fig):
    out = tidy(go.Figure(fig))
    lay = out.layout
    title = lay.title.text or ""
    assert all(len(line) <= TITLE_CHARS for line in title.split("<br>")), title
    lines = title.count("<br>") + 1 if title else 0
    title_px = TOP_PAD_PX + TITLE_LINE_PX * lines
    rows = legend_rows(out)
    assert lay.margin.t >= title_px + LEGEND_ROW_PX * rows
    if rows:
        # the legend hangs from the title's bottom, in the figure's own pixels, inside the top margin
        assert lay.legend.yref == "container" and lay.legend.yanchor == "top"
        assert lay.legend.y == pytest.approx(1 - title_px / lay.height)
    assert out.layout.xaxis.automargin is True and out.layout.yaxis.automargin is True
    assert lay.height >= (fig.layout.height or 450)  # the plot keeps its size: the figure grows


def test_legend_rows_count_entries_and_skip_hidden_ones():
    fig = go.Figure([go.Scatter(x=[1], y=[1], name="x" * 40), go.Scatter(x=[1], y=[1], name="y" * 40),
                     go.Scatter(x=[1], y=[1], name="hidden", showlegend=False)])
    assert legend_rows(fig) == 2  # 46 + 46 characters do not fit one row of 64
    assert legend_rows(go.Figure([go.Scatter(x=[1], y=[1], name="alone")])) == 0  # one trace: no legend
    fig.update_layout(showlegend=False)
    assert legend_rows(fig) == 0
