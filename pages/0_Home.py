"""Home page: choose a table, its sensitive attribute and QI columns, and see who can sanitize it.

The app starts with ``streamlit run app.py``, which lists the pages
(:data:`pages.ui.layout.PAGES`); the shared UI code is in ``pages/ui/``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from core import api, figures, guarantee, samples
from core import session as session_file
from core.errors import WorkbenchError
from core.mechanisms import MECHANISMS
from pages import ui
from pages.ui import cached, downloads, preview, state
from pages.ui import columns as uicols
from pages.ui import data as uidata
from pages.ui import risk as uirisk
from pages.ui import fmt
from pages.ui.fmt import md
from pages.ui.params import summary
from pages.ui.state import exact_values
from pages.ui.charts import chart

ui.page_setup("Home", "🛡️")
ss = st.session_state

st.title("Privacy-utility workbench")
st.markdown(
    "Before you publish a table of personal records, you must hide each person's **sensitive "
    "attribute** (a diagnosis, an occupation) while keeping counts over many people useful. "
    "This workbench lets you load a table, try the sanitization mechanisms of five research papers "
    "with their parameters, and see what each one protects and what it costs in query accuracy."
)
st.caption("Start here: choose a table and its columns. Then open **Sanitize** to build a release, "
           "**Bounds** for the papers' guarantees as curves, and **Query error** to measure accuracy.")

# ------------------------------------------------------------------ session file
def _open_session():
    f = ss.get("w_session_file")
    if f is not None:
        ss["wb_session_message"] = uidata.open_session(f.getvalue(), f.name)


with st.expander("Open a saved session (table, columns, settings, pins, history, decision)",
                 expanded=bool(ss.get("wb_session_message"))):
    st.file_uploader("Session file (.workbench.json, or .workbench.zip with the table inside)",
                     type=["json", "zip"], key="w_session_file", on_change=_open_session,
                     help="Saved at the bottom of this page. It is checked whole before anything changes: a file "
                          "from another table, damaged or edited by hand is refused with the reason.")
    opened = ss.pop("wb_session_message", None)
    if opened:
        {"success": st.success, "warning": st.warning}.get(opened[0], st.error)(md(opened[1]))

# ------------------------------------------------------------------ table source
st.header("1. Choose a table")
SOURCES = {"sample": "Bundled sample", "upload": "Upload a file (CSV or any delimited text, Excel, Parquet, SPSS, "
                                                  "Stata, SAS)"}
if uidata.folder_root() is not None:
    SOURCES["folder"] = "The server's data folder (large tables, on a sample)"
if ss[state.SOURCE] not in SOURCES:  # a link to a data-folder table on a server without one: said, not swapped
    st.warning(md(uidata.no_folder_message()))
shown = state.seed_widget("w_source", ss[state.SOURCE], lambda v: v in SOURCES)
source = st.radio("Table source", list(SOURCES), key="w_source", index=state.index_of(list(SOURCES), shown),
                  format_func=SOURCES.get, horizontal=True)
ss[state.SOURCE] = source

if source == "folder":
    state.follow_sample()
    uidata.folder_picker()
elif source == "sample":
    options = [s.name for s in samples.list_samples()]
    shown = state.seed_widget("w_sample", ss[state.SAMPLE], lambda v: v in options)
    name = st.selectbox("Bundled sample", options, key="w_sample", index=state.index_of(options, shown),
                        format_func=lambda n: uidata.sample_info(n).title)
    ss[state.SAMPLE] = name
    state.follow_sample()
    info = uidata.sample_info(name)
    st.markdown(info.description)
    st.caption(f"Source: {info.source}")
    if info.suggested:
        st.caption("Opens with its paper's parameters (change them on the Sanitize page): "
                   + "; ".join(f"{MECHANISMS[g.mechanism].title}: {exact_values(MECHANISMS[g.mechanism], g.as_dict())} "
                               f"({g.source})" for g in info.suggested if g.mechanism in MECHANISMS)
                   + ".")
    if info.sized:
        sizes = ss[state.SIZE]
        size_key = f"w_size_{name}"
        shown = state.seed_widget(size_key, int(sizes.get(name, info.default_size)), lambda v: isinstance(v, int))
        size = st.number_input(
            "Rows to generate (records)", min_value=1, max_value=samples.MAX_SIZE, step=10_000, key=size_key,
            value=shown,
            help=f"The generator is deterministic: the same size always gives the same table "
                 f"(default {info.default_size:,} rows; at most {samples.MAX_SIZE:,}).")
        ss[state.SIZE] = {**sizes, name: int(size)}
else:
    state.follow_sample()
    uploaded = st.file_uploader("Upload a table (any file name: the content decides)", type=None, key="w_upload")
    st.caption(preview.accepted_text())
    st.caption("The file stays in this session's memory: it is never written to disk, no other session sees "
               "it, and it leaves the server when this session ends. A link or reload names it by its content "
               "hash only and asks for the same file again; a saved session can embed it.")
    if ss.get(state.WANT_UPLOAD) and not ss.get(state.UPLOAD):
        st.warning(md(uidata.want_upload_message()))

        def _drop_wanted():
            ss[state.WANT_UPLOAD] = None
            ss["wb_upload_error"] = None

        st.button("Use another table", key="w_drop_wanted", on_click=_drop_wanted,
                  help="Forget the table the link names and upload any file (or choose a bundled sample above).")
    reading = False
    if uploaded is None:
        ss[preview.PREVIEW] = None  # the file was removed: its preview read goes too
    if uploaded is not None:
        current = ss.get(state.UPLOAD) or {}
        reading = uploaded.file_id != current.get("file_id") or ss.get("wb_reread") == uploaded.file_id
        if reading:
            chosen = preview.show(uploaded)
            if chosen is not None:
                new_table, _ = chosen
                refusal = uidata.wanted_upload_refusal(new_table, uploaded.name)  # never swap tables silently
                if refusal:
                    ss["wb_upload_error"] = {"file_id": uploaded.file_id, "message": refusal}
                else:
                    uidata.keep_upload(uploaded.name, uploaded.file_id, new_table)
                    ss["wb_upload_error"] = ss[preview.PREVIEW] = ss["wb_reread"] = None
                    ss[state.WANT_UPLOAD] = None
                    st.rerun()
        last_error = ss.get("wb_upload_error") or {}
        if last_error.get("file_id") == uploaded.file_id:
            st.error(md(last_error["message"]))
    kept = ss.get(state.UPLOAD)
    if kept and not reading and (uploaded is None or uploaded.file_id == kept["file_id"]):
        st.success(f"Using '{md(kept['name'])}': {len(kept['table']):,} rows, {len(kept['table'].columns)} columns.")
        b1, b2 = st.columns(2)
        if uploaded is not None and b1.button("Read the file differently", key="w_reread_upload",
                                              help="Open the preview again: delimiter, header, encoding, names, "
                                                   "missing-value markers."):
            ss["wb_reread"] = uploaded.file_id
            st.rerun()
        if b2.button("Forget the uploaded table", key="w_forget_upload"):
            uidata.forget_upload()
            ss[preview.PREVIEW] = None
            st.rerun()
    elif kept:
        st.caption(f"The earlier upload '{md(kept['name'])}' stays in use until **Use this table** is pressed "
                   "for the new file.")

try:
    table = uidata.current_table()
except uidata.TableProblem as exc:
    if source != "upload":  # a table that cannot be opened (a data-folder file gone or unreadable): a warning,
        (st.warning if exc.failure else st.info)(md(exc))  # as every other page shows it (layout.need_table)
    elif ss.get(state.WANT_UPLOAD):
        pass  # the warning above asks for the file
    elif uploaded is None:
        st.info("Upload a file above (delimited text, Excel, Parquet, Feather, SPSS, Stata or SAS), or choose a "
                "bundled sample.")
    ui.sidebar_status()
    state.sync_url()
    st.stop()

# ------------------------------------------------------------------ columns
#: the SA, QIs and bands last chosen per table in this session (``{table id: (sa, qis, bands)}``)
COLUMNS_BY_TABLE = "wb_columns_by_table"
st.header("2. Choose the sensitive attribute and the QI columns")
columns = table.columns
table_id = f"{table.name}|{table.key}"
if ss.get("_w_cols_for") != table_id:
    ss.pop("w_sa", None)
    ss.pop("w_qi", None)
    for key in [k for k in ss if isinstance(k, str) and k.startswith("w_band_")]:
        del ss[key]  # the band pickers are drawn again from wb_bands
    if ss.get("_w_cols_for") is not None:
        # another table chosen here: the columns and bands last chosen on it in this session (so coming back to
        # a table brings back its pins and decision, which belong to those columns), else its own proposal
        # and no bands, not the previous table's where they fit
        sa_, qi_, bands_ = ss.get(COLUMNS_BY_TABLE, {}).get(table_id, (None, None, {}))
        ss[state.SA], ss[state.QI], ss[state.BANDS] = sa_, qi_, dict(bands_)
    ss["_w_cols_for"] = table_id
sa0, qi0 = uidata.columns_for(table)
proposal = uidata.proposal(table)
c1, c2 = st.columns([1, 2])
with c1:
    shown = state.seed_widget("w_sa", sa0, lambda v: v in columns)
    sa = st.selectbox("Sensitive attribute (SA)", columns, key="w_sa", index=state.index_of(columns, shown),
                      help="The column to protect: each person's value must not be learnable from the release.")
qi_options = [c for c in columns if c != sa]
qi_start = [c for c in qi0 if c != sa]
with c2:
    shown = state.seed_widget("w_qi", qi_start, lambda v: all(c in qi_options for c in v))
    qi = st.multiselect("Quasi-identifiers (QI): columns an attacker may know", qi_options, key="w_qi",
                        default=shown,
                        help="Non-sensitive columns that queries select on (age, sex, ...). "
                             "Identifiers such as names or row ids should be left out.")
ss[state.SA], ss[state.QI] = sa, tuple(qi)
sa_why, qi_why = uicols.reason_captions(proposal, sa, tuple(qi))
with c1:
    st.caption(sa_why)
with c2:
    st.caption(qi_why)
uicols.reasons_table(proposal)
uicols.identifier_warnings(table, proposal, sa, tuple(qi))
bands = uicols.band_picker(table, tuple(qi), proposal.bandable if proposal is not None else ())
ss.setdefault(COLUMNS_BY_TABLE, {})[table_id] = (sa, tuple(qi), dict(bands or {}))
ui.sidebar_status()
state.sync_url()

if not qi:
    st.warning("Choose at least one QI column: queries select records by their QI values.")
    st.stop()
try:
    data = cached.dataset(table, table.key, sa, tuple(qi), cached.band_items(bands))
except WorkbenchError as exc:
    st.error(md(exc))
    st.stop()
uicols.micro_group_table(table, data, bands)

# ------------------------------------------------------------------ summary
st.header("3. The table")
top = int(np.argmax(data.sa_counts))
top_count = int(data.sa_counts[top])
m1, m2, m3, m4 = st.columns(4)
m1.metric("Records used", f"{data.n:,} rows", help="Rows with a value in every chosen column.")
m2.metric("Columns", f"{len(columns)} columns", help=f"{len(qi)} chosen as QIs, 1 as SA, the rest ignored.")
m3.metric("Distinct SA values (m)", f"{data.m:,} values")
m4.metric("Rows dropped (missing values)", f"{data.rows_dropped:,} rows",
          help="Rows with a missing value (empty, '?', NA) in a chosen column are left out.")

left, right = st.columns([3, 2])
with left:
    chart(figures.sa_distribution(data.sa_labels, data.sa_counts, data.sa), key="chart_sa")
    largest = data.n // top_count
    st.caption(
        f"Look at the tallest bar: '{md(data.sa_labels[top])}' holds {top_count:,} of {data.n:,} records "
        f"({top_count / data.n:.1%}). Mechanisms that put each record in a group of distinct sensitive "
        f"values (decoy groups, ℓ-diverse groups) need every value to fill at most 1/γ of the table, so "
        f"groups of at most {largest:,} value{'' if largest == 1 else 's'} are possible here.")
with right:
    st.markdown(f"**First rows of {md(uidata.table_label())}** ({len(table):,} rows in all)")
    st.dataframe(table.frame.head(20), hide_index=True, height=420, placeholder="")  # missing: empty, not "None"
    st.caption("As loaded, before any sanitization. Only the chosen SA and QI columns are used.")

# ------------------------------------------------------------------ eligibility
st.header("4. Which mechanisms can sanitize it, and which meet their guarantee?")
st.caption("Each mechanism at its current parameters and seed (change them on the Sanitize page), checked on "
           "the release it produces: whether it can run, and whether that release meets the mechanism's own "
           "guarantee (which part fails and the nearest setting that meets it), or the figures that show it does.")
#: above this many records Home checks the guarantees only when asked (eleven sanitizations of a large table)
CHECK_ROWS = 100_000
checked = data.n <= CHECK_ROWS or ss.get("wb_verdicts_for") == data.key
if not checked:
    st.caption(f"This table has {data.n:,} records: sanitizing it with all eleven mechanisms takes a while, so "
               "the table below says only which can run until you ask for the verdicts.")
    if st.button("Check every mechanism's guarantee", key="w_check_verdicts"):
        ss["wb_verdicts_for"] = data.key
        st.rerun()
#: issue 23 §5: the verdicts are computed behind the page (a change of SA, QI or banding ends its run at once) and
#: a fragment fills the table as they come in, with a progress bar; the page tests (WORKBENCH_VERDICT_SEARCH=inline,
#: no fragment timers in AppTest) compute them in the run
BEHIND = cached.search_behind_page()
seed = int(ss[state.SEED])
entries: list[tuple[str, object, object, tuple | None, str | None]] = []  # (title, params text, ..., args, error)
for name, mech in MECHANISMS.items():
    raw = state.mech_params(name)
    try:
        values = mech.resolve(raw)
        entries.append((mech.title, summary(mech.params, values), name, (data, data.key, name, cached.items(values),
                                                                         seed), None))
    except WorkbenchError as exc:
        entries.append((mech.title, summary(mech.params, raw), name, None, str(exc)))
RISK_COLUMN = "measured risk (added, 95% interval)"
SINGLING_COLUMN = "singling out (added, 95% interval)"
PEOPLE_COLUMN = "a count in people (95% interval)"


def _verdict(args: tuple):
    """The verdict when known (computed in the run when the page tests ask it), else started behind the page."""
    if not BEHIND or cached.verdict.is_cached(*args):
        return cached.verdict(*args)
    cached.in_background(cached.verdict, *args)
    return None


def _rows() -> tuple[list[dict], int, int, int]:
    """The table's rows, and how many verdicts, risks and count intervals are still being computed."""
    rows, checking, measuring, counting = [], 0, 0, 0
    for title, params, name, args, error in entries:
        row = {"mechanism": title, "parameters": params, **{guarantee.SHORT[o]: "" for o in guarantee.OUTCOMES}}
        risk_cell = singling_cell = people_cell = "–"
        if args is None:
            row[guarantee.SHORT[guarantee.CANNOT_RUN]] = error
        elif not checked:
            ok, message, _ = cached.eligibility(*args[:4])
            row[guarantee.SHORT[guarantee.CANNOT_RUN]] = "" if ok else message
            if ok:
                row[guarantee.SHORT[guarantee.FAILS]] = row[guarantee.SHORT[guarantee.MEETS]] = "not checked yet"
                risk_cell = singling_cell = people_cell = "not checked yet"
        else:
            verdict = _verdict(args)
            if verdict is None:
                checking += 1
                row[guarantee.SHORT[guarantee.FAILS]] = row[guarantee.SHORT[guarantee.MEETS]] = "checking…"
                risk_cell = singling_cell = people_cell = "…"
            else:
                row.update(verdict.cells())
                if verdict.runs:
                    block = uirisk.ready(args)
                    measuring += block is None
                    if block is None:
                        risk_cell = singling_cell = "measuring…"
                    else:
                        singling_cell = uirisk.singling_short(block)
                        block = api.beside_verdict(block, verdict)
                        risk_cell = uirisk.short(block) + (f" — {block['beside_verdict']}" if "agrees" not in
                                                           block.get("beside_verdict", "agrees") else "")
                    people = uirisk.ready(args, cached.people)
                    counting += people is None
                    people_cell = "measuring…" if people is None else fmt.people_short(people)
        rows.append({**row, RISK_COLUMN: risk_cell, SINGLING_COLUMN: singling_cell, PEOPLE_COLUMN: people_cell})
    return rows, checking, measuring, counting


