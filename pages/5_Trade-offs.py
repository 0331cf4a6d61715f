"""Trade-offs: every mechanism on one risk-utility map, a recommender, and the review report."""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from dataclasses import replace

import pandas as pd
import streamlit as st

from core import figures
from core.errors import WorkbenchError
from core.intervals import count_intervals, people
from core.mechanisms import MECHANISMS
from core.params import resolve
from core.recommend import SETTINGS, Goals, choose, per_answer_budget
from core.report import build as build_report
from core.risk import MAP_ATTACKS, pareto, reconcile, risk_sentence, setting_text
from pages import ui
from pages.ui import cached, state
from pages.ui.fmt import md, number, param_text
from pages.ui.params import param_inputs
from pages.ui.charts import chart

ui.page_setup("Trade-offs", "⚖️")
ss = st.session_state
FROM_LINK = "wb_to_from_link"
#: the settings this session asked to measure ("Measure every setting"): job keys
ASKED = "wb_to_asked"
if FROM_LINK not in ss:  # the page's first run in this session: were its settings in the link?
    ss[FROM_LINK] = "to" in st.query_params
#: measured settings kept per table (shared for a bundled sample, private to the session for an upload)
KEPT = 4096
#: while the map is measured, its points so far are redrawn at most this often (the first as soon as it is
#: measured), and the progress bar moved at most every PROGRESS_SECONDS: each redraw is a plotly figure the
#: browser lays out again, and each move a message the browser renders the page's tree for, on the cores that
#: measure (at 0.7 s and a bar moved per setting, chromium took half a core of the two during Adult's map; at
#: 2 s and 0.25 s it took 2.8-3.3 s of CPU in a 6.4-7.5 s map, at 3 s and 1 s 2.2-2.9 s in 5.9-6.4 s)
STREAM_SECONDS = 3.0
PROGRESS_SECONDS = 1.0
_TITLES = {n: MECHANISMS[n].title for n in MECHANISMS}


@cached.memo("trade-off points", remeasure=True)
def _results(_data, data_key: str) -> dict:
    """``{"lock", "outcomes"}``: job key -> ("point", Point) or ("skipped", message), oldest first."""
    return {"lock": threading.Lock(), "outcomes": OrderedDict()}


@cached.memo("count intervals")
def _count_intervals(_data, data_key: str, name: str, params: tuple, seed: int, queries: int):
    """The setting's count intervals in people (:func:`core.intervals.count_intervals`) on the map's workload."""
    wl = cached.workload(_data, data_key, "seed000", cached.items({"queries": queries, "max_attrs": 3, "seed": seed}))
    return count_intervals(_data, name, dict(params), seed, workload=wl)


def _job_key(data_key: str, name: str, params: dict, seed: int, queries: int, records: int) -> tuple:
    return (data_key, name, tuple(sorted((k, param_text(v)) for k, v in params.items())), seed, queries, records)


def _target_inputs(params, stored: dict) -> dict:
    """The recommender's targets: an optional target is a "set a target" checkbox, then its value.

    ``param_inputs`` reads an optional parameter's checkbox as "derive it
    automatically", which is right for a mechanism's p and wrong here,
    where empty means no target; the value widget is ``param_inputs`` on
    the declared Param made required (its presets, range and help).
    """
    raw = {}
    per_row = 3  # at most three targets a row: five in one row cut their labels ("set a target for P_s…")
    for i, p in enumerate(params):
        if i % per_row == 0:
            cols = st.columns(per_row)
        with cols[i % per_row]:
            if p.optional:
                on_key = f"w_to_goal_{p.name}__on"
                shown = state.seed_widget(on_key, stored.get(p.name, p.default) is not None,
                                          lambda v: isinstance(v, bool))
                if not st.checkbox(f"set a target for {p.symbol}", key=on_key, value=shown,
                                   help=f"{p.help}\n\nTicked: recommended settings must meet this target. "
                                        "Unticked: no target."):
                    raw[p.name] = None
                    st.caption(f"{p.symbol} ({p.name}): no target.")
                    continue
            start = stored.get(p.name)
            start = p.default if start is None else start
            raw.update(param_inputs([replace(p, optional=False)], {p.name: start}, "to_goal", columns=1))
    return raw


