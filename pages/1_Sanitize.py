"""Sanitize: pick a mechanism, move its parameters, see and download the release."""

from __future__ import annotations

import streamlit as st

from core import api, figures, guarantee
from core.cancel import Cancelled
from core.errors import WorkbenchError
from core.mechanisms import MECHANISMS, fresh_seed, searches_nearest
from core.palette import PALETTE, TRUTH, colour_name
from core.session import Setting
from pages import ui
from pages.ui import cached, downloads, lazy, state, views
from pages.ui import data as uidata
from pages.ui import risk as uirisk
from pages.ui.fmt import is_number, md, number
from pages.ui.params import param_inputs, summary
from pages.ui.pins import pin_bar
from pages.ui.charts import chart
from pages.ui.layout import slot

ui.page_setup("Sanitize", "🧪")
ss = st.session_state
st.title("Sanitize: build a release")

data = ui.dataset_or_empty_state()
if data is None:
    ui.sidebar_status()
    state.sync_url()
    st.stop()

PUBLISHES = {
    "table": "one sanitized table (plus the metadata below)",
    "tables": "several tables (all in one zip download)",
    "answers": "noisy answers to queries; the data stay with the curator",
}

# ------------------------------------------------------------------ mechanism
names = list(MECHANISMS)
shown = state.bind_widget("w_mech", ss[state.MECH], lambda v: v in names)
name = state.drawn("w_mech", st.selectbox(
    "Mechanism", names, key="w_mech", index=state.index_of(names, shown), format_func=lambda n: MECHANISMS[n].title,
    help="Every mechanism of the five papers and their baselines; the same choice is used on the Query error page."))
ss[state.MECH] = name
mech = MECHANISMS[name]
st.markdown(mech.summary)
st.caption(f"Source: {mech.paper}. Publishes {PUBLISHES.get(mech.publishes, mech.publishes)}.")

# ------------------------------------------------------------------ parameters
st.subheader("Parameters")
ns = f"m_{name}"


def _derive(raw):
    return mech.derived(data, mech.resolve(raw))


with slot():  # an "automatically" box ticked draws a caption for its slider
    raw = param_inputs(mech.params, state.mech_params(name), ns, derive=_derive)
state.set_mech_params(name, raw)

paper = state.suggestion(name)  # a toy table's paper uses exact values the sliders cannot hit (1/3, 2/3)
if paper is not None:
    wanted = paper.as_dict()
    exact = state.exact_values(mech, wanted)
    if all(raw.get(k) == v for k, v in wanted.items()):
        st.caption(f"Using the parameters of {paper.source} exactly: {exact}.")
    else:
        def _use_paper(values=dict(wanted)):
            state.apply_setting(Setting(name, {**state.mech_params(name), **values}, int(ss[state.SEED])))

        st.button(f"Use the paper's values: {exact}", key="w_use_paper", on_click=_use_paper,
                  help=f"The values of {paper.source}. The sliders move in steps and cannot hit such fractions exactly.")


def _new_seed():
    state.apply_setting(Setting(name, state.mech_params(name), fresh_seed()))


s1, s2, _ = st.columns([1, 1, 2])
with s1:
    shown = state.bind_widget("w_seed", int(ss[state.SEED]), state.valid_seed)
    seed = state.drawn("w_seed", st.number_input(
        "Seed (whole number)", min_value=0, max_value=state.MAX_SEED, step=1, key="w_seed", value=shown,
        help="Same table, parameters and seed give the same release; the manifest records it."))
with s2:
    st.write("")
    st.button("New random seed", key="w_new_seed", on_click=_new_seed,
              help="Draw a seed from the operating system's entropy.")
ss[state.SEED] = int(seed)
state.record_history()
with slot():  # a message after a pin or an undo, the pins' list once there are some
    pin_bar()
ui.sidebar_status()
state.sync_url()

try:
    values = mech.resolve(raw)
    derived = mech.derived(data, values)
except WorkbenchError as exc:
    st.error(md(exc))
    st.stop()

