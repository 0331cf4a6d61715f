"""Sanitize-page view of a Mondrian generalization release: its groups, their ranges and sizes."""

from __future__ import annotations

import numpy as np
import streamlit as st

from core.experiments.seed004 import group_size_figure
from core.release import Release
from core.table import Dataset

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
              help=f"Every group holds at least ℓ = {l} different sensitive values (distinct ℓ-diversity).")
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
    st.plotly_chart(group_size_figure(sizes, k, l), key="mondrian_sizes")
    st.caption(
        f"How many groups have each size. No group is below k = {k} (dashed line) and each holds at least ℓ = {l} "
        "different sensitive values. A cut is made only if both halves keep k records and ℓ values, so most "
        f"groups end up between k and about twice the smallest allowed size; mean size {np.mean(sizes):.1f}.")
    assoc = float(p["max_association"])
    if p.get("groups_above_beta"):
        st.info(f"{p['groups_above_beta']:,} of {p['groups']:,} groups let an adversary link a member to one "
                f"sensitive value with probability above β = {beta:g} (largest {assoc:.3f}): ℓ-diversity "
                "counts different values, not their shares. Ambiguity bounds this share by β directly.")
