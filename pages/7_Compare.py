"""Compare: the pinned settings side by side, one click to make one current, and the decision record."""

from __future__ import annotations

import datetime as _dt

import pandas as pd
import streamlit as st

from core import figures, guarantee
from core.errors import WorkbenchError
from core.mechanisms import MECHANISMS
from core.palette import TRUTH, colour_name
from core.recommend import SETTINGS
from core.report import PIN_WORKLOAD, build as build_report
from core.risk import sweep_jobs
from core.session import SessionError, make_decision
from pages import ui
from pages.ui import cached, state
from pages.ui import data as uidata
from pages.ui import risk as uirisk
from pages.ui.fmt import md, number
from pages.ui.params import summary
from pages.ui.charts import chart

ui.page_setup("Compare", "📌")
ss = st.session_state
st.title("Compare pinned settings")
st.caption("Pin settings on the Sanitize page (up to 6); here they stand side by side on the same table, "
           "the same query workload and its seed. Make one current again, and record the decision.")

data = ui.dataset_or_empty_state()
ui.sidebar_status()
state.sync_url()
if data is None:
    st.stop()

pins = state.pins()
if not pins:
    st.info("Nothing is pinned yet: on the Sanitize page, choose a mechanism and its parameters, then press "
            "'Pin this setting'. Pin two or more to compare them here. The address bar keeps the pins, so a "
            "browser reload keeps them; the decision record and the history are kept only by the saved session "
            "(Home).")
    st.page_link("pages/1_Sanitize.py", label="Go to the Sanitize page", icon=":material/science:")
    st.stop()

#: the workload every pin is measured on (the Query error page's default, fixed so pins stay comparable); the
#: report's side-by-side of the pins uses the same one, so its numbers are these
WORKLOAD = dict(PIN_WORKLOAD)
wl_items = cached.items(WORKLOAD)
workload = cached.workload(data, data.key, "seed000", wl_items)
bands = [b.name for b in workload.bands]


#: the report's risk-utility map: the Trade-offs page's default queries and sampled records, so the
#: settings it measured there (defaults unchanged) are reused, not measured again
MAP_QUERIES, MAP_RECORDS = (p.default for p in SETTINGS[:2])


def _map(mechanism: str, others: list[str], seed: int) -> tuple[list, list[str]]:
    """The report's map (:func:`core.risk.sweep_jobs`' settings), each measured once through the app's cache.

    The settings are independent: measured two at a time, in forked
    processes or on threads (:func:`cached.map_outcomes`); a setting the Trade-offs page measured
    with the same table, seed, queries and records is read from the cache.
    The report draws the same points it would measure itself.
    """
    jobs = sweep_jobs([mechanism, *[o for o in others if o != mechanism]])
    outcomes = cached.map_outcomes(data, jobs, seed, MAP_QUERIES, MAP_RECORDS)
    return [v for k, v in outcomes if k == "point"], [v for k, v in outcomes if k == "skipped"]


def _make_current(setting):
    state.apply_setting(setting)
    state.record_history()
    ss["wb_compare_message"] = f"The setting '{setting.mechanism}' (seed {setting.seed}) is current again."


def _unpin(name):
    state.unpin(name)


results = {}
with st.spinner(f"Sanitizing and answering {len(workload):,} queries for {len(pins)} pinned settings…"):
    for pin in pins:
        s = pin.setting
        mech = MECHANISMS[s.mechanism]
        out = {"pin": pin, "mech": mech, "release": None, "eval": None, "verdict": "", "problem": None,
               "outcome": None, "risk": None, "people": None}
        try:
            values = mech.resolve(dict(s.params))
            v = cached.verdict(data, data.key, s.mechanism, cached.items(values), int(s.seed))
            out["verdict"] = f"{v.heading}: {v.detail()}"  # plain, qualified, vacuous, publishes little, ...
            out["outcome"] = v.outcome
            if not v.runs:
                out["problem"] = v.reason
            else:
                rel = cached.release(data, data.key, s.mechanism, cached.items(values), int(s.seed))
                out["release"] = rel
                out["eval"] = cached.evaluation(data, data.key, s.mechanism, cached.items(values), int(s.seed),
                                                "seed000", wl_items)
                args = (data, data.key, s.mechanism, cached.items(values), int(s.seed))
                out["risk"] = uirisk.block(args, v)  # the manifest's risk block, beside the verdict
                out["people"] = cached.people(*args)
        except WorkbenchError as exc:
            out["verdict"] = f"cannot run: {exc}"
            out["problem"] = str(exc)
        results[pin.name] = out

message = ss.pop("wb_compare_message", None)
if message:
    st.success(md(message))

# ------------------------------------------------------------------ side by side
st.header("Side by side")
cols = st.columns(len(pins))
current = state.current_setting().key()
for col, pin in zip(cols, pins):
    with col:
        is_current = pin.setting.key() == current
        st.markdown(f"**{md(pin.name)}**" + (" (current)" if is_current else ""))
        st.button("Make current", key=f"w_pin_current_{pin.name}", on_click=_make_current, args=(pin.setting,),
                  disabled=is_current, use_container_width=True,
                  help="Make this mechanism, its parameters and seed the current setting (Sanitize and every page).")
        st.button("Unpin", key=f"w_unpin_{pin.name}", on_click=_unpin, args=(pin.name,), use_container_width=True)