numbers = {k: v for k, v in derived.items() if is_number(v)}
with slot():  # how many derived values there are depends on the parameters
    if numbers:
        st.markdown("**Derived values** (computed from the parameters and this table)")
        per_row = min(3, len(numbers))  # four to a row cut long labels and values ("⌊|T| / …", "0.001165 (0.…")
        keys = list(numbers)
        for start in range(0, len(keys), per_row):
            cols = st.columns(per_row)
            for col, key in zip(cols, keys[start:start + per_row]):
                label, text, helps = uidata.metric_parts(key, numbers[key], name)
                col.metric(label, text, help=helps)

# ------------------------------------------------------------------ eligibility
def _apply(sugg: dict) -> None:
    """One-click fix, one action: the suggested parameters become the current setting (the widgets are drawn
    from it on the next run)."""
    state.apply_setting(Setting(name, {**state.mech_params(name), **sugg}, int(ss[state.SEED])))


def _fix_button(verdict, key: str) -> bool:
    """The one-click fix (when the verdict has a verified one); whether it was clicked in this run."""
    sugg = verdict.suggestion
    if not sugg or not sugg.get("verified"):
        return False  # only a fix checked to meet the guarantee by sanitizing with it is one click away (issue 23 §2)
    meets = verdict.suggestion_meets()
    meets = f" ({meets})" if meets else ""
    return st.button(f"Use {sugg['text']}{meets}", key=key, on_click=_apply, args=(dict(sugg["params"]),),
                     type="primary", help="Sets these parameters; the release and its verdict are recomputed.")


verdict_args = (data, data.key, name, cached.items(values), int(seed))
searching = None  # the nearest setting that meets the guarantee, while it is looked for behind the page
verdict = None
working = slot()  # the spinners: one place on the page whether the verdict is checked first or not
if not cached.eligibility(*verdict_args[:4])[0] or cached.verdict.is_cached(*verdict_args):
    with working, st.spinner(f"Checking {mech.title} on {data.n:,} records…"):
        verdict = cached.verdict(*verdict_args)
    if verdict.outcome == guarantee.CANNOT_RUN:
        unchecked = verdict.suggestion and not verdict.suggestion.get("verified")
        st.warning(md(verdict.reason) + (f" {md(verdict.fix())}" if unchecked else ""))  # said, not one click away
        _fix_button(verdict, "w_apply_suggestion")
        st.stop()

# ------------------------------------------------------------------ release
with working, st.spinner(f"Sanitizing {data.n:,} records with {mech.title}…"):
    try:
        release = cached.release(*verdict_args)
    except WorkbenchError as exc:
        st.error(md(exc))
        st.stop()
# what is measured behind the page (the nearest setting, the risk) starts once the page is drawn
cached.hold_background()
if verdict is None and cached.verdict.is_cached(*verdict_args):
    # the search behind the page (this session's earlier rerun, or another session's) finished meanwhile
    verdict = cached.verdict(*verdict_args)
elif verdict is None:
    # the release carries its verdict; only the search for the nearest setting that meets the guarantee
    # (up to 16 more releases) is left, and it runs behind the page (see _verdict_box)
    verdict = release.verdict
    if not searches_nearest(verdict) or not cached.search_behind_page():
        verdict = cached.verdict(*verdict_args)  # nothing to search (or searched inline): cached at once
    else:
        searching = cached.in_background(cached.verdict, *verdict_args)

st.header("The release")
st.caption(f"{mech.title} at {md(summary(mech.params, values))}, "
           f"seed {release.seed}: {len(release.tables)} published table(s), {release.rows_out:,} rows.")
st.subheader("Its guarantee")
st.caption(md(verdict.guarantee))


def _verdict_box(verdict, pending: str | None = None) -> bool:
    """The verdict (a warning unless it plainly meets) and its one-click fix; whether the fix was clicked.

    ``pending`` replaces the fix while the search for it runs (or says why it is missing).
    """
    box = st.success if verdict.plain else st.warning  # a failed or qualified guarantee is a warning, never an info
    head = verdict.heading[0].upper() + verdict.heading[1:]  # plain, qualified, vacuous, publishes little, ...
    fix = ""
    if pending:
        fix = f" {pending}"
    elif verdict.suggestion:
        fix = f" {md(verdict.fix())}"
    elif not verdict.covers:  # values outside the guarantee's scope alone are its terms: no setting is searched for
        fix = " No nearby setting was found that meets it."
    box(f"**{head}:** {md(verdict.detail())}{fix}"
        + "".join(f"  \n{md(text)}" for text in verdict.explains))  # the release's notes that say why, once
    return False if pending else _fix_button(verdict, "w_verdict_fix")