def _remember(results: dict, key: tuple, outcome: tuple) -> None:
    with results["lock"]:
        results["outcomes"][key] = outcome
        while len(results["outcomes"]) > KEPT:
            results["outcomes"].popitem(last=False)


def _measure_all(data, todo: list, results: dict, seed: int, queries: int, records: int,
                 keys: list | None = None) -> None:
    """Measure the settings not measured yet, with a progress bar, drawing the points so far as they come.

    The settings are independent (each sanitized with the same seed, answered
    on the same workload, attacked on the same sample), so measuring them at
    the same time (:func:`cached.map_outcomes`) changes no figure.  The points of
    ``keys`` measured so far are drawn as they come (the first as soon as it
    is measured, then at most every :data:`STREAM_SECONDS`), so the map
    fills in while it is measured.
    """
    bar = st.progress(0.0, text=f"Measuring {len(todo)} settings…")
    live = st.empty()
    last = [time.monotonic() - STREAM_SECONDS]  # the first point is drawn as soon as it is measured
    finished, moved = [0], [0.0]  # settings answered; when the bar last moved

    def done(i, outcome):
        _remember(results, todo[i][1], outcome)
        finished[0] += 1
        n = len(todo)
        if time.monotonic() - moved[0] >= PROGRESS_SECONDS:
            bar.progress(finished[0] / n, text=f"Measured {finished[0]} of {n} settings…")
            moved[0] = time.monotonic()
        if keys and finished[0] < n and time.monotonic() - last[0] >= STREAM_SECONDS:
            so_far = [v for k in keys if (o := results["outcomes"].get(k)) and o[0] == "point" for v in [o[1]]]
            if so_far:  # (a setting that cannot run draws nothing and does not hold back the first points)
                live.plotly_chart(figures.risk_utility_map(so_far, (), "added_risk", "large_error", _TITLES),
                                  key=f"chart_map_live_{finished[0]}")
                last[0] = time.monotonic()

    cached.map_outcomes(data, [job for job, _ in todo], seed, queries, records, done=done)
    bar.empty()
    live.empty()


def _empty_map() -> None:
    """The map's axes before anything is measured: where the points will be drawn, and what they will show.

    Drawn while the page waits for "Measure every setting", so the browser
    has the chart library loaded and laid out before the measurement
    starts (the first chart of a page costs chromium 1.2-1.6 s of CPU, which
    it took from the two cores measuring the settings when the first live
    points were drawn: the map took 0.5-1 s longer).
    """
    fig = figures.risk_utility_map([], (), "added_risk", "large_error", _TITLES)
    fig.update_layout(title={"text": "The risk-utility map: measured settings are drawn here"})
    fig.update_xaxes(range=[0, 1])
    fig.update_yaxes(range=[-3, 0])  # log axis (exponents): errors of 0.1% to 100%, where measured points lie
    # no numbers yet, so no "Show as table" (pages.ui.charts.chart): a text alternative says what it is
    st.plotly_chart(fig, key="chart_map_empty", config={"staticPlot": True},
                    alt="Empty risk-utility map: added risk (0 to 1) across, large-count error (0.1% to 100%, log "
                        "scale) up; each setting is drawn here once measured.")


st.title("Trade-offs: which mechanism, which setting?")
st.markdown(
    "The mechanisms promise different things (ρ₁-ρ₂, small-sum error, (λ, δ), F'-privacy, α/β, ε). To compare "
    "them on one map, every release is **attacked the same way**: an attacker who knows a person's QI values "
    "guesses their sensitive value, once with the mechanism's own estimator and once from the nearest published "
    "record (the method of the anonymeter library). A part of the table (20%) is held out of a measurement "
    "release, so the attack is scored twice: on people in the table and on people not in it. What the release "
    "teaches about everyone is utility; the **added risk** is what it teaches about the people in it beyond "
    "that: (success in the table - success outside) / (1 - success outside), with its 95% interval. The other "
    "axis is the error of large counts. Each mechanism is drawn along its main parameter; the dashed line joins "
    "the settings that nothing else beats on both axes.")

data = ui.dataset_or_empty_state()
if data is None:
    ui.sidebar_status()
    state.sync_url()
    st.stop()

