"""Bounds: the papers' analytical guarantees as live curves, exact values beside the bounds."""

from __future__ import annotations

import streamlit as st

from core import figures
from core.bounds import BOUNDS
from core.errors import WorkbenchError
from core.mechanisms import MECHANISMS
from pages import ui
from pages.ui import cached, state
from pages.ui.data import TableProblem, current_dataset
from pages.ui.fmt import is_number, md, number, readable, with_unit
from pages.ui.params import param_inputs
from pages.ui.charts import chart

ui.page_setup("Bounds", "📈")
ss = st.session_state
st.title("Bounds: what the papers guarantee")
st.markdown(
    "Each curve is computed from the formulas of the papers, not from your table. Where a paper's bound "
    "is loose or its formula is wrong, the exact value is drawn beside it (solid), the valid bound dashed, "
    "and the formula as published dotted and labelled so.")

if not BOUNDS:
    st.info("No analytical curves are registered yet.")
    st.stop()

names = list(BOUNDS)


def _release_values(bound) -> tuple[dict, str]:
    """Curve parameters fixed by the current mechanism's settings and table, and where they come from."""
    mech = MECHANISMS.get(ss.get(state.MECH))
    if mech is None or bound.name not in mech.bounds:
        return {}, ""
    try:
        data = current_dataset()
    except TableProblem:
        data = None
    try:
        values = mech.resolve(state.mech_params(mech.name))
        derived = mech.derived(data, values) if data is not None else {}
    except WorkbenchError:  # the Sanitize page shows what is wrong with these settings
        return {}, ""
    given = {**derived, **{k: v for k, v in values.items() if v is not None}}
    where = f"{mech.title}" + (f" on {data.name}" if data is not None else "")
    return bound.linked(given, data), where


shown = state.seed_widget("w_bound", ss[state.BOUND], lambda v: v in names)
name = st.selectbox("Curve", names, key="w_bound", index=state.index_of(names, shown), format_func=lambda n: BOUNDS[n].title)
ss[state.BOUND] = name
bound = BOUNDS[name]
st.caption(f"Source: {bound.paper}.")

st.subheader("Parameters")
linked, source = _release_values(bound)
locked = None
if linked:
    shown = state.seed_widget("w_bound_follow", True, lambda v: isinstance(v, bool))
    follow = st.toggle(f"Follow the release: {source}", key="w_bound_follow", value=shown,
                       help="On: the parameters the release fixes are taken from the Sanitize page and the "
                            "loaded table, so the curve shows the guarantee of the settings you chose. Off: "
                            "set every parameter here.")
    if follow:
        locked = linked
        def shown(v):
            text = number(v) if is_number(v) else str(v)
            return md(text if len(text) <= 40 else text[:40] + "…")

        st.caption("From the release: " + ", ".join(f"{md(p.symbol or p.name)} = {shown(linked[p.name])}"
                                                    for p in bound.params if p.name in linked)
                   + ". Untick to move them here.")
raw = param_inputs(bound.params, state.bound_params(name), f"b_{name}", columns=4, locked=locked)
state.set_bound_params(name, raw)
ui.sidebar_status()
state.sync_url()

try:
    values = bound.resolve(raw)
    curve = cached.curve(name, cached.items(values))
except WorkbenchError as exc:
    st.error(md(exc))
    st.stop()

chart(figures.curve_figure(curve), key="chart_curve")
st.caption(curve.caption)

notes = {k: v for k, v in curve.notes.items() if is_number(v)}
if notes:
    st.markdown("**Read-outs**")
    per_row = 4
    items = list(notes.items())
    for start in range(0, len(items), per_row):
        cols = st.columns(per_row)
        for col, (key, value) in zip(cols, items[start:start + per_row]):
            col.metric(readable(key, name), with_unit(key, value, name))

with st.expander("What this curve shows", expanded=False):
    st.markdown(bound.explain)
    st.caption("Line styles follow the legend: the first series (usually the exact value) is drawn solid "
               "and thickest; bounds, published formulas and reference settings are dashed, dotted or "
               "markers, each named in the legend.")

state.end_of_run(globals())  # what an earlier run left is freed (pages.ui.state.end_of_run)
