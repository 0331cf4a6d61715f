"""Seed 002's experiments on the loaded table: PP vs UP vs Anatomy, retention, estimate scatter.

* ``seed002-retention``: Table 2 (retention of UP and PP for L = 6, 5, 4, 3)
  and Table 3 (statistics of PP's sub-tables) for the loaded table.
* ``seed002-error-vs-l``: Figure 2 (upper) / Figure 4 (upper): mean relative
  error of count queries passing selectivity 0.1%, 0.5%, 1% against
  L = 1/rho2, for PP, UP (both at (rho1, 1/L)) and Anatomy (l = L).
* ``seed002-error-vs-size``: Figure 2 (lower) / Figure 4 (lower): the same
  against |T|, on the first n rows of the table (``census:N`` is nested, so
  the first n rows of census:500000 are census:n, like the paper's OCC-n).
* ``seed002-scatter``: Figure 3: estimated against actual answer of every
  query passing selectivity s.

The workload is seed 002's (appendix 10.9): random conditions on 1..3 QI
attributes, each asked for every SA value.  Anatomy needs every value's
share to be at most 1/l; when it is not (skewed data such as EDU), records
of the most frequent values are suppressed until it is, as seed 002 §6.3
does, and the count is reported: Anatomy then answers from the smaller
table and under-estimates.

References
----------
seed 002 (Chaytor & Wang), §6.1-6.3, Figures 2-4, Tables 2-3, appendix
10.9-10.10; MECHANISMS.md sections 3 and 6.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..bounds.retention import gamma_from_rho, retention_from_gamma
from ..errors import ParameterError, WorkbenchError, clip
from ..evaluate import Evaluation, evaluate
from ..figures import TRUTH, mechanism_colour
from ..mechanisms.sdr import natural_rank, plan
from ..params import Param
from ..table import Dataset, subset  # noqa: F401  (subset: the experiments and their tests import it from here)
from ..workload import seed002 as seed002_workload
from . import Experiment, ExperimentResult

__all__ = ["EXPERIMENTS", "subset", "suppress_for_anatomy", "paper_table2", "subtable_retention_figure"]

THRESHOLDS = (0.001, 0.005, 0.01)
COLOURS = {"PP": mechanism_colour("sdr"), "UP": mechanism_colour("uniform"), "Ana": mechanism_colour("anatomy")}

#: seed 002 Table 2, OCC-300K (rho1 = 1/13, rho2 = 1/L), as printed
PAPER_TABLE2 = {6: (0.029, 0.090), 5: (0.040, 0.123), 4: (0.059, 0.173), 3: (0.094, 0.257)}

RHO1 = Param("rho1", "ρ₁", "Prior bound of (ρ₁, ρ₂)-privacy: values rarer than this share are protected.",
             1 / 13, low=0, high=1, closed="neither", step=0.005, safer="higher",
             paper="seed 002 §6.2: 1/13 (OCC); §6.3: 1/30 (EDU)")
LS = Param("ls", "L", "Values of L = 1/ρ₂ (and Anatomy's ℓ) to compare, comma separated.", "6,5,4,3", kind="text",
           paper="seed 002 §6.2: 6, 5, 4, 3 (OCC); §6.3: 10, 8, 6, 4 (EDU)")
L_ONE = Param("l", "L", "L = 1/ρ₂ for PP and UP, and Anatomy's ℓ.", 6, kind="int", low=2, high=50,
              safer="higher", paper="seed 002 Fig. 2-3: L = 6")
CONDITIONS = Param("conditions", "C", "Random conditions, each asked for every sensitive value.", 200, kind="int",
                   low=10, high=2000, paper="seed 002 appendix 10.9: 200")
SEED = Param("seed", "seed", "Seed of the query generator and of the releases.", 0, kind="int", low=0,
             high=2**31 - 1)
ANATOMY = Param("anatomy", "Ana", "Include Anatomy (ℓ = L); on skewed tables it first suppresses records.", True,
                kind="bool", paper="seed 002 §6.1")
DELTA = Param("delta", "δ", "Confidence of PP's error bound (does not change the partition).", 0.05,
              low=0, high=1, closed="neither", paper="seed 002 §6.1: 0.05")


# ------------------------------------------------------------------ helpers
def _ls(text: str) -> list[int]:
    try:
        ls = [int(float(p)) for p in str(text).replace(" ", ",").split(",") if p.strip()]
    except ValueError:
        ls = []
    if not ls or any(L < 2 or L > 1000 for L in ls) or len(ls) > 10:
        raise ParameterError(f"The 'ls' setting lists up to 10 whole numbers L >= 2, like 6,5,4,3. Got {clip(text)!r}.")
    return list(dict.fromkeys(ls))


def _fractions(text: str) -> list[float]:
    try:
        fr = sorted({float(p) for p in str(text).replace(" ", ",").split(",") if p.strip()})
    except ValueError:
        fr = []
    if not fr or any(f <= 0 or f > 1 for f in fr) or len(fr) > 10:
        raise ParameterError(f"The 'sizes' setting lists up to 10 fractions of the table in (0, 1], like "
                             f"0.2,0.4,0.6,0.8,1. Got {clip(text)!r}.")
    return fr


def suppress_for_anatomy(data: Dataset, l: int, rng: np.random.Generator) -> tuple[Dataset, int]:
    """Suppress records of the most frequent values until every share is at most 1/l (seed 002 §6.3).

    Each value keeps ``min(count, k)`` records, k the largest cap with
    ``k l <= sum_x min(count_x, k)``; the suppressed records are drawn at
    random.  Returns the remaining table and the number suppressed.
    """
    counts = data.sa_counts
    if counts.max() * l <= counts.sum():
        return data, 0
    lo, hi = 0, int(counts.max())
    while lo < hi:  # largest k with k l <= sum min(c, k)
        mid = (lo + hi + 1) // 2
        if mid * l <= np.minimum(counts, mid).sum():
            lo = mid
        else:
            hi = mid - 1
    cap = lo
    if cap == 0:
        raise ParameterError(f"Anatomy with ℓ = {l} needs at least {l} different sensitive values; "
                             f"the table has {np.count_nonzero(counts)}.")
    keep = np.ones(data.n, dtype=bool)
    for x in np.flatnonzero(counts > cap):  # the few over-represented values
        rows = np.flatnonzero(data.sa_codes == x)
        keep[rng.choice(rows, size=len(rows) - cap, replace=False)] = False
    return subset(data, np.flatnonzero(keep), f"suppressed for l={l}"), int((~keep).sum())


def _band_errors(ev: Evaluation) -> list[float | None]:
    return [b["mean_relative_error"] for b in ev.bands()]


def _run_three(data: Dataset, rho1: float, L: int, workload, seed: int, anatomy: bool,
               delta: float) -> tuple[dict[str, Evaluation | str], dict[str, Any]]:
    """PP, UP and Anatomy on one workload; an ineligible mechanism gives its message."""
    rho2 = 1.0 / L
    out: dict[str, Evaluation | str] = {}
    info: dict[str, Any] = {}
    for label, mech, raw in (("PP", "sdr", {"rho1": rho1, "rho2": rho2, "delta": delta}),
                             ("UP", "uniform", {"rho1": rho1, "rho2": rho2})):
        try:
            out[label] = evaluate(data, mech, raw, workload, seed)
        except WorkbenchError as exc:
            out[label] = str(exc)
    if anatomy:
        try:
            kept, suppressed = suppress_for_anatomy(data, L, np.random.default_rng([seed, L]))
            ev = evaluate(kept, "anatomy", {"l": L}, workload, seed)
            out["Ana"] = ev
            info["suppressed"] = suppressed
        except WorkbenchError as exc:
            out["Ana"] = str(exc)
    return out, info


def _panel_figure(title: str, x, x_label: str, series: dict[str, list[list[float | None]]],
                  log_x: bool = False) -> go.Figure:
    """One panel per selectivity threshold (as seed 002 Fig. 2), one line per mechanism."""
    names = [f"s = {t:.1%}" for t in THRESHOLDS]
    fig = make_subplots(rows=1, cols=len(THRESHOLDS), subplot_titles=names, shared_yaxes=True)
    for label, per_x in series.items():
        for b in range(len(THRESHOLDS)):
            y = [np.nan if v is None or v[b] is None else v[b] for v in per_x]
            fig.add_trace(go.Scatter(
                x=list(x), y=y, mode="lines+markers", name=label, legendgroup=label, showlegend=b == 0,
                line={"color": COLOURS.get(label, TRUTH)},
                hovertemplate=f"{label}<br>{x_label} = %{{x}}<br>mean relative error %{{y:.3f}}<extra>{names[b]}</extra>",
            ), row=1, col=b + 1)
        fig.update_xaxes(title_text=x_label, type="log" if log_x else None)
    fig.update_yaxes(title_text="mean relative error |est − act| / act", col=1, tickformat=".0%")
    fig.update_layout(title={"text": title, "x": 0}, height=420, margin={"l": 60, "r": 20, "t": 80, "b": 60},
                      legend={"orientation": "h", "y": -0.25, "x": 0})
    return fig


def _error_rows(x_name: str, x_values, results: list[dict[str, Evaluation | str]]) -> pd.DataFrame:
    rows = []
    for xv, res in zip(x_values, results):
        for label, ev in res.items():
            row = {x_name: xv, "mechanism": label}
            if isinstance(ev, str):
                row.update({f"error, s ≥ {t:.1%}": None for t in THRESHOLDS})
                row["queries (s ≥ 0.1%)"] = None
                row["note"] = ev
            else:
                bands = ev.bands()
                for t, b in zip(THRESHOLDS, bands):
                    row[f"error, s ≥ {t:.1%}"] = b["mean_relative_error"]
                row["queries (s ≥ 0.1%)"] = bands[0]["queries"]
                row["note"] = ""
            rows.append(row)
    return pd.DataFrame(rows)


def _series(results: list[dict[str, Evaluation | str]]) -> dict[str, list]:
    labels = [k for k in ("PP", "UP", "Ana") if any(k in r for r in results)]
    return {k: [(_band_errors(r[k]) if isinstance(r.get(k), Evaluation) else None) for r in results]
            for k in labels}


def _ineligible_notes(results, x_name, x_values) -> list[str]:
    notes = []
    for xv, res in zip(x_values, results):
        for label, ev in res.items():
            if isinstance(ev, str):
                notes.append(f"{label} at {x_name} = {xv}: {ev}")
    return notes


def _tick(progress, done: int, total: int, text: str) -> None:
    if progress:
        progress(done / total, text)


def subtable_retention_figure(subtables: list[dict], p_up: float, m: int) -> go.Figure:
    """Bars of each published sub-table's retention p_i, with uniform perturbation's single p as a line.

    ``subtables`` is the manifest's ``published.subtables`` (name, rows, m, p ...).
    """
    names = [s["name"] for s in subtables]
    fig = go.Figure(go.Bar(
        x=names, y=[s["p"] for s in subtables], marker_color=COLOURS["PP"], name="PP: pᵢ of the sub-table",
        customdata=np.array([[s["rows"], s["m"], s["gamma"]] for s in subtables], dtype=float),
        hovertemplate="%{x}: pᵢ = %{y:.2%}<br>%{customdata[0]:,.0f} rows, mᵢ = %{customdata[1]:.0f}, "
                      "γᵢ = %{customdata[2]:.3g}<extra></extra>",
    ))
    # UP's line is named in the legend, not by an annotation on the plot, which sat on the first bar
    up_line = {"color": COLOURS["UP"], "dash": "dash", "width": 2}
    fig.add_hline(y=p_up, line=up_line)
    fig.add_trace(go.Scatter(x=[None], y=[None], mode="lines", line=up_line, hoverinfo="skip",
                             name=f"UP: one p = {p_up * 100:.4g}% over all {m:,} values"))
    fig.update_layout(title={"text": "Retention per sub-table against uniform perturbation", "x": 0}, height=380,
                      margin={"l": 60, "r": 20, "t": 60, "b": 60}, showlegend=True,
                      legend={"orientation": "h", "y": -0.25, "x": 0})
    fig.update_xaxes(title_text="sub-table", type="category")
    fig.update_yaxes(title_text="retention p (chance a record keeps its value)", tickformat=".0%", rangemode="tozero")
    return fig


# ------------------------------------------------------------------ retention (Tables 2 and 3)
def paper_table2() -> pd.DataFrame:
    """Seed 002 Table 2 as printed, with UP's retention recomputed from eq. 4 and 6 at m = 50."""
    rows = []
    for L, (up, pp) in PAPER_TABLE2.items():
        g = gamma_from_rho(1 / 13, 1 / L)
        rows.append({"L": L, "UP (paper)": up, "PP (paper)": pp, "γ by eq. 6": g,
                     "UP by eq. 4 and 6, m = 50": retention_from_gamma(g, 50)})
    return pd.DataFrame(rows)


