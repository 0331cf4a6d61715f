"""Sanitize-page view of a small domain randomization (PP) release: its sub-tables and their retention."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from core.errors import WorkbenchError
from core.experiments.seed002 import subtable_retention_figure
from core.mechanisms import get
from core.release import Release
from core.table import Dataset

from ..data import percent
from ..fmt import md
from pages.ui.charts import chart

#: what the view shows, in the label of the Sanitize page's expander that holds it
TOPIC = "its sub-tables and their retention"


def _values_text(values: list[str], limit: int = 8) -> str:
    shown = ", ".join(values[:limit])
    return shown + (f", … ({len(values):,} in all)" if len(values) > limit else "")


#: sub-table grid columns, the ones to compare first (the long list of values SA_i last, so it cannot push
#: p_i and eps_i off-screen)
DIAGONAL = "P[x → x] = pᵢ + (1 − pᵢ)/mᵢ"


def subtables_frame(release: Release) -> pd.DataFrame:
    """One row per published sub-table: rows, m_i, gamma_i, p_i, the diagonal, eps_i, rho1_i, then SA_i.

    The diagonal entry of the sub-table's transition matrix,
    ``p_i + (1 - p_i)/m_i``, is the chance a record publishes its own value
    (seed 002 Example 1 prints these: 4/9 for T1 and 2/3 for T2).
    """
    rows = []
    for s in release.published["subtables"]:
        p, m = float(s["p"]), int(s["m"])
        rows.append({
            "sub-table": s["name"],
            "rows": s["rows"],
            "mᵢ (values)": m,
            "γᵢ": s["gamma"],
            "pᵢ (retention)": p,
            DIAGONAL: p + (1 - p) / m,
            "εᵢ (error bound)": s["eps"],
            "ρ₁ᵢ (largest protected share)": s["rho1"],
            "values SA_i": _values_text(s["values"], limit=6),
        })
    return pd.DataFrame(rows)


def render(release: Release, data: Dataset) -> None:
    """Sub-tables (rows, m_i, gamma_i, p_i, eps_i), retention per sub-table against UP, and how PP built them."""
    subs = release.published["subtables"]
    params = release.params
    p_up = float(params.get("retention_up", float("nan")))
    eps_up = params.get("eps_up")
    weighted = sum(s["rows"] * s["p"] for s in subs) / sum(s["rows"] for s in subs)

    st.subheader(f"The {len(subs)} published sub-table{'s' if len(subs) != 1 else ''}")
    c1, c2, c3, c4 = st.columns(4)
    c1.metric("sub-tables", f"{len(subs):,}")
    c2.metric("PP retention (record-weighted)", percent(weighted),
              help="The chance that a random record keeps its true value: the sub-tables' pᵢ weighted by rows.")
    c3.metric("UP retention (one table, all values)", percent(p_up),
              help=f"Uniform perturbation over all {data.m:,} values at the same (ρ₁, ρ₂): seed 002 eq. 4 and 6.")
    c4.metric("error bound ε(Part) vs UP's ε(T)",
              f"{release.published['eps_part']:.3g} vs {eps_up:.3g}" if eps_up is not None else "—",
              help="Seed 002 eq. 11-12, with confidence 1 − δ: bound on the error of a value's reconstructed "
                   "share of the table. PP minimises ε(Part).")
    st.dataframe(subtables_frame(release), hide_index=True, key="sdr_subtables",
                 column_config={
                     "sub-table": st.column_config.TextColumn(width="small", pinned=True),
                     "rows": st.column_config.NumberColumn(width="small"),
                     "mᵢ (values)": st.column_config.NumberColumn(width="small"),
                     "γᵢ": st.column_config.NumberColumn(format="%.3f", width="small"),
                     "pᵢ (retention)": st.column_config.NumberColumn(format="percent"),
                     DIAGONAL: st.column_config.NumberColumn(
                         format="percent", help="Chance a record publishes its own value: kept (pᵢ) or drawn "
                                                "back uniformly among the mᵢ values. The diagonal of seed 002's "
                                                "transition matrix."),
                     "εᵢ (error bound)": st.column_config.NumberColumn(format="%.4f"),
                     "ρ₁ᵢ (largest protected share)": st.column_config.NumberColumn(format="%.4f"),
                     "values SA_i": st.column_config.TextColumn(width="large"),
                 })
    st.caption(
        "Each sub-table Tᵢ is published with its rows (column "
        f"'{md(release.published['subtable_column'])}'), the list of values SA_i that occur in it, γᵢ and pᵢ. "
        "Inside Tᵢ a record keeps its value with probability pᵢ, otherwise it takes a value drawn uniformly "
        "from SA_i, so it publishes its own value with probability pᵢ + (1 − pᵢ)/mᵢ (the diagonal of the "
        "transition matrix; on the toy-sdr table with ρ₁ = 1/3, ρ₂ = 2/3 these are seed 002 Example 1's 4/9 "
        "and 2/3). ρ₁ᵢ is the largest share of a protected value in Tᵢ; it must stay below ρ₂, and "
        "γᵢ = ρ₂(1 − ρ₁ᵢ)/(ρ₁ᵢ(1 − ρ₂)) (seed 002 eq. 10). εᵢ is a share of |Tᵢ|.")

    fig = subtable_retention_figure(subs, p_up, data.m)
    chart(fig, key="sdr_retention")
    st.caption(
        f"Bars: each sub-table's retention pᵢ; dashed line: uniform perturbation's single p = {percent(p_up)} over "
        f"all {data.m:,} values at the same privacy. Bars above the line are what small domains buy: the "
        "fewer values a sub-table holds, the more often a record keeps its own.")

    with st.expander("How PP built these sub-tables (balancing, band order, merging)"):
        _construction(release, data)


def _construction(release: Release, data: Dataset) -> None:
    mech = get("sdr")
    try:
        values = mech.resolve({k: release.params[k] for k in ("rho1", "rho2", "delta")})
        pl = mech.pp(data, values)
    except WorkbenchError as exc:  # cannot happen for a release built from this table; say so if it does
        st.error(md(exc))
        return
    labels = data.sa_labels
    rows = []
    for pos, g in enumerate(pl.order):
        counts = pl.groups[g]
        present = np.flatnonzero(counts)
        parts = [f"{labels[x]} ×{int(counts[x])}" for x in present[np.argsort(-counts[present], kind="stable")]]
        rows.append({
            "band order": pos + 1,
            "initial group": f"g{g + 1}",
            "records": int(counts.sum()),
            "values": len(present),
            "content (value ×records)": ", ".join(parts[:10]) + (f", … ({len(parts)} values)" if len(parts) > 10 else ""),
            "merged into": f"T{pl.subtable_of_group[g] + 1}",
        })
    st.markdown(
        f"1. **Balancing** (seed 002 §5.1): θ = {pl.theta} "
        f"({'⌊|T| / f_max⌋' if pl.protected[data.sa_counts > 0].all() else '⌊|T′| / f_max⌋ over the protected records'}). "
        f"Each step takes the same number h of records from the θ most frequent remaining values; "
        f"{len(pl.groups)} initial groups g1…g{len(pl.groups)}.\n"
        "2. **Rearranging** (§5.2): the groups are ordered by reverse Cuthill-McKee on their overlap, so "
        "neighbours share values.\n"
        f"3. **Merging** (§5.3): consecutive groups are merged to minimise ε(Part) = {pl.eps_part:.4g} with "
        f"every ρ₁ᵢ < ρ₂; {len(pl.size)} sub-table{'s' if len(pl.size) != 1 else ''}.")
    st.dataframe(pd.DataFrame(rows), hide_index=True, key="sdr_groups")
    st.caption("Initial groups in band order and the sub-table each was merged into. On the toy-sdr sample with "
               "ρ₁ = 1/3, ρ₂ = 2/3 these are seed 002 Examples 2-4: g1, g3, g2 form T1 and g4, g5 form T2. "
               "Which records of a value go to which sub-table is random (seeded).")
