"""Home's column step: the proposal's reasons, identifier warnings, the band picker and micro-group sizes.

The logic is in :mod:`core.data.columns` (what to propose and why) and
:mod:`core.data.banding` (how to band); this module only draws it.  The
bands chosen here are stored as plain specs in ``wb_bands``
(:data:`pages.ui.state.BANDS`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from core.data.banding import Banding, _num, cuts_from_text, is_numeric, suggest
from core.data.columns import identifier_reason, inspect_columns
from core.errors import WorkbenchError
from core.table import Dataset, Table

from . import cached, state
from .fmt import display_value, md, number

METHODS = {"none": "no banding", "width": "equal width", "quantiles": "quantiles", "cuts": "cut points"}


def reason_captions(proposal, sa: str, qi: tuple[str, ...]) -> tuple[str, str]:
    """One caption for the SA picker and one for the QI picker: the proposal and why (or that it was overridden)."""
    if proposal is None:
        return "", ""
    if sa == proposal.sa:
        sa_text = f"Proposed: {md(proposal.sa)}, because {md(proposal.sa_reason)}."
    else:
        sa_text = f"Your choice; the proposal was {md(proposal.sa)} ({md(proposal.sa_reason)})."
    if tuple(qi) == tuple(c for c in proposal.qi if c != sa):
        qi_text = f"Proposed: {md(proposal.qi_reason)}."
    else:
        shown = ", ".join(md(c) for c in proposal.qi) or "none"
        qi_text = f"Your choice; the proposal was {shown} ({md(proposal.qi_reason)})."
    return sa_text, qi_text


def reasons_table(proposal) -> None:
    """Every column with its proposed role and why, in an expander."""
    if proposal is None:
        return
    with st.expander("Why each column was proposed (or left out)"):
        rows = [{"column": c, "proposed role and why": r} for c, r in proposal.reasons.items()]
        st.dataframe(pd.DataFrame(rows), hide_index=True, key="column_reasons",
                     column_config={"proposed role and why": st.column_config.TextColumn(width="large")})


def identifier_warnings(table: Table, proposal, sa: str, qi: tuple[str, ...]) -> None:
    """Warn once about the identifiers: left out of the release by default, or chosen (must not be published)."""
    frame = table.frame
    infos = inspect_columns(frame[[c for c in frame.columns if c in set(qi) | {sa}
                                   or (proposal is not None and c in proposal.identifiers)]])
    chosen = []
    for c in qi:
        why = identifier_reason(infos[c], len(frame)) if c in infos else None
        if why:
            chosen.append(f"'{md(c)}' ({md(why)})")
    left = [c for c in (proposal.identifiers if proposal is not None else ()) if c not in qi and c != sa]
    if chosen:
        st.warning(f"{'These QIs look' if len(chosen) > 1 else 'This QI looks'} like an identifier, unique to a "
                   f"person: {', '.join(chosen)}. An identifier must not be published: remove it from the QIs.")
    if left:
        names = ", ".join("'" + md(c) + "'" for c in left)
        st.warning(f"Left out of the release: {names} "
                f"{'look' if len(left) > 1 else 'looks'} like an identifier (a different value in almost every "
                "row) and must not be published. Only the chosen sensitive attribute and QI columns are published.")


def _stored(column: str) -> dict[str, Any] | None:
    return (st.session_state.get(state.BANDS) or {}).get(column)


def band_picker(table: Table, qi: tuple[str, ...], bandable: tuple[str, ...] = ()) -> dict[str, dict]:
    """Banding controls for each numeric QI; stores and returns ``{column: spec}`` of the valid ones.

    A banding that cannot be used (bad cut points, too many bands) is
    reported in one sentence and not applied.
    """
    ss = st.session_state
    frame = table.frame
    numeric = [c for c in qi if is_numeric(frame[c])]
    stored = dict(ss.get(state.BANDS) or {})
    if not numeric:
        return {}
    active_before = any(c in stored for c in numeric)
    title = "Band numeric QIs" + (f" (suggested for {', '.join(md(c) for c in bandable)}: many values make tiny "
                                  "micro groups)" if bandable else "")
    with st.expander(title, expanded=bool(bandable) or active_before):
        st.caption("Banding replaces each value by the interval holding it ([20, 30) holds 20 to 29): equal width "
                   "bands aligned on multiples of the width, quantile bands holding about equal numbers of records, "
                   "or your cut points (< first cut, [cut, next cut), ..., >= last cut). The release, the manifest "
                   "and the command line (--band) use the same bands.")
        for i, col in enumerate(numeric):
            values = pd.to_numeric(frame[col], errors="coerce").dropna()
            distinct = int(values.nunique())
            spec = stored.get(col)
            hint = suggest(frame[col])
            c1, c2, c3 = st.columns([2, 2, 3])
            year = "year" in str(col).lower() or bool(len(values) and (values % 1 == 0).all()
                                                      and values.min() >= 1000 and values.max() <= 2999)
            low, high = (display_value(values.min(), "year"), display_value(values.max(), "year")) if year else \
                (number(values.min()), number(values.max()))  # a year range reads 1974 to 2018, not 1,974
            c1.markdown(f"**{md(col)}**  \n{distinct:,} values, {low} to {high}")
            mkey, vkey = f"w_band_method_{col}", f"w_band_value_{col}"
            shown = state.seed_widget(mkey, spec["method"] if spec else "none", lambda v: v in METHODS)
            with c2:
                method = st.selectbox(f"Banding of {md(col)}", list(METHODS), key=mkey,
                                      index=state.index_of(list(METHODS), shown), format_func=METHODS.get)
            band = None
            try:
                if method == "width":
                    start = float(spec["width"]) if spec and spec.get("method") == "width" else \
                        float(hint.width) if hint else max(1.0, float(values.max() - values.min()) / 5 or 1.0)
                    shown = state.seed_widget(vkey + "_w", start, lambda v: isinstance(v, (int, float)) and v > 0)
                    with c3:
                        width = st.number_input(f"Band width of {md(col)}", min_value=0.0, key=vkey + "_w",
                                                value=float(shown),
                                                format="%g", help="Bands [k·w, (k+1)·w); must be above 0.")
                    band = Banding(col, "width", width=float(width))
                elif method == "quantiles":
                    start = int(spec["count"]) if spec and spec.get("method") == "quantiles" else 5
                    shown = state.seed_widget(vkey + "_q", start, lambda v: isinstance(v, int) and 2 <= v <= 100)
                    with c3:
                        count = st.number_input(f"Quantile bands of {md(col)}", min_value=2, max_value=100, step=1,
                                                key=vkey + "_q", value=shown,
                                                help="At most this many bands of about equal "
                                                "numbers of records (tied values never straddle a cut).")
                    band = Banding(col, "quantiles", count=int(count))
                elif method == "cuts":
                    if spec and spec.get("method") == "cuts":
                        start = ", ".join(_num(c) for c in spec["cuts"])
                    else:
                        inner = np.unique(np.quantile(values.to_numpy(float), [0.25, 0.5, 0.75], method="lower"))
                        start = ", ".join(_num(c) for c in inner)
                    shown = state.seed_widget(vkey + "_c", start, lambda v: isinstance(v, str))
                    with c3:
                        text = st.text_input(f"Cut points of {md(col)}, increasing, comma separated",
                                             key=vkey + "_c", value=shown, help="e.g. 18, 25, 35, 50, 65")
                    band = cuts_from_text(col, text)
                if band is not None:
                    band.edges(values.to_numpy(float))  # too many bands: one sentence, here
            except WorkbenchError as exc:
                st.warning(f"{md(exc)} The banding of {md(col)} is not applied.")
                band = None
            if band is None:
                stored.pop(col, None)
            else:
                stored[col] = band.spec()
    ss[state.BANDS] = stored
    return {c: stored[c] for c in numeric if c in stored}


def micro_group_table(table: Table, data: Dataset, bands: dict[str, dict]) -> None:
    """Micro-group sizes (records sharing every QI value) without and with the banding."""
    after = cached.micro_groups(data, data.key)
    rows = []
    if bands:
        plain = cached.dataset(table, table.key, data.sa, tuple(data.qi), ())
        before = cached.micro_groups(plain, plain.key)
        rows.append(_row("without banding", before))
        rows.append(_row("with banding (" + "; ".join(f"{c}: {Banding.from_spec(c, s).describe()}"
                                                      for c, s in bands.items()) + ")", after))
    else:
        rows.append(_row("as chosen (no banding)", after))
    st.markdown("**Micro groups**: records sharing every QI value. Tiny groups make people easy to single out; "
                "banding a numeric QI merges them.")
    st.dataframe(pd.DataFrame(rows), hide_index=True, key="micro_groups")


def _row(label: str, stats: dict) -> dict[str, Any]:
    return {"QIs": label, "micro groups": f"{stats['groups']:,}",
            "median size (records)": number(stats["median_size"]),
            "records alone in their group": f"{stats['singleton_share']:.1%}"}