def _retention(data: Dataset, s: dict[str, Any], progress=None) -> ExperimentResult:
    ls = _ls(s["ls"])
    rank = natural_rank(data.sa_labels)
    rows, stats = [], []
    for i, L in enumerate(ls):
        _tick(progress, i, len(ls), f"PP at L = {L}…")
        rho1, rho2 = s["rho1"], 1 / L
        if not rho1 < rho2:
            rows.append({"L": L, "ρ₂": rho2, "note": f"ρ₁ = {rho1:.4g} is not below ρ₂ = 1/{L}"})
            continue
        g = gamma_from_rho(rho1, rho2)
        up = retention_from_gamma(g, data.m)
        try:
            pl = plan(data.sa_counts, rho1, rho2, s["delta"], rank=rank, labels=data.sa_labels)
        except WorkbenchError as exc:
            rows.append({"L": L, "ρ₂": rho2, "γ (UP)": g, "UP retention": up, "note": str(exc)})
            continue
        # UP with eq. 9 applied to the whole table (rho1 = largest protected share): PP with one sub-table
        top = np.where(pl.protected, data.sa_counts, 0).max() / data.n
        up_eq9 = retention_from_gamma(rho2 * (1 - top) / (top * (1 - rho2)), data.m)
        rows.append({"L": L, "ρ₂": rho2, "γ (UP)": g, "UP retention": up,
                     "UP at ρ₁ = largest protected share": up_eq9,
                     "PP retention (record-weighted)": pl.retention,
                     "PP retention (mean over sub-tables)": pl.retention_mean,
                     "PP / UP": pl.retention / up, "note": ""})
        stats.append({"L": L, "initial groups t": len(pl.groups), "sub-tables": len(pl.size),
                      "avg m_i": float(pl.m.mean()), "avg γ_i": float(pl.gamma.mean()),
                      "ε(Part)": pl.eps_part, "ε(T) of UP": pl.eps_up})
    _tick(progress, 1, 1, "done")
    table2 = pd.DataFrame(rows)
    fig = go.Figure()
    ok = table2.dropna(subset=["UP retention"]) if "UP retention" in table2 else table2.iloc[0:0]
    fig.add_trace(go.Bar(x=[f"L = {L}" for L in ok["L"]], y=ok["UP retention"], name="UP",
                         marker_color=COLOURS["UP"], hovertemplate="UP %{x}: %{y:.2%}<extra></extra>"))
    if "PP retention (record-weighted)" in ok:
        fig.add_trace(go.Bar(x=[f"L = {L}" for L in ok["L"]], y=ok["PP retention (record-weighted)"], name="PP",
                             marker_color=COLOURS["PP"], hovertemplate="PP %{x}: %{y:.2%}<extra></extra>"))
    fig.update_layout(barmode="group", title={"text": f"Retention probability, {data.name} (m = {data.m})", "x": 0},
                      height=380, legend={"orientation": "h", "y": -0.2, "x": 0})
    fig.update_yaxes(title_text="retention p (chance a record keeps its value)", tickformat=".0%")
    fig.update_xaxes(title_text="L = 1/ρ₂ (higher is safer)", type="category")
    notes = [
        "The paper's Table 2 (OCC-300K, m = 50) prints UP retention 2.9%, 4.0%, 5.9%, 9.4%; eq. 4 and 6 give "
        "2.72%, 3.85%, 5.66%, 9.09% at m = 50 (the paper's γ = 2.5 for L = 6 is eq. 6's 2.4 rounded up; "
        "2.5 would give 2.91%). The table below computes both from the formulas for the loaded table; the "
        "last table repeats the paper's printed figures for comparison."
    ]
    if len(stats) and all(r == 1 for r in pd.DataFrame(stats)["sub-tables"]):
        notes.append(
            "On this table PP keeps the whole table as one sub-table at every L: merging its initial groups "
            "lowers the error bound ε(Part) more than small domains would. Its retention still beats UP's "
            "because eq. 9 applies (ρ₁, ρ₂)-privacy at the table's largest share of a protected value instead "
            "of at ρ₁ (column 'UP at ρ₁ = largest protected share'). The paper's OCC has a largest share of "
            "7%, close to ρ₁ = 1/13, and splits into about 10 sub-tables (Table 3).")
    return ExperimentResult(
        figures=[("Retention of UP and PP (seed 002 Table 2, for this table)", fig,
                  "Bars: the chance that a record keeps its true value. PP's is the record-weighted mean of the "
                  "sub-tables' p_i. Higher bars at the same L mean more signal for the same privacy.")],
        tables=[
            ("Retention on this table (seed 002 Table 2)", table2,
             "Retention p as probability (0.09 = 9%). 'UP at ρ₁ = largest protected share' separates the two "
             "gains of PP: the smaller ρ₁ᵢ of eq. 9 and the smaller domains m_i."),
            ("PP's sub-tables (seed 002 Table 3)", pd.DataFrame(stats),
             "t initial groups from the balancing phase are merged into the sub-tables; m_i distinct values and "
             "γ_i per sub-table; ε are the eq. 11-12 error bounds (shares of |T|, confidence 1 − δ)."),
            ("Seed 002 Table 2 as printed (OCC-300K) and recomputed", paper_table2(),
             "The paper's figures (labelled 'paper') beside eq. 4 and 6 at m = 50: the printed UP retention is "
             "higher than the formulas give at every L."),
        ],
        notes=notes,
        data={"rows": rows, "stats": stats},
    )


