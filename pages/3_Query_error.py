"""Query error: empirical count-query error by band, mechanisms side by side, parameter sweeps."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from core import figures, papers
from core.baselines import baselines, matched
from core.errors import WorkbenchError
from core.evaluate import WORKLOADS
from core.mechanisms import MECHANISMS
from core.workload import SMALL_MAX, THIN_QUERIES, by_count
from pages import ui
from pages.ui import cached, experiments, state
from pages.ui import risk as uirisk
from pages.ui.fmt import md, number, param_text
from pages.ui.params import label as plabel
from pages.ui.params import param_inputs, summary
from pages.ui.charts import chart

ui.page_setup("Query error", "🎯")
#: seed 000 Fig. 12 one click away: census-2sa, SPLU-Gen at γ = 5 with age_interval as second SA, joint queries
FIG12_LINK = f"Query_error?{papers.get('000-fig12').query_error}"
FIG12_LABEL = "Seed 000 Fig. 12's setting: two sensitive attributes"
FIG12_HELP = ("Opens census-2sa (100,000 rows, Age in ten intervals as a second sensitive attribute) with SPLU-Gen "
              "at γ = 5 and sa2 = age_interval, and the joint queries at 0.1%-0.7% selectivity, in a new tab.")
ss = st.session_state
st.title("Query error: how accurate are counts from the release?")
st.markdown(
    "A workload of random count queries (\"how many people aged 37, female, work in Sales?\") is answered "
    "from each release and compared with the true answers. The error is the **relative error** "
    "|estimate − true| / true (1.0 = off by the whole true count), averaged per band of queries. On small "
    "counts a large error protects individuals; on large counts a small error means the release is useful.")

data = ui.dataset_or_empty_state()
if data is None:
    ui.sidebar_status()
    state.sync_url()
    st.stop()

q = state.query_settings()

# ------------------------------------------------------------------ workload settings
st.header("Workload")
kinds = list(WORKLOADS)
shown = state.seed_widget("w_q_kind", q.get("kind", kinds[0]), lambda v: v in kinds)
kind = st.selectbox("Query generator", kinds, key="w_q_kind", index=state.index_of(kinds, shown),
                    format_func=lambda k: WORKLOADS[k].title)
q["kind"] = kind
spec = WORKLOADS[kind]
st.caption(spec.explain + (f" Source: {spec.paper}." if spec.paper else ""))
st.link_button(FIG12_LABEL, FIG12_LINK, icon=":material/open_in_new:", help=FIG12_HELP)
stored_settings = q.setdefault("settings", {})
if kind == "joint" and not (stored_settings.get(kind) or {}).get("sa2") and state.mech_params("splu").get("sa2"):
    # the second sensitive attribute chosen for SPLU-Gen on the Sanitize page is the joint queries' second one
    stored_settings.setdefault(kind, {})["sa2"] = state.mech_params("splu")["sa2"]
raw_settings = param_inputs(spec.params, stored_settings.get(kind, {}), f"wl_{kind}", columns=4)
stored_settings[kind] = raw_settings

# ------------------------------------------------------------------ mechanisms to compare
names = list(MECHANISMS)
current = ss.get(state.MECH) if ss.get(state.MECH) in names else names[0]
chosen_title = MECHANISMS[current].title
auto_compare = [current] + [b.name for b in baselines(current)]
if kind == "joint":  # only SPLU-Gen publishes two sensitive attributes (core.evaluate.estimate_joint)
    auto_compare = ["splu"]
explicit = q.get("compare")  # None: follow the mechanism chosen on the Sanitize page
shown_compare = state.seed_widget("w_q_compare",
                                  [n for n in (explicit if explicit is not None else auto_compare) if n in names],
                                  lambda v: all(n in names for n in v))
compare_label = (f"Mechanisms to compare: {chosen_title} (chosen on the Sanitize page) and the baselines its paper "
                 "compares it with, unless you change the list")
if kind == "joint":
    compare_label = ("Mechanisms to compare: SPLU-Gen, the only one that publishes two sensitive attributes, unless "
                     "you change the list (others are left out with the reason)")
compare = st.multiselect(compare_label, names, key="w_q_compare", default=shown_compare,
                         format_func=lambda n: MECHANISMS[n].title)
q["compare"] = None if list(compare) == auto_compare else list(compare)
shown = state.seed_widget("w_q_match", bool(q.get("match", True)), lambda v: isinstance(v, bool))
match = st.toggle(
    f"Match the baselines' parameters to {chosen_title}, as the papers do", key="w_q_match", value=shown,
    help="On: a baseline of the chosen mechanism runs at the setting its paper pairs with the chosen one "
         "(e.g. Anatomy at ℓ = ⌈1/ρ₂⌉ beside SDR, at ℓ = γ beside SPLU); the settings line under the chart "
         "says which. Off: every mechanism runs at its own parameters from the Sanitize page.")
q["match"] = bool(match)
shown = state.seed_widget("w_q_log", bool(q.get("log", True)), lambda v: isinstance(v, bool))
log_y = st.toggle("Logarithmic error axis", key="w_q_log", value=shown,
                  help="Errors span several orders of magnitude (0.001 on large counts, 1 or more on small ones).")
q["log"] = bool(log_y)
ui.sidebar_status()
state.sync_url()

seed = int(ss.get(state.SEED, state.DEFAULT_SEED))
try:
    settings = spec.resolve(raw_settings)
except WorkbenchError as exc:
    st.error(md(exc))
    st.stop()
settings_key = cached.items(settings)


def _build_workload():
    try:
        with st.spinner("Drawing the queries and counting their true answers…"):
            return cached.workload(data, data.key, kind, settings_key)
    except WorkbenchError as exc:
        st.error(md(exc))
    except Exception as exc:  # a core bug must not show a traceback to a steward
        st.error(f"The workload could not be built on this table ({type(exc).__name__}: {md(exc)}); "
                 "try another size, seed or table, and please report it.")
    return None


workload = _build_workload()
if workload is None:
    st.stop()
st.caption(f"{len(workload):,} queries on {data.n:,} records; queries per band: "
           + ", ".join(f"{b.name} ({int(m.sum()):,})" for b, m in zip(workload.bands, workload.membership)) + ".")
if kind == "seed000" and by_count(data.n):
    st.caption(f"This table is small ({data.n:,} records, so 0.5% of it is at most {SMALL_MAX} records): the "
               f"large-count bands are defined by true count, start above the small counts (1-{SMALL_MAX}) and "
               f"are merged until each has at least {THIN_QUERIES} candidate queries.")
_thin = [(b.name, int(m.sum())) for b, m in zip(workload.bands, workload.membership) if m.sum() < THIN_QUERIES]
if _thin:
    st.warning("Too thin to trust (fewer than " + f"{THIN_QUERIES} queries): "
               + "; ".join(f"{md(name)} has {k:,} quer{'y' if k == 1 else 'ies'}" for name, k in _thin)
               + ". Its mean error rests on too few queries; a larger table or workload gives more.")


def _evaluate(name: str, raw: dict):
    """An Evaluation, or the one-sentence reason it cannot be computed."""
    mech = MECHANISMS[name]
    try:
        values = mech.resolve(raw)
        ok, message, _ = cached.eligibility(data, data.key, name, cached.items(values))
        if not ok:
            return message
        return cached.evaluation(data, data.key, name, cached.items(values), seed, kind, settings_key)
    except WorkbenchError as exc:
        return str(exc)
    except Exception as exc:  # keep the other mechanisms' results on screen
        return f"{mech.title} failed on this workload ({type(exc).__name__}: {exc}); please report it."


def _setting_key(name: str, raw: dict) -> tuple:
    """What identifies an evaluation: the mechanism and its resolved parameters (raw ones if they do not resolve)."""
    try:
        return name, cached.items(MECHANISMS[name].resolve(raw))
    except Exception:  # noqa: BLE001 - _evaluate reports it; here it only has to tell settings apart
        return name, "raw", repr(sorted(raw.items()))


def _compared_params(name: str) -> tuple[dict[str, Any], str]:
    """Raw parameters a compared mechanism runs at, and how they were set (for the settings line)."""
    own = state.mech_params(name)
    second = getattr(workload, "second", "")
    if name == "splu" and second and own.get("sa2") != second:
        return {**own, "sa2": second}, (f"sa2 = {second}, the joint queries' second sensitive attribute"
                                        + (f", instead of {own['sa2']} from the Sanitize page" if own.get("sa2") else ""))
    if name == current:
        return own, "chosen on the Sanitize page"
    if name not in {b.name for b in baselines(current)}:
        return own, "its parameters from the Sanitize page"
    if not match:
        return own, f"its parameters from the Sanitize page; matching to {chosen_title} is off"
    try:
        paired, rule = matched(current, MECHANISMS[current].resolve(state.mech_params(current)), name, data)
    except Exception as exc:  # the chosen mechanism's own problem is shown in its row
        return own, f"its parameters from the Sanitize page ({chosen_title}'s could not be read: {exc})"
    return {**own, **paired}, f"matched to {chosen_title}: {rule}"


def _bands_of(wl) -> tuple[list, list, list]:
    """The workload's bands by kind: small counts (a count range), selectivity bands, and any other grouping."""
    small = [b for b in wl.bands if b.unit == "count" and b.hi is not None]
    share = [b for b in wl.bands if b.unit == "selectivity"]
    other = [b for b in wl.bands if b not in small and b not in share]
    return small, share, other


