"""Shared Sanitize-page view of an Ambiguity or PriView release: privacy over groups, unplaced records, a group browser."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from core.figures import bound_histograms
from core.mechanisms.ambiguity import group_stats, group_tables
from core.release import Release
from core.table import Dataset

from ..fmt import md
from pages.ui.charts import chart

#: what the view shows, in the label of the Sanitize page's expander that holds it
TOPIC = "privacy over its groups, unplaced records, a group browser"


def render(release: Release, data: Dataset) -> None:
    kind = release.mechanism
    ns = f"{kind}_view"
    alpha, beta = float(release.params["alpha"]), float(release.params["beta"])
    stats = group_stats(release)
    priv = release.privacy
    G = int(priv["groups"])

    c1, c2, c3, c4 = st.columns(4)
    c1.metric("QI-groups", f"{G:,}")
    c2.metric("records placed", f"{release.rows_out:,}",
              help=f"of {data.n:,} records in the table ({release.rows_out / max(data.n, 1):.1%}); the others are "
                   "unplaced (see below).")
    c3.metric("max presence", f"{priv['max_presence']:.4g}", help=f"Bound α = {alpha:g}. "
              + ("Theorem 1: |G| / Π|G_ATi|, recomputed from the published ATs and ST." if kind == "ambiguity" else
                 "Exact, from the published AT and ST (possible worlds pairing AT rows with ST records)."))
    c4.metric("max association", f"{priv['max_association']:.4g}", help=f"Bound β = {beta:g}. "
              + ("Theorem 2: c/|G|." if kind == "ambiguity" else "Exact: c(a, s)/c(a) among the ST rows of the "
                 f"person's value a of '{md(release.published['split'])}'."))

    unplaced = int(priv.get("unplaced", 0))
    if unplaced:
        # the verdict above warns and says why (once); here which values they hold
        st.markdown(f"**{unplaced:,} records are not published**, by value:")
        by_value = release.published.get("unplaced_by_value", {})
        if by_value:
            frame = pd.DataFrame({"value": list(by_value), "unplaced records": list(by_value.values())})
            frame["records in the table"] = [int(data.sa_counts[list(data.sa_labels.astype(str)).index(v)])
                                             for v in frame["value"]]
            st.dataframe(frame, hide_index=True, key=f"{ns}_unplaced")
            if release.params.get("construction") == "exact":
                st.caption(f"At most {release.published.get('max_placeable', 0):,} records fit in groups of the exact "
                           "construction: a group takes at most one block of records per value of the split "
                           "attribute, and each combination of the other QI values once.")
            else:
                st.caption(f"At most {release.published.get('max_placeable', 0):,} records fit in groups that hold "
                           "each value once: a value can place at most one record per group.")
    else:
        st.success("Every record is placed in a group.")

    if kind == "priview":
        st.markdown(
            f"**Split:** '{md(release.published['split'])}' is published with the sensitive values "
            f"(ST), the other QI attributes in the AT. Seed 004 Theorem 6 gives presence "
            f"{priv['max_presence_paper']:.4g} and association {priv['max_association_paper']:.4g}; computed "
            f"exactly from the published tables they are {priv['max_presence']:.4g} and "
            f"{priv['max_association']:.4g}.")
        st.caption("Theorem 6 treats the ST's sensitive values as if any AT row could carry any of them. But the "
                   "ST pairs each sensitive value with the split attribute's value, which an adversary knows for "
                   "the person: only the ST rows with that value are candidates. A value of the split attribute "
                   "held by one record of a group gives that record's sensitive value away (association 1).")
        losses = release.published.get("split_losses", {})
        if losses:
            st.dataframe(pd.DataFrame({"split A_j": list(losses), "expected loss": list(losses.values())}),
                         hide_index=True, key=f"{ns}_losses")
            st.caption("Expected loss of each split: the absolute error the lossy join puts on every two-attribute "
                       "count inside the groups (pairs the split separates). The lowest is kept unless a split "
                       "is chosen.")

    if G:
        fig = bound_histograms(stats["presence"], stats["association"], alpha, beta)
        chart(fig, key=f"{ns}_hist")
        st.caption("Each bar counts groups. Everything left of the dashed line meets the bound; bars right of it "
                   "are groups an adversary can say more about than the bound allows.")
        _browser(release, stats, ns)


def _browser(release: Release, stats, ns: str) -> None:
    st.subheader("Group browser")
    G = int(release.privacy["groups"])
    order = np.argsort(-stats["presence"], kind="stable")
    gid = st.number_input("Group number (GID)", min_value=0, max_value=G - 1, value=int(order[0]), step=1,
                          key=f"{ns}_gid", help="Starts at the group with the highest presence.")
    gid = int(gid)
    c1, c2, c3 = st.columns(3)
    c1.metric("records |G|", f"{int(stats['size'][gid]):,}")
    c2.metric("presence", f"{stats['presence'][gid]:.4g}")
    c3.metric("association", f"{stats['association'][gid]:.4g}")
    if release.mechanism == "priview":
        st.caption(f"Theorem 6 for this group: presence {stats['presence_paper'][gid]:.4g}, association "
                   f"{stats['association_paper'][gid]:.4g}.")
    tables = group_tables(release, gid)
    names = list(tables)
    cols = st.columns(min(4, len(names)))
    for i, name in enumerate(names):
        with cols[i % len(cols)]:
            st.markdown(f"**{md(name)}** ({len(tables[name])} rows)")
            st.dataframe(tables[name], hide_index=True, key=f"{ns}_g_{name}")