rows: dict[str, dict[str, str]] = {}


def _put(item, name, value):
    rows.setdefault(item, {})[name] = value


for name, r in results.items():
    s, mech, rel, ev = r["pin"].setting, r["mech"], r["release"], r["eval"]
    _put("mechanism", name, mech.title)
    _put("parameters", name, summary(mech.params, s.params))
    _put("seed", name, str(s.seed))
    _put("verdict", name, r["verdict"])
    if rel is None:
        continue
    risk = r["risk"]
    _put("measured risk (added, 95% interval)", name, uirisk.short(risk))
    _put("singling out (added, 95% interval)", name, uirisk.singling_short(risk))
    if risk and risk.get("measured"):
        _put("measured risk · in words", name, risk["sentence"])
        if risk.get("beside_verdict"):
            _put("verdict and risk", name, risk["beside_verdict"])
    else:
        _put("measured risk · in words", name, (risk or {}).get("why", "–"))
    if r["people"]:
        _put("a count in people (95% of the time)", name, r["people"]["sentence"])
    _put("records published (rows)", name, f"{rel.rows_out:,} of {data.n:,}")
    _put("published tables", name, f"{len(rel.tables)}")
    for band, b in zip(bands, ev.bands()):
        err = b["mean_relative_error"]
        _put(f"query error · {band} ({b['queries']:,} queries)", name, "–" if err is None else number(err, 3))
    frame = uidata.mapping_frame(dict(rel.privacy), s.mechanism)
    for item, value in zip(frame["item"], frame["value"]):
        _put(f"privacy · {item}", name, str(value))

names = list(results)
table = pd.DataFrame([{"": item, **{n: values.get(n, "–") for n in names}} for item, values in rows.items()])
st.table(table.set_index(""))  # every cell wraps: verdicts and parameter lists are long, nothing is cut off
st.caption("Verdict: whether the release meets the guarantee its mechanism declares, checked on the release "
           "itself (the Sanitize page shows the figures and the nearest setting that meets it). "
           f"Query error: mean relative error |estimate − true| / true per band, on seed 000's workload of "
           f"{len(workload):,} count queries (at most {WORKLOAD['max_attrs']} QI attributes each, workload seed "
           f"{WORKLOAD['seed']}), the same for every pin. Privacy figures are measured on each release; a "
           "dash means that release does not report the figure. '–' in every row below the verdict: the "
           "setting cannot run on this table. Measured risk: the added risk of an attacker who knows each "
           "person's QIs and guesses their sensitive value, over people held out of a measurement release, as a "
           "share of the most it could be, with its 95% interval (the same figure for every mechanism: "
           "docs/risk.md). A count in people: how far a published count lies from the true one 95% of the time.")
for name, r in results.items():
    if r["problem"]:
        st.warning(f"'{md(name)}' cannot run on this table: {md(r['problem'])}")
    elif r["outcome"] == guarantee.FAILS:
        st.warning(f"'{md(name)}' runs but does not meet its guarantee: {md(r['verdict'].partition(': ')[2])}")

ran = {n: r for n, r in results.items() if r["eval"] is not None}
if ran:
    left, right = st.columns(2)
    with left:
        errors = {n: [b["mean_relative_error"] for b in r["eval"].bands()] for n, r in ran.items()}
        chart(figures.band_errors(bands, errors), key="compare_bands")
        st.caption("Mean relative error per band (log scale): high on the small-count band protects "
                   "individuals, low on the selectivity bands keeps large counts useful.")
    with right:
        published = {}
        for n, r in ran.items():
            found = uidata.release_sa_counts(r["release"], data)
            published[n] = None if found is None else found[1]
        chart(figures.sa_overlay(data.sa_labels, data.sa_counts, published, data.sa), key="compare_sa")
        st.caption(f"{colour_name(TRUTH).capitalize()} bars: the original table. Each line: one pinned release's records per sensitive value "
                   "(summed over its published table that carries the SA).")

# ------------------------------------------------------------------ decision
st.header("Decision record")
st.caption("Which pinned setting is chosen, why, who reviewed it and when. It goes into the saved session "
           "(Home page), the report and the manifest of the chosen release. A browser reload keeps the pins (the "
           "address bar holds them) but not this record: save the session on Home to keep it.")
decision = ss.get(state.DECISION)
pin_names = [p.name for p in pins]
# the form's text is kept in a plain key while it is being written, so a page switch loses nothing
draft = ss.get("wb_decision_draft") or {
    "chosen": decision.chosen if decision else pin_names[0],
    "rationale": decision.rationale if decision else "",
    "reviewers": ", ".join(decision.reviewers) if decision else "",
    "date": decision.date if decision and decision.date else _dt.date.today().isoformat()}