def _names(bands) -> str:
    return ", ".join(f"'{b.name}'" for b in bands)


def _bands_caption(wl) -> str:
    """What to look for in the band chart, for the bands this workload has (not a fixed seed 000 text)."""
    small, share, other = _bands_of(wl)
    parts = ["Compare bars within a band."]
    if small:
        counts = "; ".join(f"true counts {number(b.lo)} to {number(b.hi)}" for b in small)
        parts.append(f"On the small-count band{'s' if len(small) > 1 else ''} ({counts}) a high error means an "
                     "attacker cannot trust a count about a few people.")
    if share:
        nested = len(share) > 1 and all(b.hi is None for b in share)
        parts.append(f"On the selectivity bands ({_names(share)}: answers as a share of all records"
                     + ("; nested, each holds every query answering at least its share" if nested else "")
                     + ") a low error means analysts get useful answers.")
    if other:
        parts.append(f"The bands {_names(other)} group the queries by their condition; lower is more accurate.")
    if small and (share or other):
        parts.append("A mechanism is good when its bars are high on the small-count band and low elsewhere.")
    elif not small:
        parts.append("This workload has no small-count band: it measures utility only (lower is better in every "
                     "band). The seed 000 generator adds the small counts that show the privacy side.")
    return " ".join(parts)


