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

from core.figures import figure_summary, figure_table, tidy, tidy_update

from . import lazy
from .fmt import md


#: tables up to this many rows are drawn as a static HTML table (``st.table``), longer ones as ``st.dataframe``
STATIC_ROWS = 400


def tidied_copy(fig):
    """``tidy(go.Figure(fig))`` (:func:`core.figures.tidy`), laid out on a copy without validating it again.

    The figure was validated when it was built; ``go.Figure(fig)`` checked
    every property and the whole default template once more (12-14 ms of a
    bar chart's 15 on this machine, on every rerun of every chart), and the
    tidying's one layout update took 8 ms more in plotly's relayout.  Here
    plotly's own validated properties (``_data``, ``_layout``: ``to_dict``
    would give base64-coded arrays the summary and table could not read) are
    copied and the update :func:`core.figures.tidy_update` computes, plain
    numbers and strings under the keys it names, is merged in by plotly's
    rule (a dict merges into a dict, anything else replaces): about 1.5 ms.
    A plotly without those properties, or a figure given as a dict, is
    tidied the validating way.  The result is the same, key for key
    (tests/test_charts.py compares them on each kind of figure).
    """
    import copy

    import plotly.graph_objects as go

    data, layout = getattr(fig, "_data", None), getattr(fig, "_layout", None)
    if not isinstance(fig, go.Figure) or not isinstance(data, list) or not isinstance(layout, dict):
        return tidy(go.Figure(fig))
    layout = copy.deepcopy(layout)
    _merge(layout, tidy_update(fig))
    return go.Figure({"data": copy.deepcopy(data), "layout": layout}, _validate=False)


def _merge(into: dict, update: dict) -> None:
    """Plotly's update rule on plain dicts: a dict merges into a dict, anything else replaces."""
    for key, value in update.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            _merge(into[key], value)
        else:
            into[key] = value


def chart(fig, summary: str | None = None, table=None, *, key: str, **kwargs):
    """``chart(fig, key=key, **kwargs)`` with its summary and "show as table"; returns its event.

    The figure is laid out by :func:`core.figures.tidy` first (title, legend
    and axis titles never drawn over each other or cut), on a copy.
    """
    fig = tidied_copy(fig)
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
