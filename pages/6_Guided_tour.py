"""Guided tour: the papers' ideas one at a time, on tables small enough to read whole.

Each step (``core.tour.STEPS``) shows a toy table, a plain-language
explanation, and numbers computed live by the workbench beside the numbers
the paper prints; a link opens the step's table and parameters on the page
where it can be explored.  The step is kept in the URL (``?step=KEY``).
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from core import bounds, figures, tour
from core.errors import WorkbenchError
from core.samples import load_sample
from pages import ui
from pages.ui import state
from pages.ui.fmt import md
from pages.ui.charts import chart

ui.page_setup("Guided tour", "🧭")
ss = st.session_state
st.title("Guided tour")
steps = tour.steps()
st.markdown(
    f"{len(steps)} short steps through the ideas behind the mechanisms, each on a table or a worked example "
    "printed in one of the papers. Every number in the **Workbench** column is computed now by the same code "
    "as the other pages; the **Paper** column is what the paper prints. Follow a step's link to explore it "
    "with your own parameters.")

if not steps:
    st.info("No tour steps are available: the mechanisms they use are not installed.")
    st.stop()
keys = [s.key for s in steps]
if "w_tour_step" not in ss or ss["w_tour_step"] not in keys:
    wanted = st.query_params.get("step")
    ss["w_tour_step"] = wanted if wanted in keys else keys[0]


def _move(delta: int) -> None:
    i = keys.index(ss["w_tour_step"])
    ss["w_tour_step"] = keys[max(0, min(len(keys) - 1, i + delta))]


key = st.selectbox("Step", keys, key="w_tour_step", format_func=lambda k: tour.get(k).title)
st.query_params["step"] = key
step = tour.get(key)
index = keys.index(key)

st.header(step.title)
st.caption(f"Source: {step.paper}.")
st.markdown(step.text)

left, right = st.columns([2, 3])
with left:
    if step.curve is not None:
        name, values = step.curve
        chart(figures.curve_figure(bounds.get(name).curve(values)), key=f"tour_curve_{key}")
    elif step.table is not None:
        st.markdown(f"**The worked example of {md(step.paper)}**")
        st.dataframe(step.table(), hide_index=True)
    elif step.sample:
        try:
            table, info = load_sample(step.sample)
        except WorkbenchError as exc:  # a bundled table cannot fail, but never show a traceback
            st.error(md(exc))
        else:
            st.markdown(f"**{info.title}**, sensitive attribute `{step.sensitive}` ({len(table)} rows)")
            st.dataframe(table, hide_index=True, height=min(38 * (len(table) + 1), 360))
with right:
    try:
        checks = step.run()
    except WorkbenchError as exc:
        st.error(md(exc))
        checks = []
    if checks:
        frame = pd.DataFrame({
            "Quantity": [c.quantity for c in checks],
            "Workbench": [tour.frac(c.value) for c in checks],
            "Paper": [c.paper for c in checks],
            "Agrees": ["✓" if c.ok else "✗ differs" for c in checks],
        })
        st.markdown("**Computed here, beside the paper**")
        st.dataframe(frame, hide_index=True)
        bad = [c.quantity for c in checks if not c.ok]
        if bad:
            st.warning(md(f"{len(bad)} number(s) differ from the paper: {'; '.join(bad)}."))
    if step.link:
        page, _, query = step.link.partition("?")
        st.link_button(f"Explore this on the {page} page", f"{page}?{query}",
                       help="Opens in a new tab with this step's table and parameters.")

back, _, forward = st.columns([1, 4, 1])
back.button("← Previous step", on_click=_move, args=(-1,), disabled=index == 0, key="tour_back")
forward.button("Next step →", on_click=_move, args=(1,), disabled=index == len(keys) - 1, key="tour_next")
st.progress((index + 1) / len(keys), text=f"Step {index + 1} of {len(keys)}")

state.end_of_run(globals())  # what an earlier run left is freed (pages.ui.state.end_of_run)
