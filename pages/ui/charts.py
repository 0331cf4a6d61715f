"""Charts with a text alternative (WCAG 2.2, 1.1.1 "Non-text Content"): ``chart(fig, key=...)``.

Every plotly figure a page draws goes through :func:`chart`, which draws it
and, under it, a closed expander whose label is a one-sentence summary of
the chart and which holds the same numbers as a table ("Show as table").
A screen reader reads the summary as the expander's label and can open the
table; a sighted reader sees one line under the chart.  The summary and the
table come from :func:`core.figures.figure_summary` and
:func:`core.figures.figure_table` unless the caller passes its own, so they
are the figure's own numbers, not a second computation that could drift.

An expander, not a toggle: opening it does not rerun the page (a toggle
would recompute a 5M-row page to show a table that is already there).
"""

from __future__ import annotations

import streamlit as st

from core.figures import figure_summary, figure_table, tidy

from . import lazy
from .fmt import md


#: tables up to this many rows are drawn as a static HTML table (``st.table``), longer ones as ``st.dataframe``
STATIC_ROWS = 400


def layout_copy(fig):
    """A copy of ``fig`` for :func:`core.figures.tidy` to lay out, not validated again.

    The figure was validated when it was built; ``go.Figure(fig)`` checked
    every property and the whole default template once more (12-14 ms of a
    bar chart's 15 on this machine, on every rerun of every chart; the copy
    takes 1.3 ms).  The copy is of plotly's own validated properties
    (``_data``, ``_layout``: ``to_dict`` would give base64-coded arrays the
    summary and table could not read); a plotly without them, or a figure
    given as a dict, is copied the validating way.  The figure drawn from
    the copy is the same, property for property (tests/test_charts.py
    compares them on each kind of figure).
    """
    import copy

    import plotly.graph_objects as go

    data, layout = getattr(fig, "_data", None), getattr(fig, "_layout", None)
    if not isinstance(fig, go.Figure) or not isinstance(data, list) or not isinstance(layout, dict):
        return go.Figure(fig)
    return go.Figure({"data": copy.deepcopy(data), "layout": copy.deepcopy(layout)}, _validate=False)


def chart(fig, summary: str | None = None, table=None, *, key: str, **kwargs):
    """``chart(fig, key=key, **kwargs)`` with its summary and "show as table"; returns its event.

    The figure is laid out by :func:`core.figures.tidy` first (title, legend
    and axis titles never drawn over each other or cut), on a copy.
    """
    fig = tidy(layout_copy(fig))
    event = st.plotly_chart(fig, key=key, **kwargs)
    text = summary or figure_summary(fig)
    with lazy.expander(f"Show as table: {md(text)}", key=f"{key}__open") as open_:
        if not open_:  # the table is built and sent only while it is open (pages.ui.lazy)
            return event
        frame = figure_table(fig) if table is None else table
        if len(frame) <= STATIC_ROWS:  # a real <table>, read cell by cell by a screen reader
            st.table(frame, hide_index=True, alt=text)  # no index column: its header cell would be empty
        else:  # too long for a static table: the scrolling grid (rows fetched as shown)
            st.dataframe(frame, hide_index=True, key=f"{key}__table")
    return event