# ------------------------------------------------------------------ error against L
def _error_vs_l(data: Dataset, s: dict[str, Any], progress=None) -> ExperimentResult:
    ls = _ls(s["ls"])
    _tick(progress, 0, 1, "Drawing the queries…")
    wl = seed002_workload(data, conditions=s["conditions"], seed=s["seed"], thresholds=THRESHOLDS)
    results, infos = [], []
    for i, L in enumerate(ls):
        _tick(progress, i, len(ls), f"PP, UP and Anatomy at L = {L}…")
        res, info = _run_three(data, s["rho1"], L, wl, s["seed"], s["anatomy"], s["delta"])
        results.append(res)
        infos.append(info)
    _tick(progress, 1, 1, "done")
    fig = _panel_figure(f"Error against L, {data.name} (|T| = {data.n:,})", [str(L) for L in ls], "L = 1/ρ₂",
                        _series(results))
    fig.update_xaxes(type="category")
    notes = _ineligible_notes(results, "L", ls)
    for L, info in zip(ls, infos):
        if info.get("suppressed"):
            notes.append(f"Anatomy at ℓ = {L}: {info['suppressed']:,} records of the most frequent values were "
                         f"suppressed first so every share is at most 1/{L} (seed 002 §6.3); it answers from the "
                         f"remaining {data.n - info['suppressed']:,}.")
    return ExperimentResult(
        figures=[("Mean relative error against L (seed 002 Fig. 2 upper / Fig. 4 upper)", fig,
                  "One panel per selectivity threshold: queries whose true answer is at least 0.1%, 0.5%, 1% of "
                  "the table. Lower is better. As L falls (weaker privacy) PP and UP gain; the paper finds PP "
                  "lowest and Anatomy nearly flat.")],
        tables=[("Errors", _error_rows("L", ls, results),
                 "Mean relative error per threshold (0.10 = 10%); queries = number of queries passing 0.1%.")],
        notes=notes,
        data={"ls": ls, "errors": _series(results)},
    )


