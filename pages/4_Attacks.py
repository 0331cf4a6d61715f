"""Attacks: what an adversary learns from a release, measured on the loaded table."""

from __future__ import annotations

import streamlit as st

from pages import ui
from pages.ui import attacks, experiments, state
from pages.ui.fmt import md

ui.page_setup("Attacks", "🕵️")
st.title("Attacks: what can an adversary infer?")
st.markdown(
    "Each tab plays an adversary against the release of the loaded table, using only what is published "
    "(and, where the attack says so, what the adversary is assumed to know). Read them as the privacy "
    "side of the trade-off: the Query error page shows what the same settings cost in accuracy.")

data = ui.dataset_or_empty_state()
if data is None:
    ui.sidebar_status()
    state.sync_url()
    st.stop()

modules = attacks.discover()
if not modules:
    st.info("No attack views are installed yet.")
else:
    tabs = st.tabs([ui.layout.tab_label(m.TITLE) for m in modules])  # short: the strip fits, none cut
    for tab, module in zip(tabs, modules):
        with tab:
            st.subheader(module.TITLE)
            try:
                module.render(data)
            except Exception as exc:  # one broken view must not hide the others or show a traceback
                st.error(f"This view failed on the current table ({type(exc).__name__}: {md(exc)}); "
                         "please report it.")
# after the tabs: a tab may move shared parameters (reconstruction's lambda, delta), which the sidebar and the
# link must show in this run, not one run late
ui.sidebar_status()
state.sync_url()

experiments.render("attacks", data, heading="More attack experiments from the papers")

state.end_of_run(globals())  # what an earlier run left is freed (pages.ui.state.end_of_run)
