"""Sanitize page, reconstruction privacy (RP): which micro groups were resampled, violations before and after.

The resampled groups are recomputed from the input table and the release's
parameters (the test is deterministic); they are shown to the steward only:
the release does not say which groups were resampled, because that would
hint that they hold a dominant value.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from core.experiments.seed001 import group_scatter
from core.mechanisms.reconstruction import analyse, group_labels, summary_groups, threshold
from core.palette import PALETTE, colour_name
from core.release import Release, csv_bytes
from core.table import Dataset
from pages.ui.charts import chart

#: what the view shows, in the label of the Sanitize page's expander that holds it
TOPIC = "which micro groups were resampled, violations before and after"

#: distinct points drawn of each colour in the micro-group scatter (:func:`core.experiments.seed001.group_scatter`):
#: chromium lays out an SVG scatter point by point; on census 5M its plotly code took 347 ms of the page's main
#: thread a slider move at 1,000 a colour and 235 ms at 400 (CDP's profiler; the move 0.96-1.15 s, then 0.88-0.94 s)
SCATTER_POINTS = 400
#: resampled groups listed in the page, furthest over their threshold first (the CSV download has them all): on
#: census 5M the 2,354 rows of the whole list were a 1.27 MB message sent again on every slider move
SHOWN = 500


def render(release: Release, data: Dataset) -> None:
    prm, priv = release.params, release.privacy
    p, lam, delta, family = prm["p"], prm["lambda"], prm["delta"], prm["bound"]
    # the groups' sizes and top values only (kept with the page's cache, like the release's own); micro_groups
    # would also number each record and keep that with the table, outside the cache's budget (46 MB at 5M)
    an = analyse(summary_groups(data), p, data.m, lam, delta, family)
    g = an.groups
    rs = an.resample

    st.subheader("Micro groups and the (λ, δ) test")
    c1, c2, c3, c4 = st.columns(4)
    c1.metric("micro groups", f"{priv['micro_groups']:,}",
              help="Sets of records agreeing on every chosen QI column: what an attacker who knows a "
                   "person's QI values can single out.")
    c2.metric("open under plain UP", f"{priv['violating_groups_before']:,} groups",
              help=f"Groups failing the (λ = {lam:g}, δ = {delta:g}) test of seed 001 Corollary 4.10 if the table "
                   f"were published with plain uniform perturbation at p = {p:.3g}.")
    c3.metric("open in this release", f"{priv['violating_groups_after']:,} groups",
              help="The same test on the records Algorithm 1 actually randomised (0 by construction).")
    c4.metric("records in resampled groups", f"{priv['share_records_resampled']:.1%}",
              help="Share of the table whose published values come from a sample of their group, copied "
                   "back to the group's size.")

    curve_f = 1 / data.m + (1 - 1 / data.m) * np.arange(201) / 200
    fig = group_scatter(g.size, g.top_frequency, rs, curve_f, threshold(curve_f, p, data.m, lam, delta, family),
                        family, max_points=SCATTER_POINTS)
    chart(fig, key="recon_scatter")
    thinned = any("points drawn" in (trace.name or "") for trace in fig.data)
    st.caption(
        f"Each point is a micro group (or several with the same size and share: hover for how many): how many "
        f"records it has and how much its most frequent sensitive value dominates. "
        + (f"Each colour draws at most {SCATTER_POINTS:,} points, evenly along the share (the legend says how many of how many); "
           "the table below lists the resampled groups. " if thinned else "")
        + f"Groups above the dashed threshold are open to reconstruction under plain uniform "
        f"perturbation: an attacker's estimate of their values would likely be within λ = {lam:g} of the truth. "
        f"Those {int(rs.sum()):,} groups ({colour_name(PALETTE[1])} diamonds) were resampled: only about s_g of their records were "
        f"randomised. The more a value dominates, the smaller the group that gives it away.")

    if not rs.any():  # the verdict above says the release is UP under another name
        st.caption("Raise λ, δ or p to see Algorithm 1 at work.")
        return
    idx = np.flatnonzero(rs)
    idx = idx[np.argsort(-(g.size[idx] - an.s_g[idx]), kind="stable")]

    def frame_of(rows: np.ndarray) -> pd.DataFrame:
        return pd.DataFrame({
            "QI values": group_labels(data, g, rows),
            "records |g|": g.size[rows],
            "most frequent value": [str(data.sa_labels[v]) for v in g.top_value[rows]],
            "its share f": g.top_frequency[rows],
            "threshold s_g (records)": an.s_g[rows],
            "records randomised": an.n_sample[rows],
            "copies per randomised record": g.size[rows] / an.n_sample[rows],
        })

    st.subheader(f"The {len(idx):,} resampled micro groups")
    st.dataframe(frame_of(idx[:SHOWN]), hide_index=True, key="recon_groups",
                 column_config={"its share f": st.column_config.NumberColumn(format="percent"),
                                "threshold s_g (records)": st.column_config.NumberColumn(format="%.1f"),
                                "copies per randomised record": st.column_config.NumberColumn(format="%.2f")})
    if len(idx) > SHOWN:
        st.download_button(f"All {len(idx):,} resampled groups (CSV)", lambda: csv_bytes(frame_of(idx)),
                           file_name="resampled-micro-groups.csv", mime="text/csv", key="recon_groups_csv",
                           on_click="ignore", help="The whole list, for you only: it is not part of the release.")
    shown = (f"The {SHOWN:,} furthest over their threshold are listed; the CSV has all {len(idx):,}. "
             if len(idx) > SHOWN else "")
    st.caption(
        f"Largest first by how far the group exceeds its threshold (up to {priv['largest_threshold_gap']:,.1f} "
        f"records). {shown}Each group's published rows repeat the perturbed values of its randomised records, so an "
        f"attacker's estimate rests on that many independent coin flips instead of |g|. This list is for you, "
        f"not for the release: publishing it would tell an attacker which groups hold a dominant value.")