def _verdict_table(polling: bool = False) -> None:
    """The verdicts' table; ``polling``: drawn by the fragment that polls it, which ends once every figure is in."""
    rows, checking, measuring, counting = _rows()
    runnable = sum(args is not None for *_, args, _e in entries)
    if checking:
        st.progress(1 - checking / max(runnable, 1),
                    text=f"Checking each mechanism's guarantee on {data.n:,} records (a release each, and the "
                         f"nearest setting that meets it): {runnable - checking} of {runnable} done…")
    elif measuring or counting:
        st.progress(1 - (measuring + counting) / max(2 * runnable, 1),
                    text=f"Measuring the risk and the count intervals: {measuring + counting} figures to go…")
    st.table(pd.DataFrame(rows).set_index("mechanism"))
    st.caption("Measured risk: what an attacker who knows a person's QIs learns of their sensitive value from "
               "the release beyond what it teaches about people held out of it (0 nothing, 1 everything), "
               "the same scale for every mechanism (docs/risk.md); where it disagrees with the verdict the cell "
               "says so. Singling out: how often a combination of QI values read off the published rows "
               "isolates one person of the table beyond one not in it; shown beside the added risk, not part of "
               "it. A count in people: a true count of 10 (and of 1,000) is published within this many "
               "people of it 95% of the time (the release's own estimator; Query error shows it per band).")
    if polling and not (checking or measuring or counting):
        state.stop_polling()  # every figure is in and drawn: the table stops polling


