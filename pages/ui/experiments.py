"""Render the paper-figure experiments registered for a page (:mod:`core.experiments`).

Each experiment declares its settings; the section draws inputs for them,
runs the experiment behind a button (they sweep several releases, so a
slider move must not start one), caches the result per (dataset, settings)
and draws its figures, tables and notes with their captions.
"""

from __future__ import annotations

import streamlit as st

from core import experiments as _experiments
from core.errors import WorkbenchError
from core.table import Dataset

from . import state
from .cached import items, memo
from .fmt import md
from .params import param_inputs
from pages.ui.charts import chart

STORE = "wb_experiments"


def titled(fig, title: str):
    """A copy of ``fig`` whose title is the experiment's ``title``, once.

    The experiments give each figure a title (which paper figure it
    reproduces) and most figures carry their own (what was measured on
    which table); drawing both showed two titles.  The figure's own title
    becomes a smaller second line only when it has words the first lacks
    ("Retention probability, adult (m = 14)" under "Retention of UP and PP
    (seed 002 Table 2, for this table)"), never when it repeats it.
    """
    import re

    import plotly.graph_objects as go

    out = go.Figure(fig)
    own = (out.layout.title.text or "").strip()

    def words(text: str) -> set[str]:
        return set(re.findall(r"\w+", text.lower()))

    text = title if not own or words(own) <= words(title) else f"{title}<br><sup>{own}</sup>"
    out.update_layout(title={"text": text, "x": 0})
    if "<br>" in text:
        top = out.layout.margin.t if out.layout.margin.t is not None else 80
        out.update_layout(margin={"t": max(top, 90)})
    return out


def _run(data: Dataset, name: str, settings: tuple, progress=None):
    """The experiment's result, computed once per (table, experiment, settings) and kept.

    Not an ``st.cache_*`` function on purpose: the experiment reports
    progress through a bar drawn by the page, and a cached function that
    draws through an element created outside it cannot be replayed
    (``CacheReplayClosureError`` on the next rerun).  The result is kept in
    the pages' byte-bounded store (:func:`pages.ui.cached.memo`, which calls
    the function directly): shared for a bundled sample, private to the
    session (and dropped with it) for an upload.
    """
    return _kept(data, data.key, name, repr(settings), settings, progress)


@memo("experiments")
def _kept(_data: Dataset, data_key: str, name: str, settings_text: str, _settings: tuple, _progress=None):
    return _experiments.get(name)(_data, dict(_settings), _progress)


def render(page: str, data: Dataset, heading: str = "Figures from the papers") -> None:
    """A selector over the experiments registered with ``page``; nothing if there are none."""
    exps = _experiments.for_page(page)
    if not exps:
        return
    st.header(heading)
    names = [e.name for e in exps]
    store = st.session_state.setdefault(STORE, {})
    key = f"w_exp_{page}"
    shown = state.seed_widget(key, store.get(f"{page}:current", names[0]), lambda v: v in names)
    name = st.selectbox("Experiment", names, key=key, index=state.index_of(names, shown),
                        format_func=lambda n: _experiments.get(n).title)
    store[f"{page}:current"] = name
    exp = _experiments.get(name)
    st.caption(f"{exp.explain} Source: {exp.paper}.")
    raw = param_inputs(exp.params, store.get(name, {}), f"exp_{name}", columns=4)
    store[name] = raw
    try:
        settings = exp.resolve(raw)
    except WorkbenchError as exc:
        st.error(md(exc))
        return
    run_key = (data.key, name, items(settings))
    done = store.setdefault("done", set())
    if st.button("Run", key=f"w_exp_run_{name}", type="primary") or run_key in done:
        bar = st.progress(0.0, text=f"{exp.title}…")

        def progress(fraction: float, text: str = "") -> None:
            bar.progress(min(max(fraction, 0.0), 1.0), text=text or f"{exp.title}…")

        try:
            result = _run(data, name, items(settings), progress)
        except WorkbenchError as exc:
            bar.empty()
            st.error(md(exc))
            return
        bar.empty()
        done.add(run_key)
        for note in result.notes:
            st.info(md(note))
        for i, (title, fig, caption) in enumerate(result.figures):
            chart(titled(fig, title), key=f"exp_{name}_fig_{i}")
            st.caption(caption)
        for i, (title, frame, caption) in enumerate(result.tables):
            st.markdown(f"**{md(title)}**")
            # a missing value (a setting left out: its note says why) is an empty cell, not "None"
            st.dataframe(frame, hide_index=True, key=f"exp_{name}_table_{i}", placeholder="")
            st.caption(caption)
    else:
        st.caption("Press Run to compute it on the loaded table (it may take a few seconds; the result is kept).")