# ------------------------------------------------------------------ error against |T|
def _error_vs_size(data: Dataset, s: dict[str, Any], progress=None) -> ExperimentResult:
    fractions = _fractions(s["sizes"])
    sizes = [max(10, int(round(f * data.n))) for f in fractions]
    results, infos = [], []
    for i, n in enumerate(sizes):
        _tick(progress, i, len(sizes), f"|T| = {n:,}: queries, PP, UP and Anatomy…")
        part = data if n >= data.n else subset(data, np.arange(n), f"first {n}")
        wl = seed002_workload(part, conditions=s["conditions"], seed=s["seed"], thresholds=THRESHOLDS)
        res, info = _run_three(part, s["rho1"], s["l"], wl, s["seed"], s["anatomy"], s["delta"])
        results.append(res)
        infos.append(info)
    _tick(progress, 1, 1, "done")
    fig = _panel_figure(f"Error against |T| at L = {s['l']}, {data.name}", sizes, "|T| (records)",
                        _series(results))
    notes = _ineligible_notes(results, "|T|", sizes)
    for n, info in zip(sizes, infos):
        if info.get("suppressed"):
            notes.append(f"Anatomy at |T| = {n:,}: {info['suppressed']:,} records suppressed (seed 002 §6.3).")
    return ExperimentResult(
        figures=[("Mean relative error against |T| (seed 002 Fig. 2 lower / Fig. 4 lower)", fig,
                  "Each point uses the first |T| rows of the table (for census:N these are census:|T|). Errors "
                  "fall as the table grows: reconstruction needs many random trials.")],
        tables=[("Errors", _error_rows("|T|", sizes, results),
                 "Mean relative error per threshold (0.10 = 10%).")],
        notes=notes,
        data={"sizes": sizes, "errors": _series(results)},
    )