verdict_slot = slot()  # the verdict with or without its fix button, or the poll for the fix
if searching is None:
    with verdict_slot:
        _verdict_box(verdict)
else:
    @st.fragment(run_every=uirisk.POLL_SECONDS)
    def _searching(future=searching, verdict=verdict) -> None:
        """Until the search behind the page ends: the verdict without its fix; then with it.

        The release and its verdict are drawn at once; the nearest setting
        that meets the guarantee (up to 16 more releases) is looked for on a
        background thread (``cached.in_background``), and this fragment
        polls it.  When it is there, the fix is drawn here (the searched
        verdict differs from the release's only by it) and the poll ends
        (:func:`state.stop_polling`): the page settles without a second run
        of the whole page.  A click on the fix drawn here runs the whole
        page with the new setting.
        """
        if future.done():
            exc = None if future.cancelled() else future.exception()
            if future.cancelled() or isinstance(exc, Cancelled):
                state.rerun_page()  # cancelled meanwhile: the page asks again
            if exc is not None:
                _verdict_box(verdict, pending=f"The search for the nearest setting that meets it failed "
                                              f"({type(exc).__name__}: {md(exc)}); please report it.")
            elif _verdict_box(future.result()):
                st.rerun()  # the steward took the fix: the whole page, at the new setting
            state.stop_polling()
            return
        _verdict_box(verdict, pending="Looking for the nearest setting that meets it…")

    with verdict_slot:
        _searching()
with slot():  # as many notes as this setting has
    for text in verdict.notes:
        st.caption(md(text))
    for note in release.notes:
        if note not in verdict.explains:  # each message once: the verdict already says these
            st.info(md(note))

# the manifest's risk block, beside the verdict (measured behind the page and polled, like the search)
uirisk.section(verdict_args, verdict, after=searching)  # the fix first, then the risk and a count in people

left, right = st.columns(2)
with left:
    st.markdown(f"**Original** (first 20 of {data.n:,} records)")
    st.dataframe(uidata.original_preview(data), hide_index=True, key="preview_original", placeholder="")
with right:
    if len(release.tables) == 1:
        tname, table = next(iter(release.tables.items()))
        st.markdown(f"**Published: {tname}** (first 20 of {len(table):,} rows)")
        st.dataframe(uidata.sa_first(table.to_frame(20), data.sa), hide_index=True, key="preview_release",
                     placeholder="")
    else:
        tabs = st.tabs([f"{t} ({len(tab):,} rows)" for t, tab in release.tables.items()])
        for tab, (tname, table) in zip(tabs, release.tables.items()):
            with tab:
                st.dataframe(uidata.sa_first(table.to_frame(20), data.sa), hide_index=True,
                             key=f"preview_release_{tname}", placeholder="")
shuffled = slot()  # the caption below is drawn for some settings only
if any(len(t) == data.n for t in release.tables.values()):
    shuffled.caption("Published rows are shuffled, so row 1 on the right is not row 1 on the left: "
                     "compare distributions, not rows.")

counts = uidata.release_sa_counts(release, data)
if counts is not None:
    tname, after = counts
    fig = figures.sa_before_after(data.sa_labels, data.sa_counts, after, data.sa, after_label=f"published ({tname})")
    chart(fig, key="chart_before_after")
    gap = float(abs(after - data.sa_counts).sum()) / 2
    st.caption(
        f"Look at how far the {colour_name(PALETTE[1])} hatched bars move from the {colour_name(TRUTH)} ones: that is how much the published "
        f"per-value totals differ from the truth ({gap:,.0f} of {data.n:,} records, {gap / data.n:.1%}, "
        f"would have to change value to turn one into the other). Totals staying close while individual "
        f"rows change is what lets counts over many people stay useful.")
