"""Attack: differential inference from Laplace answers (seed 003 Theorem 2) and the corruption attack (§6)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from core.bounds import compute
from core.bounds.differential import (
    principal_value_factor, robust_sd, simulate, theorem2, trimmed_mean)
from core.figures import PALETTE, TRUTH, curve_figure
from core.table import Dataset
from pages.ui import state
from pages.ui.fmt import md
from pages.ui.charts import chart

TITLE = "Differential inference and corruption (seed 003)"
ORDER = 20
NS = "atk_diff"
EPSILONS = (0.01, 0.05, 0.1, 0.5, 1.0, 2.0)
DRAWS = 20_000


@st.cache_data(max_entries=32, show_spinner=False)
def _simulate(x: float, y: float, eps: float, seed: int) -> np.ndarray:
    return simulate(x, y, eps, DRAWS, np.random.default_rng([seed, 3]))


@st.cache_data(max_entries=16, show_spinner=False)
def _curve(eps: float, ratio: float, x: float):
    return compute("differential-inference", {"epsilon": eps, "ratio": ratio, "x": x})


def _group(data: Dataset) -> tuple[float, float, str] | None:
    """(x, y, description) of a group picked on the loaded table, or None when empty."""
    c1, c2, c3 = st.columns(3)
    qi = c1.selectbox("QI column (the description)", list(data.qi), key=f"{NS}_qi")
    j = data.qi_index(qi)
    counts = np.bincount(data.qi_codes[j], minlength=data.domains[j])
    order = np.argsort(-counts, kind="stable")
    labels = [str(data.qi_labels[j][v]) for v in order]
    value = c2.selectbox(f"{qi} =", labels, key=f"{NS}_value", help="Most frequent values first.")
    code = int(order[labels.index(value)])
    members = data.qi_codes[j] == code
    sa_counts = np.bincount(data.sa_codes[members], minlength=data.m)
    sa_order = np.argsort(-sa_counts, kind="stable")
    sa_labels = [str(data.sa_labels[v]) for v in sa_order]
    target = c3.selectbox(f"{data.sa} = (the sensitive value)", sa_labels, key=f"{NS}_sa",
                          help="Most frequent in the group first.")
    x = float(members.sum())
    y = float(sa_counts[sa_order[sa_labels.index(target)]])
    if x == 0:
        return None
    return x, y, f"{qi} = {value}, {data.sa} = {target}"


def render(data: Dataset) -> None:
    st.markdown(
        "**Differential inference (Theorem 2).** An adversary asks two count queries: how many people match a "
        "description (x), and how many of them have a sensitive value (y). An ε-differentially private curator "
        "answers X = x + Lap(1/ε) and Y = y + Lap(1/ε). The ratio Y/X estimates y/x, the chance that anyone "
        "matching the description has the value, and the noise does not grow with the group: for a large group "
        "the estimate is as good as the truth. Differential privacy hides whether one person is in the data, not "
        "what the data says about people like them.")
    c1, c2 = st.columns([1, 2])
    with c1:
        shown = state.seed_widget(f"{NS}_eps", 0.1, lambda v: v in EPSILONS)
        eps = st.select_slider("ε (privacy budget per answer)", EPSILONS, key=f"{NS}_eps", value=shown,
                               help="Noise scale b = 1/ε records; smaller ε is safer. Seed 003 §2.1 uses 0.1.")
        source = st.radio("Group", ("from the loaded table", "typed in"), key=f"{NS}_source", horizontal=True)
    with c2:
        if source == "typed in":
            d1, d2 = st.columns(2)
            x = float(d1.number_input("x (records matching)", 1, 10_000_000, 100, key=f"{NS}_x"))
            y = float(d2.number_input("y (of them with the value)", 0, 10_000_000, 99, key=f"{NS}_y"))
            what = "typed in"
            if y > x:
                st.warning("y cannot exceed x (the second query counts a subset of the first); y is set to x.")
                y = x
        else:
            picked = _group(data)
            if picked is None:
                st.info("This group is empty; choose another value.")
                return
            x, y, what = picked
    ratio = y / x
    mean, var = theorem2(x, y, eps)
    draws = _simulate(x, y, eps, int(st.session_state.get(state.SEED, 0)))
    m1, m2, m3, m4 = st.columns(4)
    m1.metric("true y/x", f"{ratio:.2%}", help=f"{what}: x = {x:,.0f}, y = {y:,.0f}.")
    m2.metric("Theorem 2: E[Y/X]", f"{float(mean):.2%}",
              help="(y/x)(1 + 2b²/x²), a second-order Taylor approximation.")
    m3.metric("Theorem 2: sd of Y/X", f"{math.sqrt(float(var)):.3g}", help="√((2b²/x²)(1 + (y/x)²)).")
    m4.metric(f"Monte Carlo median of Y/X ({DRAWS:,} draws)", f"{np.median(draws):.2%}")
    table = pd.DataFrame([
        {"quantity": "E[Y/X] ÷ (y/x), Theorem 2: 1 + 2b²/x²", "value": 1 + 2 / (eps * x) ** 2},
        {"quantity": "E[Y/X] ÷ (y/x), exact principal value x·PV E[1/X]", "value": float(principal_value_factor(x, eps))},
        {"quantity": "Monte Carlo 1%-trimmed mean of Y/X", "value": trimmed_mean(draws)},
        {"quantity": "Monte Carlo plain mean of Y/X (unstable: see below)", "value": float(draws.mean())},
        {"quantity": "sd of Y/X, Theorem 2", "value": math.sqrt(float(var))},
        {"quantity": "sd of Y/X, Monte Carlo (IQR / 1.349)", "value": robust_sd(draws)},
        {"quantity": "chance the noisy X is below 1 (the ratio blows up)",
         "value": 0.5 * math.exp(-(x - 1) * eps) if x >= 1 else 1 - 0.5 * math.exp((x - 1) * eps)},
    ])
    st.dataframe(table, hide_index=True, key=f"{NS}_table",
                 column_config={"value": st.column_config.NumberColumn(format="%.6g")})
    st.caption(md(
        "Strictly, the mean of Y/X does not exist: X has a positive chance density at 0, so a plain average of "
        "simulated ratios never settles. Theorem 2's numbers are the first terms of a series; the exact principal "
        "value beside them (seed 003's ε = 0.1, x = 100: 1.02355 against the paper's 1.02) and the simulation's "
        "median and trimmed mean agree with the theorem's point: for large x, Y/X sits on y/x."))

    lo, hi = np.percentile(draws, [0.5, 99.5])
    shown = draws[(draws >= lo) & (draws <= hi)]
    fig = go.Figure(go.Histogram(x=shown, nbinsx=80, marker_color=PALETTE[0], name="Y/X",
                                 hovertemplate="Y/X ≈ %{x:.3f}: %{y} draws<extra></extra>"))
    fig.add_vline(x=ratio, line={"color": TRUTH, "width": 2}, annotation_text="y/x")
    fig.add_vline(x=float(mean), line={"color": PALETTE[3], "dash": "dash"}, annotation_text="Theorem 2 mean",
                  annotation_position="top left")
    fig.update_layout(title={"text": f"{DRAWS:,} noisy ratios Y/X at ε = {eps:g}, x = {x:,.0f}", "x": 0}, height=340,
                      margin={"l": 60, "r": 20, "t": 50, "b": 50}, showlegend=False)
    fig.update_xaxes(title_text="Y/X (the adversary's estimate of y/x)")
    fig.update_yaxes(title_text="draws")
    chart(fig, key=f"{NS}_hist")
    st.caption("The adversary's estimate from one pair of noisy answers falls in this histogram (the outer 1% of "
               "draws are cut off). The narrower it is around the solid line, the more the answers reveal.")

    curve = _curve(float(eps), float(min(max(ratio, 1e-6), 1.0)), float(x))
    chart(curve_figure(curve), key=f"{NS}_curve")
    st.caption(md(curve.caption))

    st.divider()
    _corruption(data)


def _corruption(data: Dataset) -> None:
    st.markdown(
        "**Corruption attack (seed 003 §6).** A bucketization publishes each bucket's sensitive values apart from "
        "its QI values. An adversary who learns (corrupts) the true values of q members of a bucket can strike "
        "those values off its list; after corrupting all but one member, the last value left is the target's, "
        "with certainty. Adding σ fake values (distinct, from the domain) to every bucket's list keeps the "
        "adversary guessing: a remaining value is real with probability (|g| − q)/(|g| − q + σ), at least 1/(1 + σ).")
    c1, c2, c3 = st.columns(3)
    size = int(c1.slider("bucket size |g|", 2, 50, 10, key=f"{NS}_g"))
    sigma = int(c2.slider("σ fake values per bucket", 0, 10, 2, key=f"{NS}_sigma"))
    q = int(c3.slider("members corrupted q", 0, size - 1, size - 1, key=f"{NS}_q"))
    qs = np.arange(size)
    fig = go.Figure()
    for s, colour, dash in ((0, PALETTE[3], "solid"), (sigma, PALETTE[1], "dash")):
        cert = (size - qs) / (size - qs + s) if s else np.ones(size)
        fig.add_trace(go.Scatter(x=qs, y=cert, mode="lines+markers", name=f"σ = {s}", line={"color": colour,
                                 "dash": dash}, hovertemplate=f"σ = {s}, q = %{{x}}: %{{y:.1%}}<extra></extra>"))
    fig.add_vline(x=q, line={"color": TRUTH, "dash": "dot"})
    fig.update_layout(title={"text": f"Certainty that a remaining listed value is real, bucket of {size}", "x": 0},
                      height=340, margin={"l": 60, "r": 20, "t": 50, "b": 50},
                      legend={"orientation": "h", "y": -0.25, "x": 0})
    fig.update_xaxes(title_text="members corrupted q")
    fig.update_yaxes(title_text="certainty", tickformat=".0%", range=[0, 1.05])
    chart(fig, key=f"{NS}_corruption")
    real = size - q
    certainty = real / (real + sigma) if sigma or real else 1.0
    st.metric("adversary's certainty at this q", f"{certainty:.1%}",
              help="(|g| − q)/(|g| − q + σ): the share of real values among those left on the bucket's list.")
    st.caption(f"With σ = 0 every value left on the list is real, so after q = {size - 1} corruptions the target's "
               f"value is known. With σ = {sigma} the certainty at that point is 1/(1 + σ) = {1 / (1 + sigma):.1%}. "
               "The price: σ fake entries per bucket that estimates count as real. Set σ on the Sanitize page "
               "(mechanism bucketization).")