# ------------------------------------------------------------------ scatter (Fig. 3)
def _scatter(data: Dataset, s: dict[str, Any], progress=None) -> ExperimentResult:
    _tick(progress, 0, 1, "Drawing the queries…")
    wl = seed002_workload(data, conditions=s["conditions"], seed=s["seed"], thresholds=(s["s"],))
    res, info = _run_three(data, s["rho1"], s["l"], wl, s["seed"], s["anatomy"], s["delta"])
    _tick(progress, 1, 1, "done")
    labels = [k for k in ("Ana", "UP", "PP") if k in res]
    titles = {"Ana": "(a) Ana", "UP": "(b) UP", "PP": "(c) PP"}
    fig = make_subplots(rows=1, cols=len(labels), subplot_titles=[titles[k] for k in labels], shared_yaxes=True)
    passing = wl.membership[0]
    act = wl.true[passing]
    hi = float(act.max()) if len(act) else 1.0
    rows = []
    for j, k in enumerate(labels):
        ev = res[k]
        if isinstance(ev, str):
            continue
        est = ev.estimates[passing]
        fig.add_trace(go.Scattergl(x=act, y=est, mode="markers", name=k, showlegend=False,
                                   marker={"color": COLOURS[k], "size": 4, "opacity": 0.6},
                                   hovertemplate=f"{k}<br>actual %{{x:,.0f}}<br>estimated %{{y:,.1f}}<extra></extra>"),
                      row=1, col=j + 1)
        fig.add_trace(go.Scatter(x=[0, hi], y=[0, hi], mode="lines", line={"color": TRUTH, "dash": "dash", "width": 1},
                                 showlegend=False, hoverinfo="skip"), row=1, col=j + 1)
        err = np.abs(est - act) / act
        rows.append({"mechanism": k, "queries": int(len(act)), "mean relative error": float(err.mean()),
                     "median relative error": float(np.median(err)),
                     "correlation est/act": float(np.corrcoef(act, est)[0, 1]) if len(act) > 1 else None})
    fig.update_xaxes(title_text="actual answer (records)")
    fig.update_yaxes(title_text="estimated answer (records)", col=1)
    fig.update_layout(title={"text": f"Estimated vs actual, {data.name}, L = {s['l']}, s ≥ {s['s']:.1%}", "x": 0},
                      height=440, margin={"l": 60, "r": 20, "t": 80, "b": 60})
    notes = [f"{k}: {v}" for k, v in res.items() if isinstance(v, str)]
    if info.get("suppressed"):
        notes.append(f"Anatomy: {info['suppressed']:,} records suppressed first (seed 002 §6.3).")
    return ExperimentResult(
        figures=[("Estimate against actual answer (seed 002 Fig. 3)", fig,
                  "One point per query passing the selectivity threshold; the dashed line is a perfect estimate. "
                  "The tighter the cloud around it, the better; the paper finds PP tightest.")],
        tables=[("Summary", pd.DataFrame(rows), "Relative errors as fractions (0.10 = 10%).")],
        notes=notes,
        data={"summary": rows},
    )


