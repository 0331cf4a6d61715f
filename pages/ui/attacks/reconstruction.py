"""Attack: reconstruct a target's micro group from a UP release, and from an RP release (seed 001).

The attacker knows the target's QI values, takes the records of the release
that share all of them (the micro group) and estimates how often each
sensitive value occurs there with the UP estimator.  The view simulates the
group only (many independent releases, vectorised) under plain uniform
perturbation and under Algorithm 1, and shows the two distributions of the
estimate beside the (lambda, delta) verdicts.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from core import figures
from core.errors import WorkbenchError
from core.experiments.seed001 import estimate_histogram
from core.mechanisms import get
from core.mechanisms.reconstruction import (
    analyse, group_labels, micro_groups, simulate_group, tail_bounds)
from core.palette import colour_name
from core.table import Dataset
from pages.ui import cached, state
from pages.ui.fmt import md
from pages.ui.params import param_inputs, set_values
from pages.ui.charts import chart

#: how the histogram's captions name its two series: the drawn colour (core.palette) and the fill
UP_BARS = f"{colour_name('uniform').capitalize()} plain bars"
RP_BARS = f"{colour_name('reconstruction')} hatched bars"

TITLE = "Micro-group reconstruction (seed 001)"
ORDER = 10

NAME = "reconstruction"
NS = "atk_reconstruction"
#: a setting offered in one click when the current one leaves no micro group open: the paper's defaults
#: (lambda = delta = 0.3) leave none of Adult's open, 0.5 opens 123.  The view never applies it by itself:
#: lambda, delta, p and the bounds are the reconstruction mechanism's parameters, shared with the Sanitize
#: page and the sidebar, so all three always show the same values.
DEMO = {"lambda": 0.5, "delta": 0.5}
EXPOSED_LISTED = 100


@cached.memo("reconstruction simulation")
def _simulate(_data: Dataset, data_key: str, values: tuple, counts: tuple, p: float, m: int, n_sample: int | None,
              releases: int, seed: int) -> tuple[np.ndarray, np.ndarray | None]:
    """Estimated shares of every value over ``releases`` releases of one group: UP and (if resampled) RP."""
    rng = np.random.default_rng([seed, 0xA77AC])
    v, c = np.array(values), np.array(counts)
    up = simulate_group(v, c, p, m, releases, rng)
    rp = simulate_group(v, c, p, m, releases, rng, n_sample=n_sample) if n_sample else None
    return up, rp


def _verdict_row(label: str, trials: int, f: float, est: np.ndarray, p: float, m: int, lam: float,
                 delta: float, family: str) -> dict:
    up, low = (float(x) for x in tail_bounds(trials, f, p, m, lam, family))
    above, below = float(np.mean(est > (1 + lam) * f)), float(np.mean(est < (1 - lam) * f))
    return {
        "release": label,
        "independent trials": trials,
        "bound, above +λ": up,
        "bound, below −λ": low,
        "test (bounds ≥ δ)": "private" if min(up, low) >= delta else "OPEN",
        "simulated, above +λ": above,
        "simulated, below −λ": below,
        "simulated ≥ δ": "yes" if min(above, below) >= delta else "no",
    }


def _pick_group(data: Dataset, an, exposure: np.ndarray) -> int:
    """The target's micro group: from the most exposed groups, or by its QI values (cascading)."""
    g = an.groups
    mode = st.radio("Choose the target", ["among the most exposed micro groups", "by its QI values"],
                    key=f"{NS}_mode", horizontal=True,
                    help="The attacker is assumed to know every QI value of the target (seed 001 §3.2).")
    ranked = np.argsort(-exposure, kind="stable")[:EXPOSED_LISTED]
    if mode.startswith("among"):
        labels = dict(zip(ranked.tolist(), group_labels(data, g, ranked)))

        def fmt(gid: int) -> str:
            tag = "open" if an.violating[gid] else "private"
            return (f"{labels[gid]} · {g.size[gid]:,} records · {data.sa_labels[g.top_value[gid]]} "
                    f"{g.top_frequency[gid]:.0%} · {tag}")

        options = ranked.tolist()
        shown = state.seed_widget(f"{NS}_group", options[0], lambda v: v in options)
        return int(st.selectbox("Target's micro group (most exposed first: size over threshold)", options,
                                key=f"{NS}_group", index=state.index_of(options, shown), format_func=fmt))
    codes = np.stack([c[g.first_row] for c in data.qi_codes], axis=1)  # (G, k): each group's QI values
    candidates = np.arange(g.n_groups)
    start = int(ranked[0])
    cols = st.columns(min(4, len(data.qi)))
    for j, col in enumerate(data.qi):
        options = np.unique(codes[candidates, j]).tolist()
        key = f"{NS}_qi_{j}"
        default = int(codes[start, j]) if int(codes[start, j]) in options else options[0]
        shown = state.seed_widget(key, default, lambda v, o=options: v in o)
        with cols[j % len(cols)]:
            chosen = st.selectbox(col, options, key=key, index=state.index_of(options, shown),
                                  format_func=lambda c, j=j: str(data.qi_labels[j][c]),
                                  help="Only values that occur together with the values chosen before are listed.")
        candidates = candidates[codes[candidates, j] == chosen]
    return int(candidates[0])