# ------------------------------------------------------------------ comparison and sweep
# The comparison's and the sweep's settings are independent: they are evaluated in one batch on
# cached.WORKERS threads (the same figures; two threads kept busy instead of one finishing the
# comparison's odd setting alone), and drawn in their sections (the comparison's fills its box).
st.header("Mechanisms side by side")
compare_box = st.container()
results: dict[str, object] = {}
used: dict[str, tuple[dict[str, Any], str]] = {}
for name in compare:
    used[name] = _compared_params(name)

st.header("Error against a parameter")
sweepable = [n for n in names if MECHANISMS[n].main_param and MECHANISMS[n].sweep]
parsed: list = []
smech_name = None
if not sweepable:
    st.info("No registered mechanism declares a parameter to sweep.")
else:
    shown = state.seed_widget("w_q_sweep_mech", q.get("sweep_mech", current if current in sweepable else sweepable[0]),
                              lambda v: v in sweepable)
    s1, s2 = st.columns([1, 2])
    with s1:
        smech_name = st.selectbox("Mechanism", sweepable, key="w_q_sweep_mech", index=state.index_of(sweepable, shown),
                                  format_func=lambda n: MECHANISMS[n].title)
    q["sweep_mech"] = smech_name
    smech = MECHANISMS[smech_name]
    sparam = smech.param(smech.main_param)
    texts = q.setdefault("sweep_values", {})
    vkey = f"w_q_sweep_values_{smech_name}"
    shown = state.seed_widget(vkey, texts.get(smech_name, ", ".join(param_text(v) for v in smech.sweep)),
                              lambda v: isinstance(v, str))
    with s2:
        vtext = st.text_input(f"Values of {sparam.symbol} ({sparam.name}), comma separated", key=vkey, value=shown,
                              help=f"{sparam.help} Allowed: {sparam.describe()}. Fractions (1/13) and ln(3) "
                                   "are accepted. The other parameters stay as on the Sanitize page.")
    texts[smech_name] = vtext
    bad = []
    for item in [t for t in vtext.split(",") if t.strip()]:
        try:
            parsed.append(sparam.parse(item, smech.name))
        except WorkbenchError as exc:
            bad.append(str(exc))
    for message in bad:
        st.error(md(message))
    parsed = sorted(set(v for v in parsed if v is not None))
    if not parsed:
        st.info(f"Enter at least one value of {sparam.symbol} to sweep.")
    else:
        base = state.mech_params(smech_name)
        if smech_name == "splu" and getattr(workload, "second", ""):
            base = {**base, "sa2": workload.second}  # joint queries: SPLU-Gen randomises their second attribute too