_now, _checking, _measuring, _counting = _rows()
if _checking or _measuring or _counting:
    st.fragment(run_every=0.7)(_verdict_table)(polling=True)
else:
    _verdict_table()

st.header("5. Save this session")
session_now = state.session_now(table)
pin_count = len(session_now.pins)
st.caption(f"One file with the table reference (content hash {table.content_hash}), the columns, every "
           f"parameter set, {pin_count} pin{'s' if pin_count != 1 else ''}, the last "
           f"{len(session_now.history)} settings tried"
           + (" and the decision record" if session_now.decision else "")
           + ". Open it again above, or run `python -m core sanitize --session FILE --out release.csv`.")
v1, v2, _ = st.columns([1, 1, 2])
# the session is captured now: a lazy download runs outside this session's state
v1.download_button("Save the session (JSON)", session_file.to_bytes(session_now),
                   file_name=session_file.file_name(session_now), mime="application/json", key="dl_session",
                   on_click="ignore")
if ss.get(state.SOURCE) in ("upload", "folder"):
    v2.download_button("Save with the table inside (zip)",
                       downloads.table_inside(session_file.to_bytes, session_now, table),
                       file_name=session_file.file_name(session_now, embedded=True), mime="application/zip",
                       key="dl_session_zip", on_click="ignore",
                       help="The table in use (the upload, or the data folder's sample) goes inside as Parquet, so "
                            "the session opens anywhere. It holds every record: share it as you would the table "
                            "itself.")

st.header("Next")
n1, n2, n3 = st.columns(3)
with n1:
    st.page_link("pages/1_Sanitize.py", label="Sanitize: build and download a release", icon=":material/science:")
with n2:
    st.page_link("pages/2_Bounds.py", label="Bounds: the papers' guarantees as curves", icon=":material/show_chart:")
with n3:
    st.page_link("pages/3_Query_error.py", label="Query error: measure accuracy", icon=":material/target:")

state.end_of_run(globals())  # what an earlier run left is freed (pages.ui.state.end_of_run)
