"""Experiments shared by several papers' evaluation sections: the data description and running time.

* ``data-profile``: the attributes of the loaded table with their domain
  sizes beside the sizes a paper prints (seed 001 Table 2, seed 003 Table
  5, seed 004 Fig. 10), and the frequency distribution of one or more
  columns with their largest and smallest shares (seed 001 Fig. 1, seed
  003 Fig. 2; seed 003 §7.1 and seed 002 §6.3 print those shares).
* ``time-vs-size``: seconds to sanitize the first |T| rows of the loaded
  table with several mechanisms (seed 002 Fig. 5: PP, UP and Anatomy
  against |T|), median of a few runs, beside a bound the paper states.

References
----------
seed 001 §6.1; seed 002 §6.4; seed 003 §7; seed 004 §9.1.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from .. import mechanisms
from ..errors import ParameterError, WorkbenchError
from ..figures import PALETTE, mechanism_colour
from ..params import Param
from ..table import Dataset
from . import Experiment, ExperimentResult

__all__ = ["EXPERIMENTS", "expected_domains", "profile"]


def expected_domains(text: str) -> dict[str, int]:
    """``"age=77, sex=2"`` as ``{"age": 77, "sex": 2}`` (empty text: no comparison)."""
    out = {}
    for part in str(text or "").split(","):
        if not part.strip():
            continue
        name, sep, value = part.partition("=")
        if not sep or not value.strip().isdigit():
            raise ParameterError(f"The 'paper' setting lists column=size pairs, comma separated (e.g. age=77, "
                                 f"sex=2). Got {part.strip()!r}.")
        out[name.strip()] = int(value)
    return out


def profile(data: Dataset, column: str) -> tuple[np.ndarray, np.ndarray]:
    """Labels and shares of ``column`` (the SA or a QI) of the loaded table, most frequent first."""
    if column == data.sa:
        codes, labels = data.sa_codes, data.sa_labels
    elif column in data.qi:
        j = data.qi.index(column)
        codes, labels = data.qi_codes[j], data.qi_labels[j]
    else:
        raise ParameterError(f"There is no column '{column}' among the chosen columns of {data.name} "
                             f"({', '.join((*data.qi, data.sa))}).")
    share = np.bincount(codes, minlength=len(labels)) / max(1, len(codes))
    order = np.argsort(-share, kind="stable")
    return np.asarray(labels, dtype=object)[order], share[order]


def _profile(data: Dataset, s: dict[str, Any], progress=None) -> ExperimentResult:
    paper = expected_domains(s["paper"])
    columns = [c.strip() for c in str(s["columns"] or data.sa).split(",") if c.strip()] or [data.sa]
    domains = {c: len(lab) for c, lab in zip(data.qi, data.qi_labels)}
    domains[data.sa] = data.m
    rows = [{"attribute": c, "values here": domains.get(c), "paper": paper.get(c),
             "same": None if c not in paper or c not in domains else domains[c] == paper[c]}
            for c in dict.fromkeys([*data.qi, data.sa, *paper])]
    fig = go.Figure()
    stats = {}
    for i, col in enumerate(columns):
        labels, share = profile(data, col)
        stats[col] = {"values": len(share), "max share": float(share[0]), "min share": float(share[-1]),
                      "values under 3.33%": int((share < 1 / 30).sum())}
        fig.add_trace(go.Bar(x=list(range(1, len(share) + 1)), y=share, name=col,
                             marker_color=PALETTE[i % len(PALETTE)], customdata=labels.astype(str),
                             hovertemplate=f"{col}<br>rank %{{x}}: %{{customdata}}<br>%{{y:.2%}}<extra></extra>"))
    fig.update_layout(title={"text": f"Frequency distribution, {data.name}", "x": 0}, barmode="group", height=380,
                      margin={"l": 60, "r": 20, "t": 60, "b": 60}, legend={"orientation": "h", "y": -0.2, "x": 0})
    fig.update_xaxes(title_text="values, most frequent first (rank)")
    fig.update_yaxes(title_text="share of the records", tickformat=".0%")
    return ExperimentResult(
        figures=[("Frequency distribution", fig, "Share of the records per value, most frequent first.")],
        tables=[("Attributes", pd.DataFrame(rows), "Number of distinct values here beside the paper's."),
                ("Shares", pd.DataFrame([{"column": c, **v} for c, v in stats.items()]),
                 "Largest and smallest share of a value.")],
        data={"domains": domains, "paper": paper, "stats": stats})


def _time_vs_size(data: Dataset, s: dict[str, Any], progress=None) -> ExperimentResult:
    from .seed001 import subsample

    try:
        sizes = sorted({int(float(p)) for p in str(s["sizes"]).split(",") if p.strip()})
    except ValueError:
        sizes = []
    if not sizes or min(sizes) < 10 or len(sizes) > 12:
        raise ParameterError(f"The 'sizes' setting lists up to 12 row counts of at least 10, comma separated. "
                             f"Got {s['sizes']!r}.")
    runs = []
    for part in str(s["mechanisms"]).split(";"):
        name, _, raw = part.strip().partition(" ")
        if not name:
            continue
        mechanisms.get(name)
        params = {}
        for kv in raw.split():
            k, _, v = kv.partition("=")
            params[k] = v
        runs.append((part.strip(), name, params))
    if not runs:
        raise ParameterError("Name at least one mechanism in the 'mechanisms' setting (e.g. 'sdr; uniform').")
    rows, notes = [], []
    series: dict[str, list] = {label: [] for label, _, _ in runs}
    for i, n in enumerate(sizes):
        if n > data.n:
            notes.append(f"|T| = {n:,} is larger than the table ({data.n:,} rows); left out.")
            continue
        sub = subsample(data, n, s["seed"])
        for label, name, params in runs:
            if progress:
                progress(i / len(sizes), f"|T| = {n:,}: {label}…")
            times = []
            try:
                for r in range(s["repeats"]):
                    t0 = time.perf_counter()
                    mechanisms.sanitize(sub, name, params, s["seed"] + r)
                    times.append(time.perf_counter() - t0)
            except WorkbenchError as exc:
                notes.append(f"{label} at |T| = {n:,}: {exc}")
            t = float(np.median(times)) if times else None
            series[label].append(t)
            rows.append({"|T|": n, "mechanism": label, "seconds here": t, "paper's bound s": s["bound"] or None,
                         "here / bound": (t / s["bound"]) if (t is not None and s["bound"]) else None})
    if progress:
        progress(1.0, "done")
    xs = [n for n in sizes if n <= data.n]
    fig = go.Figure()
    for i, (label, ys) in enumerate(series.items()):
        fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines+markers", name=label,
                                 line={"color": mechanism_colour(label.split()[0]) or PALETTE[i]},
                                 hovertemplate=f"{label}<br>|T| = %{{x:,}}<br>%{{y:.3g}} s<extra></extra>"))
    if s["bound"]:
        fig.add_trace(go.Scatter(x=xs, y=[s["bound"]] * len(xs), mode="lines", name="paper's bound",
                                 line={"color": "#555", "dash": "dash"}))
    fig.update_layout(title={"text": f"Sanitize time against |T|, {data.name}", "x": 0}, height=400,
                      margin={"l": 60, "r": 20, "t": 60, "b": 60}, legend={"orientation": "h", "y": -0.2, "x": 0})
    fig.update_xaxes(title_text="|T| (rows, a random sample of the table)")
    fig.update_yaxes(title_text="seconds", type="log")
    return ExperimentResult(
        figures=[("Running time against |T|", fig, f"Median of {s['repeats']} runs on this machine.")],
        tables=[("Seconds", pd.DataFrame(rows), "Our time beside the bound the paper states, and their ratio.")],
        notes=notes, data={"rows": rows, "series": series, "sizes": xs})


SEED = Param("seed", "seed", "Seed of the samples and releases.", 0, kind="int", low=0, high=2**31 - 1)
EXPERIMENTS = [
    Experiment("data-profile", "Data: attributes and frequency distribution (a paper's data description)",
               "seed 001 Table 2, Fig. 1; seed 003 Table 5, Fig. 2; seed 004 Fig. 10",
               "Distinct values per attribute of the loaded table beside the paper's, and the frequency distribution "
               "of the chosen columns.",
               (Param("paper", "sizes", "The paper's domain sizes, column=size pairs, comma separated.", None,
                      kind="text", optional=True),
                Param("columns", "cols", "Columns whose frequency distribution is drawn, comma separated (empty: "
                      "the sensitive attribute).", None, kind="text", optional=True)),
               _profile, page="papers", order=1),
    Experiment("time-vs-size", "Running time of sanitization against |T|", "seed 002 Fig. 5",
               "Seconds to sanitize random samples of the loaded table of each size, per mechanism.",
               (Param("mechanisms", "mech", "Mechanisms and parameters, ';' separated (e.g. 'sdr; uniform; anatomy "
                      "l=6').", "sdr; uniform; anatomy l=6", kind="text"),
                Param("sizes", "|T|", "Row counts, comma separated.", "20000,40000,60000,80000,100000", kind="text"),
                Param("bound", "bound", "A time the paper states as an upper bound, seconds (0: none).", 0.0, low=0,
                      high=1e6),
                Param("repeats", "runs", "Runs per size (the median is reported).", 1, kind="int", low=1, high=20),
                SEED),
               _time_vs_size, page="papers", order=2),
]