shown = {"w_decision_chosen": state.seed_widget(
               "w_decision_chosen", draft["chosen"] if draft["chosen"] in pin_names else pin_names[0],
               lambda v: v in pin_names),
         "w_decision_rationale": state.seed_widget("w_decision_rationale", draft["rationale"],
                                                   lambda v: isinstance(v, str)),
         "w_decision_reviewers": state.seed_widget("w_decision_reviewers", draft["reviewers"],
                                                   lambda v: isinstance(v, str)),
         "w_decision_date": state.seed_widget("w_decision_date", _dt.date.fromisoformat(draft["date"]),
                                              lambda v: isinstance(v, _dt.date))}

def _record():
    try:
        made = make_decision(
            ss["w_decision_chosen"], state.pins(), ss.get("w_decision_rationale") or "",
            [r for r in (ss.get("w_decision_reviewers") or "").split(",")],
            ss["w_decision_date"].isoformat() if ss.get("w_decision_date") else "",
            {n: r["verdict"] for n, r in results.items()}, table=data.key, author=ui.layout.signed_in_name())
    except SessionError as exc:
        ss["wb_decision_message"] = ("warning", str(exc))
        return
    ss[state.DECISION] = made
    ss.pop("wb_decision_report", None)  # a report of an older record must not be downloaded as this one
    ss["wb_decision_message"] = ("success", f"Decision recorded: '{made.chosen}'.")


def _clear():
    ss[state.DECISION] = None
    ss.pop("wb_decision_report", None)
    ss.pop("wb_decision_draft", None)
    for key in ("w_decision_chosen", "w_decision_rationale", "w_decision_reviewers", "w_decision_date"):
        ss.pop(key, None)


d1, d2 = st.columns([1, 2])
with d1:
    st.selectbox("Chosen pin", pin_names, key="w_decision_chosen",
                 index=state.index_of(pin_names, shown["w_decision_chosen"]))
    st.text_input("Reviewers (comma separated)", key="w_decision_reviewers", max_chars=500,
                  value=shown["w_decision_reviewers"])
    st.date_input("Date of the decision", key="w_decision_date", value=shown["w_decision_date"])
with d2:
    st.text_area("Rationale (why this setting, why not the others)", key="w_decision_rationale", height=178,
                 value=shown["w_decision_rationale"],
                 max_chars=20_000)
ss["wb_decision_draft"] = {"chosen": ss["w_decision_chosen"], "rationale": ss["w_decision_rationale"],
                           "reviewers": ss["w_decision_reviewers"],
                           "date": (ss["w_decision_date"] or _dt.date.today()).isoformat()}
b1, b2, _ = st.columns([1, 1, 3])
b1.button("Record the decision", key="w_decision_record", on_click=_record, type="primary")
b2.button("Clear the decision", key="w_decision_clear", on_click=_clear, disabled=decision is None)
note = ss.pop("wb_decision_message", None)
if note:
    (st.success if note[0] == "success" else st.warning)(md(note[1]))
decision = ss.get(state.DECISION)
if decision is not None:
    alts = decision.alternatives(pins)
    st.markdown(
        f"**Recorded:** '{md(decision.chosen)}' chosen"
        + (f" over {', '.join(repr(md(a)) for a in alts)}" if alts else "")
        + (f", reviewed by {md(', '.join(decision.reviewers))}" if decision.reviewers else "")
        + (f" on {decision.date}" if decision.date else "")
        + (f", recorded by {md(decision.author)} (signed in)" if decision.author else "") + ".")
    chosen = next((p for p in pins if p.name == decision.chosen), None)
    others = list(dict.fromkeys(p.setting.mechanism for p in pins if p.name != decision.chosen))
    if st.button("Build the report for the chosen pin", key="w_decision_report",
                 help="The review-meeting report (HTML, prints to PDF from the browser) about the chosen setting, "
                      "opening with this decision record; the other pins' mechanisms are compared in it."):
        with st.spinner("Sanitizing, answering the queries and measuring the map for the report…"):
            try:
                rseed = int(chosen.setting.seed)
                ss["wb_decision_report"] = build_report(
                    data, chosen.setting.mechanism, dict(chosen.setting.params), rseed, others,
                    queries=MAP_QUERIES, records=MAP_RECORDS, measured=_map(chosen.setting.mechanism, others, rseed),
                    decision=decision.to_json(pins), pins=[p.to_json() for p in pins])
            except WorkbenchError as exc:
                st.error(md(exc))
    if ss.get("wb_decision_report"):
        st.download_button("Download the report (HTML)", ss["wb_decision_report"].encode("utf-8"),
                           file_name=f"{data.name.replace(':', '_')}-decision-report.html", mime="text/html",
                           key="w_decision_report_dl", on_click="ignore")
        st.caption("Open it in a browser and print to PDF: each section starts a page, tables are not cut.")

state.end_of_run(globals())  # what an earlier run left is freed (pages.ui.state.end_of_run)