jobs = [(name, used[name][0]) for name in compare] + [(smech_name, {**base, sparam.name: v}) for v in parsed]
keys = [_setting_key(name, raw) for name, raw in jobs]
unique = list(dict.fromkeys(keys))  # a swept value equal to a compared setting is evaluated once
calls = [lambda job=jobs[keys.index(k)]: _evaluate(*job) for k in unique]
evaluated = []
if calls:
    what = []
    if compare:
        what.append(f"{len(compare)} mechanism{'s' * (len(compare) != 1)} compared")
    if parsed:
        what.append(f"{len(parsed)} value{'s' * (len(parsed) != 1)} of {sparam.symbol} swept")
    with compare_box:
        bar = st.progress(0.0, text=f"Sanitizing and answering {len(workload):,} queries ({' and '.join(what)})…")
    answered = dict(zip(unique, cached.in_parallel(
        calls, done=lambda i, n: bar.progress(i / n, text=f"{i} of {n} releases answered…"))))
    evaluated = [answered[k] for k in keys]
    bar.empty()  # finished: the tables, charts and captions below say what was computed and left out
results.update(zip(compare, evaluated[:len(compare)]))
points = list(zip(parsed, evaluated[len(compare):]))

def _in_people(done) -> None:
    """Beside the mean relative errors: a count's 95% interval in people, per band and at 10 and 1,000 (issue 22).

    Measured behind the page (:func:`pages.ui.risk.ready`: up to five releases per mechanism, 0.2-0.8 s each on
    Adult), after the page is drawn; a fragment polls them and, when all are in, draws the table and ends its
    timer (:func:`pages.ui.state.stop_polling`).  Measured in the run, they held the page's first drawing: opening Query error
    took 3.6-6.0 s in chromium (issue 27's target for opening a page: 1.5 s).
    """
    if uirisk.mode() == "off":
        st.caption("A count's interval in people is not shown: the risk measurement is turned off on this server "
                   "(WORKBENCH_RISK=off).")
        return
    args = [(data, data.key, n, cached.items(used[n][0]), int(seed)) for n in done]
    people = [uirisk.ready(a, cached.people) for a in args]
    if all(p is not None for p in people):
        _people_table(done, people)
        return

    @st.fragment(run_every=uirisk.POLL_SECONDS)
    def _poll() -> None:
        # ready() again, not only the cache: a measurement cancelled meanwhile is started again, not waited for
        people = [uirisk.ready(a, cached.people) for a in args]
        if all(p is not None for p in people):
            _people_table(done, people)
            state.stop_polling()  # all measured and drawn: the page settles as it is
            return
        st.caption(f"Measuring how far a published count lies from the true one, in people, for "
                   f"{len(args)} release{'s' * (len(args) != 1)}…")

    _poll()


def _people_table(done, people: list) -> None:
    """The people table: one row per compared release (its method and half-widths, or why it has none)."""
    rows, why = [], {}
    for n, p in zip(done, people):
        if not p.get("measured", True):  # a table past the intervals' size limit, or a setting they cannot run
            why.setdefault(p.get("why", ""), []).append(MECHANISMS[n].title)
            continue
        row = {"mechanism": MECHANISMS[n].title, "method": p["method"]}
        for c in p["at"] + p["bands"]:
            row[c["label"]] = "–" if c["half_width"] is None else f"± {math.ceil(c['half_width'] - 1e-9):,}"
        rows.append(row)
    for text, titles in why.items():
        st.caption(f"A count's interval in people is not shown for {md(', '.join(titles))}: {md(text)}")
    if not rows:
        return
    st.markdown("**The same releases in people**: 95% of published counts lie within this many people of the "
                "true count")
    st.dataframe(pd.DataFrame(rows), hide_index=True, key="people_table")
    st.caption("Half-widths of the 95% interval of a count's estimate, in people: at a true count of 10 and of "
               "1,000 (queries whose true count is within half to twice that), and per band, on seed 000's pool of "
               f"2,000 queries drawn with the release seed {seed} (not necessarily this page's workload). Exact for "
               "Laplace, UP and RP; by five seeded releases for the others (core/intervals.py).")


cached.hold_background()  # the intervals in people are measured once the page is drawn (release_background below)
with compare_box:
    if not compare:
        st.info("Choose at least one mechanism to compare.")
    for name, res in results.items():
        if isinstance(res, str):
            st.warning(f"**{MECHANISMS[name].title}** is left out ({md(summary(MECHANISMS[name].params, used[name][0]))}, "
                       f"{md(used[name][1])}): {md(res)}")
    done = {n: r for n, r in results.items() if not isinstance(r, str)}
    if done:
        band_names = [b.name for b in workload.bands]
        errors = {}
        table = {"band": band_names}
        first = next(iter(done.values()))
        table["queries"] = [f"{b['queries']:,}" for b in first.bands()]
        for name, ev in done.items():
            bands = ev.bands()
            errors[MECHANISMS[name].title] = [b["mean_relative_error"] for b in bands]
            table[MECHANISMS[name].title] = [None if b["mean_relative_error"] is None
                                             else number(b["mean_relative_error"], 3) for b in bands]
        st.markdown("**Mean relative error by band** (|estimate − true| / true; lower = more accurate)")
        st.dataframe(pd.DataFrame(table), hide_index=True, key="band_table", placeholder="no query")
        chart(figures.band_errors(band_names, errors, log_y=log_y), key="chart_bands")
        st.caption(_bands_caption(workload))
        _in_people(done)
        st.caption("Settings: " + "; ".join(
            f"{MECHANISMS[n].title} at {md(summary(MECHANISMS[n].params, used[n][0]))} ({used[n][1]})" for n in done)
            + f"; release seed {seed}.")