t = ss.setdefault(state.TRADEOFF, {})
names = list(MECHANISMS)
st.header("What to measure")
default = [n for n in t.get("mechanisms", names) if n in names]
shown = state.seed_widget("w_to_mechs", default, lambda v: all(n in names for n in v))
chosen = st.multiselect("Mechanisms on the map", names, key="w_to_mechs", default=shown,
                        format_func=lambda n: MECHANISMS[n].title,
                        help="Each is measured at every value of its main parameter (the sweep values below).")
t["mechanisms"] = list(chosen)
stored = t.setdefault("settings", {})
raw = param_inputs(SETTINGS[:2], stored, "to_measure", columns=4)
stored.update(raw)
seed = int(ss.get(state.SEED, state.DEFAULT_SEED))
with st.expander("Values swept per mechanism"):
    sweeps = t.setdefault("sweeps", {})
    for name in chosen:
        mech = MECHANISMS[name]
        if not (mech.main_param and mech.sweep):
            st.caption(f"{mech.title}: no parameter to sweep; measured once.")
            continue
        p = mech.param(mech.main_param)
        key = f"w_to_sweep_{name}"
        shown = state.seed_widget(key, sweeps.get(name, ", ".join(param_text(v) for v in mech.sweep)),
                                  lambda v: isinstance(v, str))
        sweeps[name] = st.text_input(f"{mech.title}: values of {p.symbol} ({p.name})", key=key, value=shown,
                                     help=f"{p.help} Allowed: {p.describe()}.")
ui.sidebar_status()
state.sync_url()

try:
    measured = resolve(SETTINGS[:2], raw, "the trade-offs page")
    queries, records = measured["queries"], measured["records"]
except WorkbenchError as exc:
    st.error(md(exc))
    st.stop()

jobs, problems, defaulted = [], [], []
for name in chosen:
    mech = MECHANISMS[name]
    base = state.mech_params(name)
    if mech.main_param and mech.sweep:
        p = mech.param(mech.main_param)
        values = []
        for item in [v for v in sweeps.get(name, "").split(",") if v.strip()]:
            try:
                values.append(p.parse(item, name))
            except WorkbenchError as exc:
                problems.append(str(exc))
        values = sorted(set(x for x in values if x is not None))
        if not values:  # an empty field: the mechanism's own sweep is measured, and the page says so
            values = sorted(set(mech.sweep))
            defaulted.append(f"No value of {p.symbol} was given for {mech.title}; its default values "
                             f"{', '.join(param_text(v) for v in values)} are measured.")
        for v in values:
            jobs.append((name, {**base, p.name: v}))
    else:
        jobs.append((name, base))
for message in problems:
    st.error(md(message))
for message in defaulted:
    st.info(md(message))
if not jobs:
    st.info("Choose at least one mechanism to put on the map." if not chosen else
            f"Nothing to measure for the {len(chosen)} mechanisms chosen; check the values swept per mechanism.")
    st.stop()

results = _results(data, data.key)
keys = [_job_key(data.key, name, params, seed, queries, records) for name, params in jobs]
known = sum(k in results["outcomes"] for k in keys)
# every setting measured before (in any session, for this table and these settings), or asked for in this
# session already (a result the byte-bounded cache let go is measured again, not hidden behind the button)
asked = ss.setdefault(ASKED, set())
if st.button("Measure every setting", type="primary", key="w_to_run"):
    asked.update(keys)
if not (known == len(jobs) or asked.issuperset(keys)):
    have = f" ({known} already measured)" if known else ""
    if ss.get(FROM_LINK):
        st.caption(f"The link's settings are loaded: {len(jobs)} settings on {data.n:,} records{have}; "
                   "'Measure every setting' measures them.")
    else:
        st.caption(f"{len(jobs)} settings to measure on {data.n:,} records{have}. Each is sanitized once (seed "
                   f"{seed}), answers {queries:,} queries and is attacked on {records:,} sampled records; results "
                   "are kept, so only new settings cost time.")
    _empty_map()
    if data.n <= cached.FORK_MAX_ROWS:  # what the button will need, built while the page is read (cached)
        try:
            cached.map_ready(data, jobs, seed, queries, records)
        except WorkbenchError:  # said when the button is pressed, by the measurement that needs them
            pass
    st.stop()