EXPERIMENTS = [
    Experiment(
        "seed002-retention", "SDR: retention of UP vs PP (seed 002 Tables 2 and 3)", "seed 002 §6.2, Tables 2-3",
        "For each L = 1/ρ₂, the chance that a record keeps its true value under uniform perturbation of the "
        "whole table and under PP's sub-tables, with the statistics of PP's partition. Fast: no queries.",
        (RHO1, LS, DELTA), _retention, order=40),
    Experiment(
        "seed002-error-vs-l", "SDR: PP vs UP vs Anatomy, error against L (seed 002 Fig. 2/4, upper)",
        "seed 002 §6.2-6.3, Figures 2 and 4",
        "Seed 002's workload (random conditions on 1-3 QI attributes, each asked for every sensitive value) "
        "answered by PP and UP at (ρ₁, 1/L)-privacy and by Anatomy with ℓ = L; mean relative error of the "
        "queries passing 0.1%, 0.5% and 1% selectivity. Use ρ₁ = 1/13 and L = 6,5,4,3 for the paper's OCC, "
        "ρ₁ = 1/30 and L = 10,8,6,4 with education as the sensitive attribute for EDU.",
        (RHO1, LS, CONDITIONS, SEED, ANATOMY, DELTA), _error_vs_l, order=41),
    Experiment(
        "seed002-error-vs-size", "SDR: PP vs UP vs Anatomy, error against |T| (seed 002 Fig. 2/4, lower)",
        "seed 002 §6.2-6.3, Figures 2 and 4",
        "The same comparison on the first |T| rows of the table, for several sizes (fractions of the table).",
        (RHO1, L_ONE, Param("sizes", "|T|", "Table sizes as fractions of the loaded table, comma separated.",
                            "0.2,0.4,0.6,0.8,1", kind="text", paper="seed 002 Fig. 2: 100K to 500K"),
         CONDITIONS, SEED, ANATOMY, DELTA), _error_vs_size, order=42),
    Experiment(
        "seed002-scatter", "SDR: estimate vs actual for Ana, UP, PP (seed 002 Fig. 3)", "seed 002 §6.2, Figure 3",
        "Every query of seed 002's workload whose answer is at least s of the table, estimated by Anatomy, UP "
        "and PP, against its actual answer.",
        (RHO1, L_ONE, Param("s", "s", "Smallest selectivity (true answer as a share of the table) drawn.", 0.001,
                            low=0, high=0.5, closed="right", step=0.001, paper="seed 002 Fig. 3: 0.1%"),
         CONDITIONS, SEED, ANATOMY, DELTA), _scatter, order=43),
]