else:
    st.caption(f"No published table carries '{md(data.sa)}' by itself, so there is no before/after histogram; "
               "see the published tables above.")

c1, c2 = st.columns(2)
with c1:
    st.subheader("Published with the data")
    if release.published:
        # st.table wraps every cell: in a half-width grid long read-outs were cut ("T_p(f) per count f", lists)
        st.table(uidata.mapping_frame(dict(release.published), name).set_index("item"))
    else:
        st.caption("Nothing besides the table(s).")
    st.caption("Anyone receiving the release sees these values; estimators need them.")
with c2:
    st.subheader("Privacy checks")
    if release.privacy:
        st.table(uidata.mapping_frame(dict(release.privacy), name).set_index("item"))
    else:
        st.caption("This mechanism reports no privacy checks.")
    st.caption("Measured on this release (shares of records, probabilities, budgets).")

st.subheader("Download")
decision = state.decision_for(state.current_setting())  # only the chosen pin's release carries it
stem = f"{data.name.replace(':', '_')}-{name}-seed{release.seed}"
d1, d2, d3 = st.columns(3)
risk_mode = uirisk.mode()


def _file(kind: str):
    """The button's bytes, made on the click (pages.ui.downloads: a lambda here would keep this run's namespace)."""
    return downloads.release_file(kind, verdict_args, release, decision, risk_mode)


if len(release.tables) == 1:
    d1.download_button("Table as CSV", _file("csv"), file_name=f"{stem}.csv",
                       mime="text/csv", key="dl_csv", on_click="ignore",
                       help="Cells that a spreadsheet would run as a formula are prefixed with a quote.")
    d2.download_button("Table as Parquet", _file("parquet"), file_name=f"{stem}.parquet",
                       mime="application/octet-stream", key="dl_parquet", on_click="ignore")
else:
    d1.download_button("All tables as CSV (zip)", _file("zip-csv"),
                       file_name=f"{stem}-csv.zip",
                       mime="application/zip", key="dl_csv", on_click="ignore",
                       help="One CSV per published table and the manifest.")
    d2.download_button("All tables as Parquet (zip)", _file("zip-parquet"),
                       file_name=f"{stem}-parquet.zip", mime="application/zip", key="dl_parquet",
                       on_click="ignore")
d3.download_button("Manifest (JSON)", _file("manifest"),
                   file_name=f"{stem}.manifest.json",
                   mime="application/json", key="dl_manifest", on_click="ignore",
                   help="Mechanism, resolved parameters, seed, row counts, published metadata, privacy "
                        "checks and the command that reproduces this release.")
full = uidata.folder_command(release)
if full is not None:  # a sample of a data-folder table: the command line releases the whole table
    st.markdown(md(uidata.folder_release_text()))
    st.code(full, language="bash", wrap_lines=True)
else:
    st.markdown("Reproduce this release from the command line:")
    st.code(release.reproduce_command(), language="bash", wrap_lines=True)
if ss.get(state.SOURCE) == "upload":
    st.caption("Replace the table name in the command by the path of your file.")
if decision is not None:
    st.caption(f"This is the setting chosen in the decision record ('{md(decision['chosen'])}'): the manifest "
               "carries the record.")
# the boxes below are drawn only while open (pages.ui.lazy): closed, they cost a slider move nothing
with lazy.expander("Manifest as JSON", key=uirisk.MANIFEST_BOX) as open_:
    if open_:
        shown_risk = uirisk.ready(verdict_args)
        if shown_risk is None:
            st.caption("The risk block is being measured; the downloaded manifest carries it.")
        st.json(release.manifest(decision, None if shown_risk is None else api.beside_verdict(shown_risk, verdict)),
                expanded=1)

render = views.find(name)
if render is not None:
    with lazy.expander(f"More about this {mech.title} release: {views.topic(name)}", key="w_open_view") as open_:
        if open_:
            render(release, data)
cached.release_background()

state.end_of_run(globals())  # what an earlier run left is freed (pages.ui.state.end_of_run)