ss[FROM_LINK] = False

todo = [(job, key) for job, key in zip(jobs, keys) if key not in results["outcomes"]]
if todo:
    _measure_all(data, todo, results, seed, queries, records, keys)
points, skipped = [], []
for key in keys:
    kind, value = results["outcomes"][key]
    (points if kind == "point" else skipped).append(value)
if skipped:
    # one box, not one per setting: a sweep past a table's limits can skip many settings
    st.warning(f"Left out, not eligible on this table ({len(skipped)} setting{'s' * (len(skipped) != 1)}):\n\n"
               + "\n".join(f"- {md(s)}" for s in skipped))
if not points:
    st.stop()

# ------------------------------------------------------------------ the map
st.header("The risk-utility map")
c1, c2, c3 = st.columns([4, 4, 3])  # the toggle's label whole at 1,024 px (cut at [5, 5, 2])
risk_keys, util_keys = list(figures.RISK_MEASURES), list(figures.UTILITY_MEASURES)
shown_risk = state.seed_widget("w_to_risk", t.get("risk", risk_keys[0]), lambda v: v in risk_keys)
shown_util = state.seed_widget("w_to_util", t.get("utility", util_keys[0]), lambda v: v in util_keys)
with c1:
    # the picker shows the measure's short name (a long one was cut in the box); the help and the axis title say it all
    risk_key = st.selectbox("Risk axis", risk_keys, key="w_to_risk", index=state.index_of(risk_keys, shown_risk),
                            format_func=figures.measure_name,
                            help="\n\n".join(f"**{figures.measure_name(k)}**: {v}"
                                               for k, v in figures.RISK_MEASURES.items()))
with c2:
    util_key = st.selectbox("Utility axis", util_keys, key="w_to_util", index=state.index_of(util_keys, shown_util),
                            format_func=figures.measure_name,
                            help="\n\n".join(f"**{figures.measure_name(k)}**: {v}"
                                               for k, v in figures.UTILITY_MEASURES.items()))
with c3:
    shown = state.seed_widget("w_to_log", bool(t.get("log", True)), lambda v: isinstance(v, bool))
    log_y = st.toggle("Log error axis", key="w_to_log", value=shown)
t.update(risk=risk_key, utility=util_key, log=bool(log_y))
front = pareto(points, risk_key, util_key)
titles = {n: MECHANISMS[n].title for n in MECHANISMS}
if points and all(getattr(p, util_key) is None for p in points):  # said in place of an empty chart
    event = None
    st.info(f"No setting has a value on the utility axis ({figures.UTILITY_MEASURES[util_key]}): on this table of "
            f"{data.n:,} records no query of the workload falls in that band (e.g. no count above 10 for the "
            "large-count error), so the map has nothing to draw on it; choose another utility axis.")
else:
    fig = figures.risk_utility_map(points, front, risk_key, util_key, titles, log_y=log_y)
    event = chart(fig, key="chart_map", on_select="rerun", selection_mode="points")
mode = data.sa_counts.max() / data.n
per_answer = {titles[m]: note for m in dict.fromkeys(points[i].mechanism for i in front)
              if (note := per_answer_budget(m)) is not None}
st.caption(
    "Lower left is better on both axes: little for an adversary to learn, accurate large counts. Follow a "
    "mechanism's line to see what its parameter trades. On the dashed front are the settings no other measured "
    "setting beats on both axes. Hollow, crossed markers are settings whose release does not meet its mechanism's own "
    "guarantee (see Home or Sanitize for what fails and the nearest setting that meets it). "
    + "".join(f"{md(t)} on the front: {md(note)} " for t, note in per_answer.items())
    + f"Added risk 0 = the release teaches nothing about the people in it that it does not teach about people "
    f"outside it, 1 = the attacker who fails on outsiders always succeeds on insiders; the bars are its 95% "
    f"interval ({MAP_ATTACKS:,} attacks on each side per setting). Inference lift 1 = no better than always "
    f"guessing the most common value ({number(mode)} of the records); click a point for its details.")

others = [(p.verdict, p.added_risk) for p in points]


