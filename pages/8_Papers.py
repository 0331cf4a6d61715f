"""Papers: every figure and table of the five papers' evaluation sections, one click each.

Per seed, in the paper's order: the number and caption, the experiment
that reproduces it (``core.papers.ITEMS``), its settings (the paper's by
default), and after Run our figures beside a table of the paper's printed
statements against ours with a verdict.  Runs use the paper's data
stand-in unless the user picks the loaded table.  Results are cached per
(item, data, settings) with a spinner drawn outside the cached function
(no progress bar crosses the cache boundary).
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from core import experiments as _experiments
from core import papers
from core.errors import WorkbenchError
from core.table import load_dataset
from pages import ui
from pages.ui import state
from pages.ui.cached import TTL, items, memo
from pages.ui.data import TableProblem, current_dataset
from pages.ui.experiments import titled
from pages.ui.fmt import md
from pages.ui.params import param_inputs
from pages.ui.charts import chart

ui.page_setup("Papers", "📄")
ss = st.session_state
STORE = "wb_papers"
store = ss.setdefault(STORE, {"verdicts": {}, "settings": {}, "done": set()})

st.title("Papers")
st.markdown(
    "Every figure and table of the five papers' evaluation sections, in the paper's order. **Run** computes it "
    "on the paper's data stand-in with the paper's parameters (or on the loaded table), draws our figure and "
    "sets the paper's printed statements beside ours, each with its tolerance and a verdict: *reproduced* "
    "(within the tolerance), *in trend* (within twice the tolerance, or the order holds overall but not at every "
    "point), *not reproduced* (with the reason, naming data differences) or *inconclusive* (too little data to "
    "judge). An entry's verdict is its weakest statement's.")
_last = papers.recorded()
if _last:
    st.caption(f"Last full run of all {len(_last['entries'])} entries (`python bench/papers.py --json "
               f"docs/papers.json`, also `python -m core experiment --all --json`): "
               f"{md(papers.counts_text(papers.counts(e['verdict'] for e in _last['entries'])))}.")
_recorded = {e["key"]: e["verdict"] for e in (_last or {}).get("entries", [])}


@st.cache_resource(max_entries=3, ttl=TTL, show_spinner=False)
def _standin(spec: str, sa: str | None, qi: tuple[str, ...] | None):
    return load_dataset(spec, sa, qi)


@memo("paper experiment")
def _run(key: str, _data, data_key: str, settings: tuple):
    item = papers.get(key)
    result = _experiments.get(item.experiment).run(_data, dict(settings), None)
    return result, *papers.judge(item, result)


def _verdict_text(verdict: str | None) -> str:
    return verdict or "not run yet"


def _item(item: papers.Item) -> None:
    key = item.key
    st.markdown(f"**{md(item.number)}**: {md(item.caption)}")
    st.caption(f"{item.section}. Stand-in: {item.standin}." + (f" Data differences: {item.differences}."
                                                                 if item.differences else ""))
    if item.no_ratio:
        st.caption(f"No ratio to the paper's times: {md(item.no_ratio)}.")
    if item.experiment is None:
        verdict, rows = papers.judge(item, None)
        store["verdicts"][key] = verdict
        st.caption(f"No experiment: {item.why_no_experiment}.")
        st.markdown(f"Verdict: **{md(_verdict_text(verdict))}**")
        st.table(papers.rows_frame(rows).set_index("paper's statement"))
        return
    exp = _experiments.get(item.experiment)
    if item.explore:
        st.link_button("Open this setting on the Sanitize page", f"Sanitize?{item.explore}",
                       icon=":material/open_in_new:", help="Opens the paper's table and parameters in a new tab.")
    if item.query_error:
        st.link_button("Open its queries on the Query error page", f"Query_error?{item.query_error}",
                       icon=":material/open_in_new:", help="The paper's queries answered from this setting, error by "
                       "band, estimate against truth per query, in a new tab.")
    source = st.radio("Data", ["the paper's stand-in", "the loaded table"], horizontal=True, key=f"w_pp_src_{key}",
                      help="The stand-in is a bundled sample sized as the paper's data; the loaded table is the one "
                           "chosen on Home.")
    with st.expander("Settings (the paper's by default)"):
        defaults = {**{p.name: p.default for p in exp.params}, **dict(item.params)}
        raw = param_inputs(exp.params, {**defaults, **store["settings"].get(key, {})}, f"pp_{key}", columns=4)
        store["settings"][key] = raw
    try:
        settings = papers.settings(item, raw)
    except WorkbenchError as exc:
        st.warning(md(exc))
        return
    if source == "the loaded table":
        try:
            data = current_dataset()
        except TableProblem as exc:
            st.warning(md(exc))
            return
        label = data.name
    else:
        data, label = None, item.standin
    run_key = (key, source, items(settings))
    if st.button("Run", key=f"w_pp_run_{key}", type="primary") or run_key in store["done"]:
        try:
            with st.spinner(f"Seed {item.seed} {item.number} on {label}…"):
                if data is None:
                    data = _standin(item.data, item.sa, item.qi)
                result, verdict, rows = _run(key, data, data.key, items(settings))
        except WorkbenchError as exc:
            st.warning(md(exc))
            return
        store["done"].add(run_key)
        store["verdicts"][key] = verdict
        st.markdown(f"Verdict on {md(label)}: **{md(_verdict_text(verdict))}**")
        st.markdown("**The paper beside ours**")
        st.table(papers.rows_frame(rows).set_index("paper's statement"))
        for i, (title, fig, caption) in enumerate(result.figures[:1]):
            chart(titled(fig, title), key=f"pp_fig_{key}_{i}")
            st.caption(caption)
        for i, (title, fig, caption) in enumerate(result.figures[1:], start=1):
            chart(titled(fig, title), key=f"pp_fig_{key}_{i}")
            st.caption(caption)
        for note in result.notes:
            st.info(md(note))
        for i, (title, frame, caption) in enumerate(result.tables):
            st.markdown(f"**{md(title)}**")
            st.dataframe(frame, hide_index=True, key=f"pp_table_{key}_{i}", placeholder="")
            st.caption(caption)
    else:
        st.caption("Press Run to compute it (a few seconds to about a minute; the result is kept).")


groups = papers.by_seed()
tabs = st.tabs([f"Seed {seed}" for seed in groups])
for tab, (seed, its) in zip(tabs, groups.items()):
    with tab:
        st.subheader(f"Seed {seed}: {papers.SEEDS[seed]}")
        names = [i.key for i in its]
        chosen = st.selectbox("Figure or table", names, key=f"w_pp_item_{seed}",
                              format_func=lambda k: f"{papers.get(k).number}: {papers.get(k).caption}")
        _item(papers.get(chosen))
        st.markdown(f"**Every figure and table of seed {seed}**")
        # st.table: every cell wraps (a dataframe cut the captions and the verdict column at 1,400 px)
        st.table(pd.DataFrame([{"figure or table": i.number, "caption": i.caption,
                                "data": i.standin if i.experiment else "no run: the settings of its figures",
                                "experiment": i.experiment or "none",
                                "verdict": store["verdicts"].get(i.key) or (papers.judge(i, None)[0]
                                                                           if i.experiment is None else None)
                                or (f"last full run: {_recorded[i.key]}" if i.key in _recorded else "not run yet")}
                               for i in its]).set_index("figure or table"))

state.end_of_run(globals())  # what an earlier run left is freed (pages.ui.state.end_of_run)