if points:
    skipped = [(v, r) for v, r in points if isinstance(r, str)]
    good = [(v, r) for v, r in points if not isinstance(r, str)]
    plotted = (f"Plotted {len(good)} of the {len(parsed)} values of {sparam.symbol}"
               + (f": {', '.join(param_text(v) for v, _ in good)}" if good else ""))
    if skipped:
        st.warning(md(f"{len(skipped)} of the {len(parsed)} values of {sparam.symbol} left out of the chart:")
                   + "\n" + "\n".join(f"- {md(sparam.symbol)} = {param_text(v)}: {md(r)}" for v, r in skipped))
    if good:
        xs = [float(v) for v, _ in good]
        by_band = {b.name: [] for b in workload.bands}
        for _, ev in good:
            for b in ev.bands():
                by_band[b["name"]].append(b["mean_relative_error"])
        log_x = min(xs) > 0 and max(xs) / min(xs) >= 20
        fig = figures.sweep_errors(xs, by_band, plabel(sparam), log_y=log_y, log_x=log_x)
        chart(fig, key="chart_sweep")
        direction = {"higher": "to the right", "lower": "to the left"}.get(sparam.safer or "", "")
        small, share, other = _bands_of(workload)
        if small:
            guide = (f"Follow the small-count line ({_names(small)}) to see privacy grow"
                     + (f" as {sparam.symbol} moves {direction} (the safer direction)" if direction else "")
                     + (", and the selectivity lines to see what that costs larger counts. " if share or other
                        else ". "))
        else:
            guide = ("This workload has no small-count band, so the lines show utility only: lower is more "
                     "accurate" + (f", and {sparam.symbol} {direction} is the safer direction" if direction
                                   else "") + ". ")
        st.caption(f"{plotted}. Each line is one band of queries. {guide}"
                   f"Same workload and release seed ({seed}) at every point.")

# ------------------------------------------------------------------ scatter
@st.fragment
def _scatter(done: dict, workload, kind: str, settings_key: tuple) -> None:
    """Estimate against truth for one compared mechanism.

    A fragment: choosing another mechanism here redraws this chart only,
    not the comparison, the sweep and the papers' figures above and below.
    """
    q = state.query_settings()
    options = list(done)
    shown = state.seed_widget("w_q_scatter", q.get("scatter_mech", options[0]), lambda v: v in options)
    sname = st.selectbox("Mechanism", options, key="w_q_scatter", index=state.index_of(options, shown),
                         format_func=lambda n: MECHANISMS[n].title)
    q["scatter_mech"] = sname
    ev = done[sname]
    texts_q = cached.query_texts(data, data.key, kind, settings_key)
    band = workload.band_of()
    fig = figures.estimate_scatter(ev.true, ev.estimates, band, [b.name for b in workload.bands], texts_q,
                                   title=f"{MECHANISMS[sname].title}: estimated vs true count per query")
    chart(fig, key="chart_scatter")
    low = int(np.sum(ev.estimates < 0.5))
    st.caption(
        "Each dot is one query (hover for its text). Dots on the dashed line are answered exactly; the "
        "vertical spread at a given true count is the error. Small counts (left) should scatter widely for "
        "privacy; large counts (right) should hug the line for utility. "
        + (f"{low:,} estimates below 0.5 (zero or negative, as unbiased estimators may give) are drawn at 0.5 "
           "so they stay visible on the log axes." if low else ""))
    state.sync_url()  # a rerun of this fragment alone must still keep the link current


st.header("Estimated against true answers")
done = {n: r for n, r in results.items() if not isinstance(r, str)}
if not done:
    st.info("Compare at least one eligible mechanism above to see its estimates query by query.")
else:
    _scatter(done, workload, kind, settings_key)

# ------------------------------------------------------------------ paper figures
experiments.render("query_error", data)
cached.release_background()

state.end_of_run(globals())  # what an earlier run left is freed (pages.ui.state.end_of_run)