def _reconciled(i: int, p) -> str:
    """The verdict beside the measured risk, in one sentence (against the other settings on the map)."""
    if p.added_risk is None or p.verdict is None:
        return ""
    return reconcile(p.verdict, (p.added_risk, p.risk_low, p.risk_high), others[:i] + others[i + 1:])


rows = []
for i, p in enumerate(points):
    rows.append({"mechanism": titles[p.mechanism],
                 "setting": setting_text(p.params),
                 "added risk": p.added_risk,
                 "95% interval": "" if p.added_risk is None else f"{p.risk_low:.3f}-{p.risk_high:.3f}",
                 "right in the table": p.train_success, "right outside it": p.control_success,
                 "verdict and risk": _reconciled(i, p),
                 "inference accuracy": p.inference_accuracy, "lift (×)": p.inference_lift,
                 "small counts within 30%": p.small_sum_disclosure, "presence": p.presence,
                 "large-count error": p.large_error, "small-count error": p.small_error,
                 "on the front": i in front})
st.dataframe(pd.DataFrame(rows), hide_index=True, key="to_table",
             column_config={"added risk": st.column_config.NumberColumn(format="%.3f"),
                            "right in the table": st.column_config.NumberColumn(format="%.3f"),
                            "right outside it": st.column_config.NumberColumn(format="%.3f"),
                            "inference accuracy": st.column_config.NumberColumn(format="%.3f"),
                            "lift (×)": st.column_config.NumberColumn(format="%.2f"),
                            "small counts within 30%": st.column_config.NumberColumn(format="%.3f"),
                            "large-count error": st.column_config.NumberColumn(format="%.4f"),
                            "small-count error": st.column_config.NumberColumn(format="%.3f")})
st.caption("Every measured setting. Shares are fractions of records or queries (0.25 = 25%); errors are "
           "relative (0.10 = off by 10% of the true count). 'Right in the table' and 'right outside it' are the "
           "attacker's success on people in the measurement release and on the people held out of it; 'verdict "
           "and risk' says where the mechanism's own guarantee and the measured risk disagree.")

selected = None
try:
    pts = event.selection.points if event else []
except AttributeError:
    pts = []
if pts:
    idx = pts[0].get("customdata")
    if isinstance(idx, list):
        idx = idx[0]
    if isinstance(idx, int) and 0 <= idx < len(points):
        selected = points[idx]
st.subheader("Details of a point")
if selected is None:
    st.caption("Click a point on the map to see its measures here." if event is not None else
               "Choose a utility axis the map can draw, then click a point on it to see its measures here.")
else:
    mech = MECHANISMS[selected.mechanism]
    st.markdown(f"**{md(mech.title)}** at " + md(", ".join(f"{k} = {param_text(v)}" for k, v in selected.params.items())
                                                  or "its only setting"))
    budget = per_answer_budget(selected.mechanism, selected.params)
    if budget:
        st.info(md(budget), icon="ℹ️")
    if selected.added_risk is not None:
        st.markdown(md(risk_sentence(selected.train_success, selected.control_success, selected.added_risk,
                                     selected.risk_low, selected.risk_high, data.qi, data.sa)))
        st.caption(md(_reconciled(points.index(selected), selected)))
    m1, m2, m3, m4 = st.columns(4)
    m1.metric("inference accuracy", f"{selected.inference_accuracy:.1%}")
    m2.metric("lift over the most common value", f"{selected.inference_lift:.2f}×")
    m3.metric("small counts within 30%", "n/a" if selected.small_sum_disclosure is None
              else f"{selected.small_sum_disclosure:.1%}")
    m4.metric("large-count error", "n/a" if selected.large_error is None else f"{selected.large_error:.3g}")
    bands = pd.DataFrame(selected.bands)
    try:
        ci = _count_intervals(data, data.key, selected.mechanism, cached.items(selected.params), seed, queries)
    except WorkbenchError as exc:
        st.caption(f"Count intervals not available: {md(exc)}")
    else:
        st.markdown("In people: " + md(ci.sentence()) + f"; {md(ci.method)}.")
        half = {b.label: b.half_width for b in ci.bands}
        bands["95% interval (± people)"] = [None if half.get(n) is None else people(half[n]) for n in bands["name"]]
    st.dataframe(bands, hide_index=True, key="to_detail_bands")

    def _open(name=selected.mechanism, params=dict(selected.params)):
        ss[state.MECH] = name
        state.set_mech_params(name, {**state.mech_params(name), **params})

    if st.button("Use this setting on the Sanitize page", key="w_to_use", on_click=_open):
        st.switch_page("pages/1_Sanitize.py")

