"""Seed 003's experiments on the loaded table, and the bucketization figures the pages reuse.

* ``seed003-l-vs-theta``: Figure 3, the l an l-diversity model of
  F'-privacy needs (``ceil(1/min f'_i)``) against theta, beside the largest
  l Anatomy can deliver on the table (``floor(|T| / max o_i)``).
* ``seed003-error-vs-theta``: Figures 4-5, MSE (Definition 3) and mean
  relative error of seed 003's workload (§7.2.2) against theta for
  TwoSize, MultiSize, Optimal (while the integer program is small) and
  Anatomy with ``l = ceil(1/min f'_i)``.  As in the paper, Anatomy's MSE is
  computed from groups of l and l + 1 records ignoring privacy; its query
  error only where l-diversity is feasible (the paper leaves it out of
  Figure 5 for the same reason).
* ``seed003-scaleup``: Figure 7, time of the two-size search against the
  scale-up factor gamma of |SA| (§7.3.2: value v becomes gamma v + r, r
  uniform in 0..gamma-1), for full pruning, loss pruning only, the plain
  scan (optional: slow) and the integer program (while small).

References
----------
seed 003 §7.1-7.3, Figures 3-7; MECHANISMS.md sections 4 and 6.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ..mechanisms import bucketization_algorithm as bk
from ..errors import ParameterError, WorkbenchError, clip
from ..evaluate import evaluate
from ..figures import PALETTE, TRUTH, mechanism_colour
from ..params import Param
from ..table import Dataset
from ..workloads.seed003 import mean_relative_error, seed003 as seed003_workload
from . import Experiment, ExperimentResult

__all__ = ["EXPERIMENTS", "l_for_theta", "anatomy_loss", "bucket_size_figure", "fprime_figure",
           "l_theta_figure", "widen"]

# MultiSize is the bucketization mechanism's default and Anatomy a mechanism: their fixed colours
COLOURS = {"TwoSize": PALETTE[0], "MultiSize": mechanism_colour("bucketization"), "Optimal": PALETTE[7],
           "Anatomy": mechanism_colour("anatomy"),
           "Full-pruning": PALETTE[1], "Loss-pruning": PALETTE[0], "No-pruning": PALETTE[3]}
SCALEUP_MILP_SECONDS = 10.0
METHODS = (("TwoSize", "two"), ("MultiSize", "multi"), ("Optimal", "optimal"))

THETAS = Param("thetas", "θ", "Privacy coefficients to compare, comma separated.", "2,4,8,16,32", kind="text",
               paper="seed 003 Table 4: 2, 4, 8, 16, 32")
OFFSET = Param("b", "b", "Offset of f′ = min(1, θf + b).", 0.02, low=0, high=1, step=0.005,
               paper="seed 003 Table 4: 0.02")
MAX_BUCKET = Param("max_bucket", "M′", "Largest bucket size.", 50, kind="int", low=2, high=500,
                   paper="seed 003 Table 4: 50")
QUERIES = Param("queries", "Q", "Queries in the pool (seed 003 §7.2.2 generator).", 1000, kind="int", low=10,
                high=20_000, paper="seed 003 §7.2.2: 5,000")
SELECTIVITY = Param("selectivity", "s", "Expected query selectivity.", 0.01, low=0, high=1, closed="right",
                    step=0.001, paper="seed 003 §7.2.2: 1%")
SEED = Param("seed", "seed", "Seed of the query generator and of the releases.", 0, kind="int", low=0,
             high=2**31 - 1)
OPTIMAL = Param("optimal", "Optimal", "Include the integer program (refused on large domains).", True,
                kind="bool", paper="seed 003 §7.2")


# ------------------------------------------------------------------ helpers
def _numbers(text: str, name: str, lo: float, hi: float, integer: bool = False) -> list:
    try:
        vals = [float(p) for p in str(text).replace(" ", ",").split(",") if p.strip()]
    except ValueError:
        vals = []
    if not vals or len(vals) > 12 or any(v < lo or v > hi or (integer and not v.is_integer()) for v in vals):
        kind = "whole numbers" if integer else "numbers"
        raise ParameterError(f"The '{name}' setting lists up to 12 {kind} in [{lo:g}, {hi:g}], comma separated. "
                             f"Got {clip(text)!r}.")
    vals = [int(v) if integer or v.is_integer() else v for v in vals]
    return list(dict.fromkeys(vals))


def _tick(progress, done: float, text: str) -> None:
    if progress:
        progress(min(1.0, done), text)


def l_for_theta(counts: np.ndarray, theta: float, b: float = 0.02) -> int:
    """Remark 1: ``l = ceil(1 / min_i f'_i)`` for the default specification."""
    return int(math.ceil(1.0 / bk.fprime(counts, theta, b).min() - bk.EPS))


def anatomy_loss(n: int, l: int) -> int:
    """Loss of Anatomy's groups of l and l + 1 records covering n (privacy ignored, as seed 003 §7.2.1)."""
    groups = n // l
    big = n - groups * l  # groups that take one extra record
    if big > groups:
        return (n - 1) ** 2  # fewer than l records per group possible: one group
    return (groups - big) * (l - 1) ** 2 + big * l**2


def widen(counts: np.ndarray, gamma: int, rng: np.random.Generator) -> np.ndarray:
    """§7.3.2's scale-up on counts: each record of v becomes gamma v + r, r uniform in 0..gamma-1."""
    return np.concatenate([rng.multinomial(int(c), np.full(gamma, 1.0 / gamma)) for c in counts])


# ------------------------------------------------------------------ figures (Sanitize view and report)
def bucket_size_figure(sizes: np.ndarray) -> go.Figure:
    """Buckets and records per bucket size of a release (``sizes`` = |g| of every bucket)."""
    s, c = np.unique(sizes, return_counts=True)
    fig = go.Figure(go.Bar(x=s, y=c * s, marker_color=PALETTE[1], name="records",
                           customdata=c, hovertemplate="size %{x}: %{customdata:,} buckets, %{y:,} records"
                                                       "<extra></extra>"))
    fig.update_layout(title={"text": "Records by bucket size", "x": 0}, height=340,
                      margin={"l": 60, "r": 20, "t": 50, "b": 50}, bargap=0.1)
    fig.update_xaxes(title_text="bucket size |g| (records)")
    fig.update_yaxes(title_text="records in buckets of this size")
    return fig


def fprime_figure(rows: list[dict]) -> go.Figure:
    """Per value: share f in the table, threshold f′ and the worst share reached in a bucket.

    ``rows`` is the manifest's ``published.fprime`` (value, f, fprime, worst_share), drawn by f.
    """
    rows = sorted(rows, key=lambda r: r["f"])
    names = [r["value"] for r in rows]
    fig = go.Figure()
    fig.add_trace(go.Bar(x=names, y=[r["fprime"] for r in rows], name="threshold f′ᵢ",
                         marker_color=PALETTE[0], opacity=0.45,
                         hovertemplate="%{x}: f′ = %{y:.2%}<extra></extra>"))
    fig.add_trace(go.Scatter(x=names, y=[r["worst_share"] for r in rows], mode="markers", name="worst share in a bucket",
                             marker={"color": PALETTE[3], "size": 9, "symbol": "diamond"},
                             hovertemplate="%{x}: worst bucket share %{y:.2%}<extra></extra>"))
    fig.add_trace(go.Scatter(x=names, y=[r["f"] for r in rows], mode="markers+lines", name="share in the table fᵢ",
                             marker={"color": TRUTH, "size": 6}, line={"color": TRUTH, "width": 1, "dash": "dot"},
                             hovertemplate="%{x}: f = %{y:.2%}<extra></extra>"))
    fig.update_layout(title={"text": "Each value's threshold f′, its share f and its worst share in a bucket",
                             "x": 0}, height=420, margin={"l": 60, "r": 20, "t": 50, "b": 120},
                      legend={"orientation": "h", "y": 1.1, "x": 0})
    fig.update_yaxes(title_text="share (probability)", tickformat=".0%", rangemode="tozero")
    fig.update_xaxes(title_text="sensitive value (rarest first)", type="category", tickangle=-45)
    return fig


def l_theta_figure(counts: np.ndarray, thetas, b: float, name: str, current: float | None = None) -> go.Figure:
    """Seed 003 Figure 3 for this table: l against theta, with the largest l Anatomy can deliver."""
    thetas = list(thetas)
    ls = [l_for_theta(counts, t, b) for t in thetas]
    top = int(counts.sum() // counts.max())
    fig = go.Figure(go.Scatter(x=thetas, y=ls, mode="lines+markers", name="ℓ = ⌈1/min f′ᵢ⌉",
                               line={"color": PALETTE[1]}, hovertemplate="θ = %{x}: ℓ = %{y}<extra></extra>"))
    fig.add_hline(y=top, line={"color": PALETTE[3], "dash": "dash"},
                  annotation_text=f"largest ℓ Anatomy can deliver here: {top}", annotation_position="top right")
    if current is not None:
        fig.add_vline(x=current, line={"color": TRUTH, "dash": "dot", "width": 1})
    fig.update_layout(title={"text": f"ℓ needed to model F′-privacy by ℓ-diversity, {name}", "x": 0}, height=360,
                      margin={"l": 60, "r": 20, "t": 50, "b": 50}, showlegend=False)
    fig.update_xaxes(title_text="privacy coefficient θ", type="log", tickvals=thetas)
    fig.update_yaxes(title_text="ℓ (values per group)", rangemode="tozero")
    return fig


# ------------------------------------------------------------------ Figure 3
def _l_vs_theta(data: Dataset, s: dict[str, Any], progress=None) -> ExperimentResult:
    thetas = _numbers(s["thetas"], "thetas", 0.5, 64)
    counts = data.sa_counts
    top = int(data.n // counts.max())
    rows = []
    for t in thetas:
        fp = bk.fprime(counts, t, s["b"])
        l = l_for_theta(counts, t, s["b"])
        rows.append({"θ": t, "min f′ᵢ": float(fp.min()), "ℓ = ⌈1/min f′ᵢ⌉": l,
                     "ℓ-diversity feasible (ℓ ≤ largest)": l <= top,
                     "Anatomy loss at ℓ (groups of ℓ, ℓ+1)": anatomy_loss(data.n, l)})
    f = counts / data.n
    notes = [f"On {data.name} the rarest value has share {f.min():.3%} and the most frequent {f.max():.2%}, so "
             f"ℓ-diversity is possible only up to ℓ = {top} (1/ℓ ≥ max fᵢ). The paper's OCC-300K (0.18% and 7.5%) "
             f"allows ℓ ≤ 13."]
    return ExperimentResult(
        figures=[("ℓ against θ (seed 003 Figure 3, this table)", l_theta_figure(counts, thetas, s["b"], data.name),
                  "The ℓ an ℓ-diversity model would need to give every value the protection F′-privacy gives its "
                  "rarest one. Points above the dashed line cannot be reached by Anatomy on this table at all.")],
        tables=[("ℓ per θ", pd.DataFrame(rows), "Shares as probabilities; loss Σ(|g|−1)² of Anatomy's groups.")],
        notes=notes, data={"rows": rows, "anatomy_max_l": top})


# ------------------------------------------------------------------ Figures 4-5
def _error_vs_theta(data: Dataset, s: dict[str, Any], progress=None) -> ExperimentResult:
    thetas = _numbers(s["thetas"], "thetas", 0.5, 64)
    _tick(progress, 0, "Drawing the queries…")
    wl = seed003_workload(data, queries=s["queries"], selectivity=s["selectivity"], seed=s["seed"])
    methods = [m for m in METHODS if s["optimal"] or m[1] != "optimal"]
    top = int(data.n // data.sa_counts.max())
    rows, notes = [], []
    mse: dict[str, list] = {k: [] for k, _ in methods}
    mse["Anatomy"] = []
    err: dict[str, list] = {k: [] for k, _ in methods}
    err["Anatomy"] = []
    steps = len(thetas) * (len(methods) + 1)
    done = 0
    for t in thetas:
        base = {"theta": t, "b": s["b"], "max_bucket": s["max_bucket"]}
        for label, sizes in methods:
            _tick(progress, done / steps, f"{label} at θ = {t}…")
            done += 1
            t0 = time.perf_counter()
            try:
                ev = evaluate(data, "bucketization", {**base, "sizes": sizes}, wl, s["seed"])
            except WorkbenchError as exc:
                mse[label].append(None)
                err[label].append(None)
                notes.append(f"{label} at θ = {t}: {exc}")
                continue
            pub = ev_release_published(ev, data, base, sizes, s["seed"])
            mse[label].append(pub["mse"])
            re = mean_relative_error(wl.true, ev.estimates)
            err[label].append(re)
            rows.append({"θ": t, "method": label, "loss": pub["loss"], "MSE (Def. 3)": pub["mse"],
                         "mean relative error": re, "query MSE": ev.mse(),
                         "bucket sizes": len(pub["bucket_setting"]), "seconds": time.perf_counter() - t0,
                         "note": ""})
        _tick(progress, done / steps, f"Anatomy at θ = {t}…")
        done += 1
        l = l_for_theta(data.sa_counts, t, s["b"])
        a_loss = anatomy_loss(data.n, l)
        mse["Anatomy"].append(a_loss / (data.n - 1))
        # a missing value says why in the note column (the page shows it as an empty cell, not "None")
        row = {"θ": t, "method": f"Anatomy (ℓ = {l})", "loss": a_loss, "MSE (Def. 3)": a_loss / (data.n - 1),
               "mean relative error": None, "query MSE": None, "bucket sizes": 2, "seconds": None,
               "note": (f"not eligible: ℓ = {l} is above the largest feasible ℓ = {top}; loss and MSE from groups "
                        "of ℓ and ℓ + 1 ignoring privacy, no query error")}
        if l <= top:
            t0 = time.perf_counter()
            try:
                ev = evaluate(data, "anatomy", {"l": l}, wl, s["seed"])
                row["mean relative error"] = mean_relative_error(wl.true, ev.estimates)
                row["query MSE"] = ev.mse()
                row["seconds"] = time.perf_counter() - t0
                row["note"] = ""
            except WorkbenchError as exc:
                notes.append(f"Anatomy at ℓ = {l}: {exc}")
                row["note"] = f"not eligible: {exc}"
        err["Anatomy"].append(row["mean relative error"])
        rows.append(row)
    _tick(progress, 1, "done")
    infeasible = [t for t in thetas if l_for_theta(data.sa_counts, t, s["b"]) > top]
    if infeasible:
        notes.append(f"ℓ-diversity with ℓ = ⌈1/min f′ᵢ⌉ is infeasible on this table for θ = "
                     f"{', '.join(map(str, infeasible))} (ℓ above {top}); as in the paper, Anatomy's MSE there is "
                     f"computed from groups of ℓ and ℓ + 1 ignoring privacy, and it has no query error.")
    fig_mse = _lines("MSE against θ (seed 003 Figure 4)", thetas, mse, "MSE = Σ(|g|−1)² / (|T|−1)", log_y=True)
    fig_re = _lines("Relative error against θ (seed 003 Figure 5)", thetas, err, "mean relative error", pct=True)
    return ExperimentResult(
        figures=[
            ("MSE against θ (seed 003 Figure 4)", fig_mse,
             "Definition 3's MSE of the buckets (lower is better, log scale). The paper finds TwoSize slightly "
             "above MultiSize, slightly above Optimal, and Anatomy far above all."),
            ("Mean relative error of count queries against θ (seed 003 Figure 5)", fig_re,
             f"{len(wl):,} queries of seed 003's generator (ORs on random attributes, selectivity about "
             f"{s['selectivity']:.1%}); |act − est|/act averaged over queries with act > 0. Lower is better."),
        ],
        tables=[("Results", pd.DataFrame(rows), "Loss and MSE of the bucket setting; relative errors as fractions "
                 "(0.10 = 10%); query MSE in records².")],
        notes=notes, data={"thetas": thetas, "mse": mse, "error": err, "rows": rows})


def ev_release_published(ev, data: Dataset, base: dict, sizes: str, seed: int) -> dict:
    """The manifest's ``published`` of the release an evaluation used (sanitize is deterministic and cached)."""
    from .. import mechanisms

    return mechanisms.sanitize(data, "bucketization", {**base, "sizes": sizes}, seed).published


def _lines(title: str, x, series: dict[str, list], y_title: str, log_y: bool = False, pct: bool = False) -> go.Figure:
    fig = go.Figure()
    for label, ys in series.items():
        y = [np.nan if v is None else v for v in ys]
        if all(np.isnan(y)):
            continue
        fig.add_trace(go.Scatter(x=list(x), y=y, mode="lines+markers", name=label,
                                 line={"color": COLOURS.get(label, TRUTH)},
                                 hovertemplate=f"{label}<br>θ = %{{x}}<br>%{{y:.4g}}<extra></extra>"))
    fig.update_layout(title={"text": title, "x": 0}, height=400, margin={"l": 60, "r": 20, "t": 50, "b": 60},
                      legend={"orientation": "h", "y": -0.2, "x": 0})
    fig.update_xaxes(title_text="privacy coefficient θ", type="log", tickvals=list(x))
    fig.update_yaxes(title_text=y_title, type="log" if log_y else None, tickformat=".0%" if pct else None)
    return fig


# ------------------------------------------------------------------ Figure 7 (scale-up of |SA|)
def scaleup(counts: np.ndarray, gammas, theta: float = 8, b: float = 0.02, max_size: int = 50,
            variants=("full", "loss"), optimal: bool = True, seed: int = 0, repeat: int = 1) -> list[dict]:
    """Seconds of the two-size search per scale-up factor gamma (§7.3.2), per pruning variant.

    Variants: ``full`` (Theorem 4), ``loss`` (Lemma 6 only), ``none`` (plain
    scan), and the integer program (``optimal``, while it is small).  Every
    variant must return the same loss (checked).
    """
    rng = np.random.default_rng(seed)
    out = []
    for g in gammas:
        c = widen(counts, int(g), rng) if g > 1 else np.asarray(counts)
        c = c[c > 0]
        fp = bk.fprime(c, theta, b)
        row: dict[str, Any] = {"γ": int(g), "|SA|": int(len(c))}
        losses = set()
        for v in variants:
            times = []
            for _ in range(repeat):
                t0 = time.perf_counter()
                best = bk.two_size_scan(c, fp, max_size) if v == "none" else bk.two_size(c, fp, max_size, prune=v)
                times.append(time.perf_counter() - t0)
            row[{"full": "Full-pruning", "loss": "Loss-pruning", "none": "No-pruning"}[v]] = float(np.median(times))
            losses.add(None if best is None else best.loss)
        if optimal:
            # the integer program up to 4x the size the mechanism offers, and at most SCALEUP_MILP_SECONDS
            lo = bk.min_size(c, fp)
            row["Optimal (multi-size MILP)"] = None
            if bk.optimal_size(len(c), lo, max_size) <= 4 * bk.OPTIMAL_MAX_CELLS:
                t0 = time.perf_counter()
                try:
                    bk.optimal(c, fp, max_size, time_limit=SCALEUP_MILP_SECONDS, max_cells=4 * bk.OPTIMAL_MAX_CELLS)
                    row["Optimal (multi-size MILP)"] = time.perf_counter() - t0
                except WorkbenchError:
                    pass
        row["same answer"] = len(losses) == 1
        row["loss"] = next(iter(losses))
        out.append(row)
    return out


def _scaleup(data: Dataset, s: dict[str, Any], progress=None) -> ExperimentResult:
    gammas = _numbers(s["gammas"], "gammas", 1, 256, integer=True)
    variants = ("full", "loss") + (("none",) if s["no_pruning"] else ())
    rows = []
    for i, g in enumerate(gammas):
        _tick(progress, i / len(gammas), f"γ = {g}…")
        rows.extend(scaleup(data.sa_counts, [g], s["theta"], s["b"], s["max_bucket"], variants, s["optimal"],
                            s["seed"]))
    _tick(progress, 1, "done")
    frame = pd.DataFrame(rows)
    fig = go.Figure()
    for col in ("Full-pruning", "Loss-pruning", "No-pruning", "Optimal (multi-size MILP)"):
        if col in frame:
            fig.add_trace(go.Scatter(x=frame["γ"], y=frame[col], mode="lines+markers", name=col,
                                     line={"color": COLOURS.get(col.split(" ")[0], TRUTH)},
                                     hovertemplate=f"{col}<br>γ = %{{x}}<br>%{{y:.3g}} s<extra></extra>"))
    fig.update_layout(title={"text": f"Two-size search time against the |SA| scale-up, {data.name}", "x": 0},
                      height=400, legend={"orientation": "h", "y": -0.2, "x": 0})
    fig.update_xaxes(title_text="scale-up factor γ (|SA| × γ)", type="log", tickvals=gammas)
    fig.update_yaxes(title_text="seconds", type="log")
    notes = ["Times are of the search on the SA counts only (the records are dealt afterwards in linear time), "
             "median of one run each on this machine; the paper's are C++ averages of 100 runs."]
    if not frame["same answer"].all():
        notes.append("Some variants disagreed on the optimum; please report this.")
    return ExperimentResult(
        figures=[("Runtime against the |SA| scale-up (seed 003 Figure 7)", fig,
                  "Each value v of the sensitive attribute is split into γ values γv + r (r uniform). The paper finds "
                  "the pruned searches nearly flat and the integer program growing fast; the plain scan gets "
                  "faster because larger domains raise the smallest bucket size M.")],
        tables=[("Seconds per variant", frame, "Empty cells: variant not run or stopped (the integer program is tried "
                 f"up to {4 * bk.OPTIMAL_MAX_CELLS:,} value-size cells and {SCALEUP_MILP_SECONDS:g} s).")],
        notes=notes, data={"rows": rows})


EXPERIMENTS = [
    Experiment(
        "seed003-l-vs-theta", "F′-privacy: ℓ needed against θ (seed 003 Figure 3)", "seed 003 §7.1, Figure 3",
        "The ℓ-diversity an F′-privacy specification f′ = min(1, θf + b) corresponds to, ℓ = ⌈1/min f′ᵢ⌉, against θ, "
        "beside the largest ℓ that Anatomy can achieve on the loaded table. Fast: no queries.",
        (THETAS, OFFSET), _l_vs_theta, order=50),
    Experiment(
        "seed003-error-vs-theta", "F′-privacy: TwoSize vs MultiSize vs Optimal vs Anatomy (seed 003 Figures 4-5)",
        "seed 003 §7.2, Figures 4-5",
        "MSE of the bucketization (Definition 3) and mean relative error of seed 003's count queries against the "
        "privacy coefficient θ, for the optimal two-size setting, the multi-size heuristic, the integer-program "
        "optimum (small domains only) and Anatomy with ℓ = ⌈1/min f′ᵢ⌉.",
        (THETAS, OFFSET, MAX_BUCKET, QUERIES, SELECTIVITY, SEED, OPTIMAL), _error_vs_theta, order=51),
    Experiment(
        "seed003-scaleup", "F′-privacy: search time against the |SA| scale-up (seed 003 Figure 7)",
        "seed 003 §7.3.2, Figure 7",
        "Time of the optimal two-size search with full pruning (Theorem 4), loss pruning only (Lemma 6), the plain "
        "scan and the integer program as the sensitive domain is multiplied by γ.",
        (Param("gammas", "γ", "Scale-up factors, comma separated.", "1,2,4,8,16,32,64", kind="text",
               paper="seed 003 §7.3.2: 2, 4, 8, 16, 32, 64"),
         Param("theta", "θ", "Privacy coefficient.", 8.0, low=0.5, high=64, paper="seed 003 §7.3: 8"),
         OFFSET, MAX_BUCKET,
         Param("no_pruning", "No-pruning", "Also time the plain scan (slow: seconds per factor).", False,
               kind="bool", paper="seed 003 Figure 7"),
         OPTIMAL, SEED), _scaleup, order=52),
]


# ------------------------------------------------------------------ Figure 6 (runtime against |T|)
def _time_vs_size(data: Dataset, s: dict[str, Any], progress=None) -> ExperimentResult:
    sizes = _numbers(s["sizes"], "sizes", 10, 5_000_000, integer=True)
    variants = ("full", "loss") + (("none",) if s["no_pruning"] else ())
    names = {"full": "Full-pruning", "loss": "Loss-pruning", "none": "No-pruning"}
    rng = np.random.default_rng(s["seed"])
    rows, notes = [], []
    for i, n in enumerate(sizes):
        if n > data.n:
            notes.append(f"|T| = {n:,} is larger than the table ({data.n:,} rows); left out.")
            continue
        _tick(progress, i / len(sizes), f"|T| = {n:,}…")
        c = np.bincount(data.sa_codes[rng.choice(data.n, n, replace=False)], minlength=data.m)
        c = c[c > 0]
        fp = bk.fprime(c, s["theta"], s["b"])
        row: dict[str, Any] = {"|T|": n}
        losses = set()
        for v in variants:
            t0 = time.perf_counter()
            best = bk.two_size_scan(c, fp, s["max_bucket"]) if v == "none" else bk.two_size(c, fp, s["max_bucket"],
                                                                                             prune=v)
            row[names[v]] = time.perf_counter() - t0
            losses.add(None if best is None else best.loss)
        if s["optimal"]:
            row["Optimal (MILP)"] = None
            t0 = time.perf_counter()
            try:
                bk.optimal(c, fp, s["max_bucket"], time_limit=SCALEUP_MILP_SECONDS, max_cells=4 * bk.OPTIMAL_MAX_CELLS)
                row["Optimal (MILP)"] = time.perf_counter() - t0
            except WorkbenchError as exc:
                notes.append(f"Optimal at |T| = {n:,}: {exc}")
        row["same answer"] = len(losses) == 1
        rows.append(row)
    _tick(progress, 1, "done")
    frame = pd.DataFrame(rows)
    fig = go.Figure()
    for col in ("Full-pruning", "Loss-pruning", "No-pruning", "Optimal (MILP)"):
        if col in frame:
            fig.add_trace(go.Scatter(x=frame["|T|"], y=frame[col], mode="lines+markers", name=col,
                                     line={"color": COLOURS.get(col.split(" ")[0], TRUTH)},
                                     hovertemplate=f"{col}<br>|T| = %{{x:,}}<br>%{{y:.3g}} s<extra></extra>"))
    fig.update_layout(title={"text": f"Two-size search time against |T|, {data.name}", "x": 0}, height=400,
                      legend={"orientation": "h", "y": -0.2, "x": 0})
    fig.update_xaxes(title_text="|T| (rows sampled from the table)")
    fig.update_yaxes(title_text="seconds", type="log")
    return ExperimentResult(
        figures=[("Runtime against |T| (seed 003 Figure 6)", fig,
                  "Time of the two-size search on the SA counts of a random sample of |T| rows (θ = 8), one run each "
                  "on this machine. The paper (C++, 2.53 GHz, 100 runs averaged) draws its times only; the text "
                  "prints none, so no ratio can be given.")],
        tables=[("Seconds per variant", frame, "The integer program stops after "
                 f"{SCALEUP_MILP_SECONDS:g} s.")],
        notes=notes, data={"rows": rows})


EXPERIMENTS.append(Experiment(
    "seed003-time-vs-size", "F′-privacy: search time against |T| (seed 003 Figure 6)", "seed 003 §7.3.1, Figure 6",
    "Time of the two-size search with full pruning, loss pruning only, the plain scan and the integer program on "
    "samples of |T| rows. The paper's |T| are 100K-500K; loss pruning and the plain scan take tens of seconds "
    "there, so the defaults are smaller.",
    (Param("sizes", "|T|", "Sample sizes, comma separated.", "2000,5000,10000", kind="text",
           paper="seed 003 Table 4: 100K-500K"),
     Param("theta", "θ", "Privacy coefficient.", 8.0, low=0, high=1000, paper="seed 003 §7.3: 8"),
     OFFSET, MAX_BUCKET,
     Param("no_pruning", "scan", "Include the plain scan of every pair.", True, kind="bool"),
     OPTIMAL, SEED), _time_vs_size, page="papers", order=33))
