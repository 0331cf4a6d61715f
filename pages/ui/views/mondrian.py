"""Sanitize-page view of a Mondrian generalization release: its groups, their ranges and sizes."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from core.experiments.seed004 import group_size_figure
from core.release import Release
from core.table import Dataset

from ..fmt import md
from pages.ui.charts import chart

#: what the view shows, in the label of the Sanitize page's expander that holds it
TOPIC = "its generalized groups, their ranges and sizes"

#: rows of the group table shown in the page (the download has them all)
SHOWN = 5000


def render(release: Release, data: Dataset) -> None:
    """Metrics (groups, k and l achieved, presence, association), the groups table and the size histogram."""
    p, pub = release.privacy, release.published
    k, l = int(pub["k"]), int(pub["l"])
    beta = float(release.params.get("beta", 1 / l))
    st.subheader(f"The {p['groups']:,} generalized groups")
    c1, c2, c3, c4 = st.columns(4)
    c1.metric("groups", f"{p['groups']:,}", help=f"{pub['levels']} rounds of median cuts.")
    c2.metric("smallest group (k)", f"{p['k_achieved']:,}", help=f"Every group has at least k = {k} records.")
    c3.metric("fewest distinct values (ℓ)", f"{p['l_achieved']:,}",
              help=f"Every group holds at least ℓ = {l} different sensitive values (distinct ℓ-diversity). "
                   "This counts values, not their shares: it does not cap how often one value occurs in a group.")
    c4.metric("largest presence", f"{p['max_presence']:.3f}",
              help="Seed 004 Theorem 1 on a generalized group: |G| / product of its range and set sizes, the "
                   "chance that a person whose QI values fall in the group's ranges is in the table.")
    frame = release.tables["groups"].to_frame().sort_values(["size", "gid"], ascending=[False, True])
    frame = frame.rename(columns={"gid": "group", "size": "records", "sa_values": "distinct sensitive values",
                                  "presence": "presence |G|/∏|domᵢ|", "association": "association max c/|G|"})
    st.dataframe(frame.head(SHOWN), hide_index=True, key="mondrian_groups",
                 column_config={"presence |G|/∏|domᵢ|": st.column_config.NumberColumn(format="%.4f"),
                                "association max c/|G|": st.column_config.NumberColumn(format="%.3f")})
    shown = "" if len(frame) <= SHOWN else f" The {SHOWN:,} largest groups are shown; the download has all."
    st.caption(
        "One row per group: its records and each QI generalized as the group publishes it, a range [lo, hi] "
        "for a numeric QI and the set of values for a categorical one. Every record of a group shows these "
        "same values beside its own sensitive value. Queries are answered by assuming the group's records "
        "are spread evenly over its ranges and sets (seed 004 §6)." + shown)
    sizes = release.tables["groups"].columns["size"]
    chart(group_size_figure(sizes, k, l), key="mondrian_sizes")
    st.caption(
        f"How many groups have each size. No group is below k = {k} (dashed line) and each holds at least ℓ = {l} "
        "different sensitive values. A cut is made only if both halves keep k records and ℓ values, so most "
        f"groups end up between k and about twice the smallest allowed size; mean size {np.mean(sizes):.1f}.")
    assoc = float(p["max_association"])
    if p.get("groups_above_beta"):  # the verdict above says how many groups exceed β; here why
        st.caption(f"Largest share of one value in a group: {assoc:.3f}. ℓ-diversity counts different values, "
                   "not their shares; Ambiguity bounds this share by β directly.")
    _group_browser(release, data)


def _group_browser(release: Release, data: Dataset) -> None:
    """Pick a group: its published generalization and its sensitive values with counts."""
    groups = release.tables["groups"]
    n = len(groups)
    with st.expander("Inspect one group"):
        gid = st.number_input("group", min_value=0, max_value=max(0, n - 1), value=0, step=1,
                              key="w_mondrian_group",
                              help="Group number as in the table above (column 'group').")
        row = groups.to_frame().iloc[int(gid)]
        box = ", ".join(f"{c} {row[c]}" for c in data.qi)
        st.markdown(f"Group {int(gid)}: {int(row['size']):,} records with {md(box)}; presence "
                    f"{row['presence']:.4f}, association {row['association']:.3f}.")
        st_counts = release.state["boxes"].st[int(gid)]
        labels = release.tables["release"].labels[data.sa]
        frame = pd.DataFrame({data.sa: labels[st_counts.indices], "records": st_counts.data.astype(int)})
        frame["share of the group"] = frame["records"] / frame["records"].sum()
        st.dataframe(frame.sort_values("records", ascending=False), hide_index=True, key="mondrian_group_sa",
                     column_config={"share of the group": st.column_config.NumberColumn(format="percent")})
        st.caption("The group's sensitive values as published (every member shows the same generalized QI "
                   "values); the largest share is the chance of guessing a member's value right.")