def render(data: Dataset) -> None:
    mech = get(NAME)
    st.markdown(
        "An attacker who knows a person's QI values takes the published records that share **all** of them "
        "(the person's *micro group*) and undoes uniform perturbation with the standard estimator. In a large "
        "group where one sensitive value dominates, the estimate is accurate, and the person's value is "
        "exposed. Seed 001 asks that an error beyond λ stays at least δ likely in both directions (tested with "
        "Chernoff bounds), and its Algorithm 1 (RP) randomises only a sample of each group that fails.")
    raw = param_inputs(mech.params, state.mech_params(NAME), NS,
                       derive=lambda r: mech.derived(data, mech.resolve(r)), columns=4)
    state.set_mech_params(NAME, raw)
    st.caption(f"These are the parameters of {mech.title} on the Sanitize page (and in the sidebar when it is the "
               "chosen mechanism): moving them here moves them there.")
    try:
        values = mech.resolve(raw)
        p = mech.derived(data, values)["p"]
    except WorkbenchError as exc:
        st.error(md(exc))
        return
    lam, delta, family = values["lambda"], values["delta"], values["bound"]
    an = analyse(micro_groups(data), p, data.m, lam, delta, family)
    g = an.groups

    # ------------------------------------------------------------- the whole table
    open_n = int(an.violating.sum())
    share = g.size[an.violating].sum() / data.n
    ok, message, _ = cached.eligibility(data, data.key, NAME, cached.items(values))
    if not ok:
        st.warning(md(message))
        after_text = "Algorithm 1 cannot close them at these settings."
    else:
        release = cached.release(data, data.key, NAME, cached.items(values), int(st.session_state[state.SEED]))
        after = int(release.privacy["violating_groups_after"])
        after_text = (f"Algorithm 1 closes {'all of them' if after == 0 else f'all but {after:,}'}: "
                      f"{after:,} open in the RP release (seed {release.seed}).")
    st.markdown(
        f"**At p = {p:.3g}, λ = {lam:g}, δ = {delta:g} ({family} bounds), plain UP leaves {open_n:,} of "
        f"{g.n_groups:,} micro groups open to reconstruction** ({share:.1%} of the records live in them). "
        + (after_text if open_n else "No group is open: the attack below fails by the paper's test at these "
                                    "settings (raise λ, δ or p)."))
    if not open_n and (lam, delta) != (DEMO["lambda"], DEMO["delta"]):
        demo = analyse(micro_groups(data), p, data.m, DEMO["lambda"], DEMO["delta"], family)
        n_demo = int(demo.violating.sum())
        if n_demo:
            def _demo():
                state.set_mech_params(NAME, {**state.mech_params(NAME), **DEMO})
                set_values(mech.params, NS, DEMO)

            st.button(f"Show the attack at λ = δ = {DEMO['lambda']:g} ({n_demo:,} micro groups open)",
                      key=f"{NS}_demo", on_click=_demo, type="primary",
                      help="Sets λ and δ of the reconstruction mechanism, here and on the Sanitize page.")

    # ------------------------------------------------------------- the target
    exposure = g.size / an.s_g
    gid = _pick_group(data, an, exposure)
    counts = g.counts_of(gid, data.m)
    present = np.flatnonzero(counts)
    size, top = int(g.size[gid]), int(g.top_value[gid])
    n_sample = int(an.n_sample[gid]) if an.violating[gid] else None
    stuck = bool(an.stuck[gid])  # open, and no sample passes the test: Algorithm 1 cannot repair it
    if stuck:
        n_sample = None
    m1, m2, m3, m4 = st.columns(4)
    m1.metric("records in the group |g|", f"{size:,}")
    # the value's name is a caption, not the metric: a metric value is cut to the column ("Prof-specialt…")
    m2.metric("share of its most frequent value", f"{g.top_frequency[gid]:.0%}",
              help=f"'{md(data.sa_labels[top])}' holds {g.top_frequency[gid]:.1%} of the group's records.")
    m2.caption(f"the value: {md(data.sa_labels[top])}")
    m3.metric("size threshold s_g", f"{an.s_g[gid]:,.1f} records",
              help="Largest group size that passes the (λ, δ) test with this top share (Theorems 5.11, 5.13).")
    how = ("resampled: only these records are randomised, then copied back to the group's size" if n_sample
           else "the group fails the test even with one randomised record: Algorithm 1 cannot repair it" if stuck
           else "the group passes the test, so RP randomises every record, as plain UP does")
    m4.metric("randomised under RP", "cannot repair" if stuck else f"{n_sample if n_sample else size:,} records",
              help=f"Independent coin flips behind the group's published values under Algorithm 1: {how}.")

    left, right = st.columns([2, 3])
    with left:
        fig = figures.sa_distribution(data.sa_labels, counts, data.sa, top=15)
        fig.update_layout(title={"text": "True values in the target's micro group"})
        chart(fig, key=f"{NS}_truth")
        st.caption("What the attacker wants to learn: the sensitive values of the people sharing the target's "
                   "QI values. A tall single bar means the target very likely has that value.")
    with right:
        options = present[np.argsort(-counts[present], kind="stable")].tolist()
        shown = state.seed_widget(f"{NS}_value", top, lambda v: v in options)
        value = st.selectbox("Value the attacker estimates", options, key=f"{NS}_value", index=state.index_of(options, shown),
                             format_func=lambda c: f"{data.sa_labels[c]} ({counts[c]} of {size})")
        releases = st.select_slider("Simulated releases", options=[200, 500, 1000, 2000, 5000], value=2000,
                                    key=f"{NS}_releases",
                                    help="Independent releases of this group only (the rest of the table does "
                                         "not affect the attacker's estimate).")
        up, rp = _simulate(data, data.key, tuple(present.tolist()), tuple(counts[present].tolist()), float(p), data.m,
                           n_sample, int(releases), int(st.session_state[state.SEED]))
        f = counts[value] / size
        chart(estimate_histogram(up[:, value], None if rp is None else rp[:, value], f, lam,
                                           str(data.sa_labels[value]),
                                           steps=(1 / (size * p), 1 / (n_sample * p) if n_sample else None)),
                        key=f"{NS}_hist")
        if stuck:
            st.caption(f"{UP_BARS}: the attacker's estimate over {releases:,} plain UP releases. This group fails the test "
                       f"even with a single randomised record (s_g = {an.s_g[gid]:.2f} < 1), so Algorithm 1 cannot "
                       f"repair it at these settings: lower p, λ or δ. The dashed lines mark an error of λ = {lam:g} "
                       f"either way.")
        elif rp is None:
            st.caption(f"{UP_BARS}: the attacker's estimate over {releases:,} releases. This group passes the test, so RP "
                       f"publishes it exactly as plain UP. The dashed lines mark an error of λ = {lam:g} either way.")
        else:
            st.caption(
                f"{UP_BARS}: plain UP ({size:,} independent coin flips); {RP_BARS}: RP, where only {n_sample:,} records are "
                f"randomised and copied back to {size:,} rows. Both are centred on the truth (the estimator stays "
                f"unbiased), but RP's spread is wider, so an error beyond the dashed lines (λ = {lam:g}) becomes "
                f"more likely, which is what the privacy notion asks for. Bar heights are densities (bins differ "
                f"because RP's estimate moves in coarser steps); hover for the share of releases in a bin.")

    rows = [_verdict_row("plain UP", size, f, up[:, value], p, data.m, lam, delta, family)]
    if rp is not None:
        rows.append(_verdict_row("RP (Algorithm 1)", n_sample, f, rp[:, value], p, data.m, lam, delta, family))
    frame = pd.DataFrame(rows)
    st.dataframe(frame, hide_index=True, key=f"{NS}_verdict",
                 column_config={c: st.column_config.NumberColumn(format="percent")
                                for c in frame.columns if c.startswith(("bound", "simulated,"))})
    st.caption(
        f"The (λ, δ) verdict for the value '{md(data.sa_labels[value])}': the paper's test compares the Chernoff "
        f"bounds ({family}) with δ = {delta:g}; the simulated columns are the real chances of an error beyond "
        f"λ = {lam:g} in {releases:,} releases. The bounds are upper bounds, so the real chances are smaller, "
        f"often much smaller: a group the test calls private can still be reconstructed more often than δ "
        f"suggests.")