# ------------------------------------------------------------------ recommender
st.header("Recommend a setting")
st.markdown("State what the release must achieve; the workbench returns, per mechanism, the measured setting "
            "that meets every target with the most accurate large counts, or the nearest miss and the target "
            "that binds.")
goal_raw = _target_inputs(SETTINGS[2:], stored)
stored.update(goal_raw)
state.sync_url()
try:
    goals = Goals.from_settings(resolve(SETTINGS[2:], goal_raw, "the recommender"))
except WorkbenchError as exc:
    st.error(md(exc))
    st.stop()
recs = [choose(points, goals, data, n) for n in dict.fromkeys(p.mechanism for p in points)]
recs.sort(key=lambda r: (not r.meets, r.point.large_error if r.point and r.point.large_error is not None else 1e9))
rec_rows = []
for r in recs:
    row = {"mechanism": titles[r.mechanism],
           "setting": setting_text(r.point.params) + (" (per answer)" if r.caveat else ""),
           "meets all targets": "yes" if r.meets else "no",
           "binding target": r.binding or ""}
    for c in r.checks:
        row[c.target] = ("–" if c.value is None else f"{c.value:.3g}") + (" ✓" if c.ok else " ✗") + f" ({c.source})"
    rec_rows.append(row)
st.table(pd.DataFrame(rec_rows), hide_index=True)  # a static table: every column shown, long settings wrap
st.caption("✓ met, ✗ missed. 'analytical (exact)' values come from the papers' exact formulas (SPLU-Gen's "
           "binomial sawtooth, the Laplace tail); 'empirical' ones were measured on this table's release with "
           f"seed {seed}. A nearest miss names the target furthest from being met. Only the settings measured on the "
           "map are considered: add sweep values above to search finer.")
if goals.describe():
    st.caption("Targets: " + "; ".join(goals.describe()) + ".")
for r in recs:
    if r.caveat:
        st.caption(f"**{md(titles[r.mechanism])}**: {md(r.caveat)}")

# ------------------------------------------------------------------ report
st.header("Report for a review meeting")
st.markdown("One self-contained HTML file (opens offline; figures embedded) with the table summary, the chosen "
            "mechanism and its manifest, its analytical curves, the query error beside the other mechanisms on "
            "this map, and the map itself.")
current = ss.get(state.MECH) if ss.get(state.MECH) in names else names[0]
shown = state.seed_widget("w_to_report_mech", current, lambda v: v in names)
rmech = st.selectbox("Mechanism the report is about (at its parameters from the Sanitize page)", names,
                     key="w_to_report_mech", index=state.index_of(names, shown), format_func=lambda n: MECHANISMS[n].title)
if st.button("Build the report", key="w_to_report"):
    report_bar = st.progress(0.0, text="Building the report…")
    try:
        # the map measured above goes into the report as it is (same table, seed, queries and records)
        html_text = build_report(data, rmech, state.mech_params(rmech), seed, [n for n in chosen if n != rmech],
                                 queries=queries, records=records, measured=(points, skipped),
                                 progress=lambda f, text: report_bar.progress(min(max(f, 0.0), 1.0), text=text))
    except WorkbenchError as exc:
        st.error(md(exc))
        html_text = None
    report_bar.empty()
    if html_text:
        ss["wb_report_html"] = html_text
if ss.get("wb_report_html"):
    st.download_button("Download the report (HTML)", ss["wb_report_html"].encode("utf-8"),
                       file_name=f"{data.name.replace(':', '_')}-{rmech}-report.html", mime="text/html",
                       key="w_to_report_dl", on_click="ignore")
    st.caption("The report holds aggregate figures, the settings and the manifest: no record of the table.")

state.end_of_run(globals())  # what an earlier run left is freed (pages.ui.state.end_of_run)
