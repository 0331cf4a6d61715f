"""Seed 004's query-error experiments: PriView vs Ambiguity vs Mondrian generalization (Fig. 13-14).

* ``seed004-error-vs-selectivity``: Fig. 13(a), mean relative error of the
  GROUP BY cells whose WHERE selects about 1%, 5%, 10% of the table, with a
  breakdown by the number of grouped attributes.
* ``seed004-error-vs-attrs``: Fig. 13(b), the same against the number of
  attributes (3, 4, 5) in the cells' conditions.
* ``seed004-error-vs-beta``: Fig. 14, against beta (alpha fixed).

The three mechanisms are called by name through the registry
(``priview``, ``ambiguity``, ``mondrian``); one that is not registered, or
not eligible at a setting, is skipped with a note instead of failing the
experiment.  Mondrian uses ``l = ceil(1/beta)`` (and its k), the baseline
of seed 004 §9.  The relative error of a cell is ``|act - est| / act``
(seed 004 §9.3; every cell has act >= 1); the figures show the mean.

References
----------
seed 004 (Hui Wang, JCST 2010) §9.1, §9.3, Fig. 13(a), 13(b), 14;
MECHANISMS.md section 5.
"""

from __future__ import annotations

import time
from typing import Any, Mapping

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from .. import mechanisms
from ..errors import WorkbenchError
from ..evaluate import Evaluation, evaluate_release
from ..figures import PALETTE, mechanism_colour
from ..params import Param
from ..table import Dataset
from ..workloads.seed004 import parse_list, seed004, seed004_attrs
from . import Experiment, ExperimentResult

__all__ = ["EXPERIMENTS", "run_three", "order_caption", "above_one_share", "group_size_figure"]

LABELS = {"priview": "PriView", "ambiguity": "Ambiguity", "mondrian": "Mondrian"}
COLOURS = {label: mechanism_colour(name) for name, label in LABELS.items()}  # as in every other figure

ALPHA = Param("alpha", "α", "Presence bound of Ambiguity and PriView.", 0.1, low=0, high=1, closed="right",
              step=0.01, safer="lower", paper="seed 004 §9: 0.1")
BETA = Param("beta", "β", "Association bound; Mondrian uses ℓ = ⌈1/β⌉ distinct sensitive values per group.", 0.1,
             low=0, high=1, closed="right", step=0.005, safer="lower", paper="seed 004 §9: 0.025, 0.05, 0.1")
K = Param("k", "k", "Mondrian's smallest group (k-anonymity).", 10, kind="int", low=1, high=10_000,
          paper="ours: 10 (implied by ℓ = 10)")
SELECTIVITIES = Param("selectivities", "s", "Shares of the table the WHERE clause selects, comma separated.",
                      "0.01,0.05,0.1", kind="text", paper="seed 004 §9.1: 1%, 5%, 10%")
GROUPBYS = Param("groupbys", "G", "GROUP BY queries per setting (each answered cell by cell).", 4, kind="int",
                 low=1, high=50, paper="seed 004 §9.1: not stated")
CELLS = Param("max_cells", "cells", "Largest number of cells kept per GROUP BY.", 200, kind="int", low=1,
              high=20_000)
SEED = Param("seed", "seed", "Seed of the query generator and of the releases.", 0, kind="int", low=0,
             high=2**31 - 1)
BETAS = Param("betas", "β", "Values of β to compare, comma separated.", "0.075,0.1,0.15,0.2", kind="text",
              paper="seed 004 Fig. 14: 0.025, 0.05, 0.1 (on 50 occupations; Adult has 14, so β ≥ 1/14)")


# ------------------------------------------------------------------ running the three mechanisms
def run_three(data: Dataset, alpha: float, beta: float, k: int, workload, seed: int):
    """Evaluations (or a message) per mechanism, plus what each release says about its privacy."""
    out: dict[str, Evaluation | str] = {}
    info: dict[str, dict[str, Any]] = {}
    for name, raw in (("priview", {"alpha": alpha, "beta": beta}), ("ambiguity", {"alpha": alpha, "beta": beta}),
                      ("mondrian", {"beta": beta, "k": k})):
        label = LABELS[name]
        if name not in mechanisms.MECHANISMS:
            out[label] = f"{label} is not available in this build yet (mechanism '{name}' is not registered)."
            continue
        try:
            release = mechanisms.sanitize(data, name, raw, seed)
            out[label] = evaluate_release(release, workload)
        except WorkbenchError as exc:
            out[label] = str(exc)
            continue
        p = release.privacy
        sizes = [v for v in (p.get("mean_group_size"),) if v is not None]
        info[label] = {
            "groups": p.get("groups"),
            "mean group size": sizes[0] if sizes else ((data.n - (p.get("unplaced") or 0)) / p["groups"]
                                                       if p.get("groups") else None),
            "max presence": p.get("max_presence"),
            "max association": p.get("max_association"),
            "unplaced records": p.get("unplaced", 0),
            "unplaced share": (p.get("unplaced") or 0) / data.n if data.n else 0.0,
        }
    return out, info


def _mean(ev: Evaluation, member: np.ndarray | None = None) -> float | None:
    err = ev.relative_error
    sel = np.isfinite(err) if member is None else (member & np.isfinite(err))
    return float(err[sel].mean()) if sel.any() else None


ORDER = "PriView ≤ Ambiguity < Mondrian"


def _breaks(have: Mapping[str, float | None]) -> list[str]:
    """How the paper's order fails among the given means (empty when it holds or cannot be checked)."""
    p, a, m = (have.get(k) for k in ("PriView", "Ambiguity", "Mondrian"))
    out = []
    if p is not None and a is not None and p > a + 1e-12:
        out.append(f"PriView {p:.3f} above Ambiguity {a:.3f}")
    if a is not None and m is not None and m <= a:
        out.append(f"Mondrian {m:.3f} {'below' if m < a else 'equal to'} Ambiguity {a:.3f}")
    return out


def above_one_share(ev: Evaluation) -> float | None:
    """Share of the total relative error carried by cells off by more than their count (error > 1).

    With estimates that are never negative, an error above 1 means an
    estimate above twice the true count: an undercount (records left out
    of the release) errs by at most 1.
    """
    err = ev.relative_error
    err = err[np.isfinite(err)]
    total = float(err.sum())
    return float(err[err > 1].sum() / total) if total > 0 else None


def order_caption(means: dict[str, float | None], info: dict[str, dict], what: str,
                  bands: Mapping[str, Mapping[str, float | None]] | None = None,
                  above_one: Mapping[str, float | None] | None = None) -> str:
    """Whether the paper's order PriView <= Ambiguity < Mondrian holds here, per band, and why not.

    ``bands`` maps each band (bar group of the figure) to the mechanisms' means
    there; a band where the order fails is named even when it holds over all
    cells.  ``info`` (from :func:`run_three`) gives the records each release
    left unplaced; ``above_one`` (:func:`above_one_share`) how much of a
    mean above 1 comes from overestimated cells.
    """
    have = {k: v for k, v in means.items() if v is not None}
    if len(have) < 3:
        missing = [k for k in ("PriView", "Ambiguity", "Mondrian") if k not in have]
        return (f"Only {', '.join(have) or 'no mechanism'} ran ({', '.join(missing)} skipped: see the notes), so "
                f"the paper's order {ORDER} cannot be checked here.")
    shown = ", ".join(f"{k} {v:.3f}" for k, v in sorted(have.items(), key=lambda kv: kv[1]))
    text = f"Mean relative error per query {what}: {shown}. "
    failing = {band: _breaks(v) for band, v in (bands or {}).items()}
    failing = {band: b for band, b in failing.items() if b}
    per_band = "; ".join(f"{band}: {', '.join(b)}" for band, b in failing.items())
    if not _breaks(have):
        text += f"The paper's order {ORDER} holds over all cells"
        if failing:
            text += f" but not in every band ({per_band})."
        else:
            text += " and in every band." if bands else " on this table."
    else:
        why = []
        if have["Mondrian"] <= have["Ambiguity"]:
            g_m = info.get("Mondrian", {}).get("mean group size")
            g_a = info.get("Ambiguity", {}).get("mean group size")
            if g_m and g_a and g_m < g_a:
                why.append(f"Mondrian's groups are smaller here ({g_m:.0f} vs {g_a:.0f} records on average), so "
                           "its ranges are narrow")
            elif g_m and g_a:
                why.append(f"Ambiguity's groups are smaller ({g_a:.0f} vs {g_m:.0f} records on average) but "
                           "built differently")
            why.append("Ambiguity draws each record of a group from a different sensitive value and picks the "
                       "records that add the most new QI values (to lower presence), so a group spreads over "
                       "unrelated QI values and its estimate treats every combination of them as equally likely, "
                       "while Mondrian's groups are boxes of similar records")
            why.append("Theorem 3 compares Ambiguity with a generalization of the same groups, not with "
                       "Mondrian's own partition")
        if have["PriView"] > have["Ambiguity"]:
            why.append("PriView keeps only one QI with the sensitive values; when the query's attributes are not "
                       "that one, it splits the group's count like Ambiguity over more combinations")
        text += f"The paper's order {ORDER} does not hold here: " + "; ".join(why) + "."
        if failing and len(failing) < len(bands or {}):
            text += f" Per band it fails at {per_band}."
    return text + _unplaced_sentence(info) + _above_one_sentence(have, above_one or {})


def _unplaced_sentence(info: dict[str, dict]) -> str:
    """Records Ambiguity and PriView left out of their releases, as a count and a share of the table."""
    left: dict[tuple[int, float], list[str]] = {}
    for k in ("Ambiguity", "PriView"):
        n = int(info.get(k, {}).get("unplaced records") or 0)
        if n:
            left.setdefault((n, float(info[k].get("unplaced share") or 0.0)), []).append(k)
    if not left:
        return ""
    parts = [f"{' and '.join(names)} {'leave' if len(names) > 1 else 'leaves'} {n:,} records ({share:.1%} of "
             "the table) in no group" for (n, share), names in left.items()]
    return (" " + "; ".join(parts) + ": their estimates miss those records, so cells on those records' "
            "sensitive values are undercounted (an undercount errs by at most 1).")


def _above_one_sentence(have: Mapping[str, float], above_one: Mapping[str, float | None]) -> str:
    """Where a mean above 1 comes from: cells estimated at more than twice their count."""
    big = [(k, above_one.get(k)) for k, v in have.items() if v > 1 and above_one.get(k) is not None]
    if not big:
        return ""
    named = [f"{share:.0%} of {k}'s" for k, share in big]
    shares = named[0] if len(named) == 1 else ", ".join(named[:-1]) + " and " + named[-1]
    return (f" Means above 1 come from overestimates: cells estimated at more than twice their true count carry "
            f"{shares} total error (a group's count is spread evenly over the QI values it covers, so cells "
            "holding few records receive too much).")


def _by_band(series: dict[str, list[float | None]]) -> list[dict[str, float | None]]:
    """``{mechanism: [mean per band]}`` turned into one ``{mechanism: mean}`` per band."""
    n = max((len(v) for v in series.values()), default=0)
    return [{k: v[i] for k, v in series.items()} for i in range(n)]


def _bars(title: str, x: list[str], x_label: str, series: dict[str, list[float | None]]) -> go.Figure:
    fig = go.Figure()
    for label, ys in series.items():
        fig.add_trace(go.Bar(x=x, y=[np.nan if y is None else y for y in ys], name=label,
                             marker_color=COLOURS.get(label),
                             hovertemplate=f"{label}<br>%{{x}}<br>mean relative error %{{y:.3f}}<extra></extra>"))
    fig.update_layout(barmode="group", title={"text": title, "x": 0}, height=400,
                      margin={"l": 60, "r": 20, "t": 60, "b": 60}, legend={"orientation": "h", "y": -0.22, "x": 0})
    fig.update_xaxes(title_text=x_label, type="category")
    fig.update_yaxes(title_text="mean relative error |est − act| / act", rangemode="tozero")
    return fig


def _tick(progress, done: float, text: str) -> None:
    if progress:
        progress(min(1.0, done), text)


def _notes(res: dict[str, Evaluation | str], info: dict[str, dict], where: str = "") -> list[str]:
    notes = [f"{k}{where}: {v}" for k, v in res.items() if isinstance(v, str)]
    for k, i in info.items():
        if i.get("unplaced records"):
            notes.append(f"{k}{where}: {i['unplaced records']:,} records could not be placed in a group and are "
                         "missing from its release; its estimates undercount by their share.")
    return notes


def _privacy_table(info: dict[str, dict]) -> pd.DataFrame:
    return pd.DataFrame([{"mechanism": k, **v} for k, v in info.items()])


# ------------------------------------------------------------------ Fig. 13(a)
def _vs_selectivity(data: Dataset, s: dict[str, Any], progress=None) -> ExperimentResult:
    _tick(progress, 0.0, "Drawing the GROUP BY queries…")
    wl = seed004(data, s["selectivities"], s["attrs"], s["groupbys"], s["max_cells"], s["seed"])
    _tick(progress, 0.1, "PriView, Ambiguity and Mondrian…")
    res, info = run_three(data, s["alpha"], s["beta"], s["k"], wl, s["seed"])
    _tick(progress, 1.0, "done")
    labels = [b.name for b in wl.bands]
    series = {k: [_mean(ev, m) for m in wl.membership] for k, ev in res.items() if isinstance(ev, Evaluation)}
    attrs = sorted(set(wl.n_attrs.tolist()))
    rows = []
    for k, ev in res.items():
        if not isinstance(ev, Evaluation):
            continue
        row = {"mechanism": k, "all queries": _mean(ev)}
        row.update({b: v for b, v in zip(labels, series[k])})
        row.update({f"GROUP BY {d} attribute{'s' if d > 1 else ''}": _mean(ev, wl.n_attrs == d) for d in attrs})
        rows.append(row)
    means = {k: (_mean(ev) if isinstance(ev, Evaluation) else None) for k, ev in res.items()}
    shares = pd.DataFrame({"GROUP BY": [", ".join(g) for g in wl.grouped], "WHERE": list(wl.where),
                           "target share": [wl.target[wl.groupby == i][0] if (wl.groupby == i).any() else None
                                            for i in range(len(wl.where))],
                           "share selected": wl.where_share,
                           "cells (queries)": np.bincount(wl.groupby, minlength=len(wl.where))})
    notes = _notes(res, info)
    far = shares["target share"].notna() & (np.abs(shares["share selected"] - shares["target share"])
                                            > 0.25 * shares["target share"])
    if far.any():
        top = float(data.sa_counts.max() / data.n)
        high = (shares["target share"][far] > top).any()
        why = (f"the most frequent sensitive value holds {top:.1%} of the table, and an added range or value only "
               "narrows it" if high else "no sensitive value, alone or with a range or value on an attribute not "
               "grouped, selects that share")
        notes.append(f"{int(far.sum())} of {len(shares)} GROUP BYs could not reach their target share within 25% "
                     f"({why}); the closest share was used (column 'share selected').")
    caption = order_caption(means, info, "over all cells", dict(zip(labels, _by_band(series))),
                            {k: above_one_share(ev) for k, ev in res.items() if isinstance(ev, Evaluation)})
    return ExperimentResult(
        figures=[("Error against selectivity (seed 004 Fig. 13(a))",
                  _bars(f"PriView vs Ambiguity vs Mondrian, {data.name}, α = {s['alpha']:g}, β = {s['beta']:g}",
                        labels, "WHERE clause selectivity", series),
                  "Each bar is the mean relative error of the count queries formed by the cells of GROUP BY "
                  "queries whose WHERE selects about that share of the table. Lower is better. " + caption)],
        tables=[("Errors", pd.DataFrame(rows), "Mean relative error (1.0 = off by the whole count); columns by "
                 "selectivity and by the number of grouped attributes."),
                ("Privacy of the releases", _privacy_table(info),
                 "Largest presence and association probabilities (seed 004 Theorems 1-2; for Mondrian "
                 "|G| / product of the generalized domain sizes), groups and records left unplaced."),
                ("The GROUP BY queries", shares, "Every GROUP BY drawn, its WHERE clause and the share of the "
                 "table that clause selects.")],
        notes=notes,
        data={"errors": series, "means": means, "info": info},
    )


# ------------------------------------------------------------------ Fig. 13(b)
def _vs_attrs(data: Dataset, s: dict[str, Any], progress=None) -> ExperimentResult:
    _tick(progress, 0.0, "Drawing the GROUP BY queries…")
    attrs = parse_list(s["attrs"], "attrs", int, 1, 8)
    attrs = [d for d in attrs if d <= len(data.qi)]
    if not attrs:
        raise WorkbenchError(f"The table has {len(data.qi)} QI columns; choose numbers of attributes up to that.")
    wl = seed004_attrs(data, ",".join(map(str, attrs)), s["groupbys"], s["max_cells"], s["seed"])
    _tick(progress, 0.1, "PriView, Ambiguity and Mondrian…")
    res, info = run_three(data, s["alpha"], s["beta"], s["k"], wl, s["seed"])
    _tick(progress, 1.0, "done")
    x = [str(d) for d in attrs]
    series = {k: [_mean(ev, m) for m in wl.membership] for k, ev in res.items() if isinstance(ev, Evaluation)}
    rows = [{"mechanism": k, **{f"{d} attributes": v for d, v in zip(attrs, ys)}} for k, ys in series.items()]
    means = {k: (_mean(ev) if isinstance(ev, Evaluation) else None) for k, ev in res.items()}
    caption = order_caption(means, info, "over all cells", dict(zip([b.name for b in wl.bands], _by_band(series))),
                            {k: above_one_share(ev) for k, ev in res.items() if isinstance(ev, Evaluation)})
    return ExperimentResult(
        figures=[("Error against the number of attributes (seed 004 Fig. 13(b))",
                  _bars(f"PriView vs Ambiguity vs Mondrian, {data.name}, α = {s['alpha']:g}, β = {s['beta']:g}",
                        x, "attributes in the query condition", series),
                  "Cells of GROUP BY d attributes WHERE S = v: each count query's condition involves d QI "
                  "attributes. The paper finds errors growing with d; on a table this size, cells on many "
                  "attributes hold few records, so every estimator misses them by a similar share. " + caption)],
        tables=[("Errors", pd.DataFrame(rows), "Mean relative error per number of attributes."),
                ("Privacy of the releases", _privacy_table(info), "As in Fig. 13(a).")],
        notes=_notes(res, info),
        data={"errors": series, "means": means, "attrs": attrs},
    )


# ------------------------------------------------------------------ Fig. 14
def _vs_beta(data: Dataset, s: dict[str, Any], progress=None) -> ExperimentResult:
    betas = parse_list(s["betas"], "betas", float, 1e-6, 1.0)
    _tick(progress, 0.0, "Drawing the GROUP BY queries…")
    wl = seed004(data, s["selectivities"], s["attrs"], s["groupbys"], s["max_cells"], s["seed"])
    series: dict[str, list[float | None]] = {k: [] for k in LABELS.values()}
    notes, rows = [], []
    for i, beta in enumerate(betas):
        _tick(progress, 0.05 + 0.95 * i / len(betas), f"β = {beta:g}: PriView, Ambiguity and Mondrian…")
        res, info = run_three(data, s["alpha"], beta, s["k"], wl, s["seed"])
        notes += _notes(res, info, f" at β = {beta:g}")
        for k in series:
            ev = res.get(k)
            v = _mean(ev) if isinstance(ev, Evaluation) else None
            series[k].append(v)
            rows.append({"β": beta, "mechanism": k, "mean relative error": v,
                         "groups": info.get(k, {}).get("groups"),
                         "mean group size": info.get(k, {}).get("mean group size"),
                         "note": ev if isinstance(ev, str) else ""})
    _tick(progress, 1.0, "done")
    series = {k: v for k, v in series.items() if any(y is not None for y in v)}
    fig = go.Figure()
    for k, ys in series.items():
        fig.add_trace(go.Scatter(x=betas, y=[np.nan if y is None else y for y in ys], mode="lines+markers", name=k,
                                 line={"color": COLOURS[k]},
                                 hovertemplate=f"{k}<br>β = %{{x}}<br>mean relative error %{{y:.3f}}<extra></extra>"))
    fig.update_layout(title={"text": f"Error against β, {data.name}, α = {s['alpha']:g}", "x": 0}, height=400,
                      margin={"l": 60, "r": 20, "t": 60, "b": 60}, legend={"orientation": "h", "y": -0.22, "x": 0})
    fig.update_xaxes(title_text="β (association bound; larger = weaker privacy)")
    fig.update_yaxes(title_text="mean relative error |est − act| / act", rangemode="tozero")
    return ExperimentResult(
        figures=[("Error against β (seed 004 Fig. 14)", fig,
                  "Mean relative error of every GROUP BY cell at each β (α fixed). The paper finds every "
                  "mechanism improving as β grows (smaller groups), Mondrian fastest to lose accuracy as β "
                  "shrinks. A missing point means the mechanism cannot reach that β on this table (see notes).")],
        tables=[("Errors", pd.DataFrame(rows), "Mean relative error, groups and mean group size per β.")],
        notes=notes,
        data={"betas": betas, "errors": series},
    )


_ATTRS_A = Param("attrs", "i", "Numbers of grouped QI attributes, comma separated.", "1,2,3", kind="text",
                 paper="seed 004 §9.1: 1 to 3")
_ATTRS_B = Param("attrs", "d", "Numbers of attributes in the condition, comma separated.", "3,4,5", kind="text",
                 paper="seed 004 Fig. 13(b): 3, 4, 5")

EXPERIMENTS = [
    Experiment(
        "seed004-error-vs-selectivity", "Ambiguity: PriView vs Ambiguity vs Mondrian by selectivity (seed 004 "
        "Fig. 13a)", "seed 004 §9.3, Fig. 13(a)",
        "Seed 004's GROUP BY workload (1 to 3 random QI attributes, WHERE S = v selecting about 1%, 5% or 10% of "
        "the table) answered from a PriView, an Ambiguity and a Mondrian release at the same β; mean relative "
        "error of the cells. Use α = β = 0.1 as the paper does.",
        (ALPHA, BETA, K, SELECTIVITIES, _ATTRS_A, GROUPBYS, CELLS, SEED), _vs_selectivity, order=50),
    Experiment(
        "seed004-error-vs-attrs", "Ambiguity: PriView vs Ambiguity vs Mondrian by number of attributes (seed 004 "
        "Fig. 13b)", "seed 004 §9.3, Fig. 13(b)",
        "GROUP BY 3, 4 or 5 random QI attributes WHERE S = v; each cell is a count query on that many attributes.",
        (ALPHA, BETA, K, _ATTRS_B, GROUPBYS, CELLS, SEED), _vs_attrs, order=51),
    Experiment(
        "seed004-error-vs-beta", "Ambiguity: PriView vs Ambiguity vs Mondrian against β (seed 004 Fig. 14)",
        "seed 004 §9.3, Fig. 14",
        "The GROUP BY workload answered at several β (α fixed). On Adult (14 occupations) β must be at least "
        "1/14; the paper's 0.025 and 0.05 need a table with 40 or 20 occupations, such as census:N.",
        (ALPHA, BETAS, K, SELECTIVITIES, _ATTRS_A, GROUPBYS, CELLS, SEED), _vs_beta, order=52),
]


# ------------------------------------------------------------------ Mondrian release figure (Sanitize view, report)
def group_size_figure(sizes: np.ndarray, k: int, l: int) -> go.Figure:
    """Histogram of a Mondrian release's group sizes, with k (and l, when larger) as vertical lines."""
    sizes = np.asarray(sizes)
    fig = go.Figure(go.Histogram(x=sizes, marker_color=COLOURS["Mondrian"], name="groups",  # an array: kept typed, no per-value check
                                 nbinsx=min(60, max(5, int(np.sqrt(len(sizes))) + 1)),
                                 hovertemplate="size %{x}: %{y} groups<extra></extra>"))
    fig.add_vline(x=k, line={"color": PALETTE[7], "dash": "dash"}, annotation_text=f"k = {k}",
                  annotation_position="top right")
    if l > k:
        fig.add_vline(x=l, line={"color": PALETTE[3], "dash": "dot"}, annotation_text=f"ℓ = {l}",
                      annotation_position="top left")
    fig.update_layout(title={"text": f"Sizes of the {len(sizes):,} groups", "x": 0}, height=360,
                      margin={"l": 60, "r": 20, "t": 60, "b": 50}, bargap=0.05, showlegend=False)
    fig.update_xaxes(title_text="records in the group (each hides among them)", rangemode="tozero")
    fig.update_yaxes(title_text="groups")
    return fig


# ------------------------------------------------------------------ density (Occ-100K-d) and timing, §9.2-9.3
def densify(data: Dataset, d: int, seed: int = 0) -> Dataset:
    """``data`` made d times denser as seed 004 §9.1's Occ-100K-d: n rows drawn from the first ceil(n/d).

    Same reading as the ``occ:N:d`` sample (:func:`core.samples._occ`):
    every row is a copy of one of ceil(n/d) pool rows, so only about
    (100/d)% of the rows are distinct.  d = 1 returns ``data``.
    """
    from dataclasses import replace

    if d <= 1:
        return data
    pool = -(-data.n // d)
    rows = (np.random.default_rng([seed, data.n, d]).random(data.n) * pool).astype(np.int64)
    return replace(data, name=f"{data.name} (density d = {d})", content_hash=f"{data.content_hash}|dense{d}@{seed}",
                   sa_codes=data.sa_codes[rows], qi_codes=tuple(c[rows] for c in data.qi_codes), rows_dropped=0,
                   table=None, row_index=None)


def _timed(data: Dataset, mech: str, raw: dict, seed: int, repeats: int) -> tuple[float | None, str | None, Any]:
    times, release = [], None
    for r in range(repeats):
        t0 = time.perf_counter()
        try:
            release = mechanisms.sanitize(data, mech, raw, seed + r)
        except WorkbenchError as exc:
            return None, str(exc), None
        times.append(time.perf_counter() - t0)
    return float(np.median(times)), None, release


def _line_fig(title: str, x, series: dict[str, list], x_title: str, y_title: str) -> go.Figure:
    fig = go.Figure()
    for i, (name, ys) in enumerate(series.items()):
        fig.add_trace(go.Scatter(x=x, y=[np.nan if y is None else y for y in ys], mode="lines+markers", name=name,
                                 line={"color": COLOURS.get(name, PALETTE[i % len(PALETTE)])},
                                 hovertemplate=f"{name}<br>%{{x}}: %{{y:.3g}}<extra></extra>"))
    fig.update_layout(title={"text": title, "x": 0}, height=400, margin={"l": 60, "r": 20, "t": 60, "b": 60},
                      legend={"orientation": "h", "y": -0.22, "x": 0})
    fig.update_xaxes(title_text=x_title)
    fig.update_yaxes(title_text=y_title, rangemode="tozero")
    return fig


def _time_ab(data: Dataset, s: dict[str, Any], progress=None) -> ExperimentResult:
    alphas = parse_list(s["alphas"], "alphas", float, 1e-6, 1.0)
    betas = parse_list(s["betas"], "betas", float, 1e-6, 1.0)
    rows, notes = [], []
    grid = [(a, b) for b in betas for a in alphas]
    for i, (a, b) in enumerate(grid):
        _tick(progress, i / len(grid), f"Ambiguity at α = {a:g}, β = {b:g}…")
        t, err, rel = _timed(data, "ambiguity", {"alpha": a, "beta": b}, s["seed"], s["repeats"])
        if err:
            notes.append(f"α = {a:g}, β = {b:g}: {err}")
        rows.append({"α": a, "β": b, "seconds here": t,
                     "groups": None if rel is None else rel.privacy.get("groups")})
    _tick(progress, 1.0, "done")
    frame = pd.DataFrame(rows)
    series = {f"β = {b:g}": [r["seconds here"] for r in rows if r["β"] == b] for b in betas}
    fig = _line_fig(f"Ambiguity construction time, {data.name} ({data.n:,} rows)", alphas, series, "α", "seconds")
    return ExperimentResult(
        figures=[("Ambiguity construction time against α and β", fig,
                  f"Median of {s['repeats']} runs on this machine, one line per β. The paper's times (C++, 2.8 GHz, "
                  "Occ-500K) are drawn in its Fig. 11 only; the extracted text prints none, so no ratio can be "
                  "given; its statement is that time is not linear in α or β.")],
        tables=[("Construction time", frame, "Seconds and the number of QI-groups built.")],
        notes=notes, data={"rows": rows, "alphas": alphas, "betas": betas})


def _time_density(data: Dataset, s: dict[str, Any], progress=None) -> ExperimentResult:
    ds = parse_list(s["densities"], "densities", int, 1, 100)
    betas = parse_list(s["betas"], "betas", float, 1e-6, 1.0)
    rows, notes = [], []
    for i, d in enumerate(ds):
        dense = densify(data, d, s["seed"])
        for b in betas:
            _tick(progress, (i + 0.5) / len(ds), f"d = {d}, β = {b:g}…")
            t, err, rel = _timed(dense, "ambiguity", {"alpha": s["alpha"], "beta": b}, s["seed"], s["repeats"])
            if err:
                notes.append(f"d = {d}, β = {b:g}: {err}")
            rows.append({"d": d, "β": b, "seconds here": t,
                         "groups": None if rel is None else rel.privacy.get("groups")})
    _tick(progress, 1.0, "done")
    series = {f"β = {b:g}": [r["seconds here"] for r in rows if r["β"] == b] for b in betas}
    fig = _line_fig(f"Ambiguity construction time against density, {data.name}", ds, series,
                    "density d (about (100/d)% of the rows distinct)", "seconds")
    fig.update_xaxes(tickvals=ds)
    return ExperimentResult(
        figures=[("Ambiguity construction time against density d", fig,
                  "Each table is the loaded one made d times denser (rows drawn from its first ⌈n/d⌉). The paper "
                  "finds sparser tables faster; its times are drawn only (no numbers in the text).")],
        tables=[("Construction time", pd.DataFrame(rows), f"Median of {s['repeats']} runs, α = {s['alpha']:g}.")],
        notes=notes, data={"rows": rows, "densities": ds, "betas": betas})


def _loss_density(data: Dataset, s: dict[str, Any], progress=None) -> ExperimentResult:
    ds = parse_list(s["densities"], "densities", int, 1, 100)
    series: dict[str, list] = {"Ambiguity": [], "PriView": []}
    rows, notes = [], []
    for i, d in enumerate(ds):
        _tick(progress, i / len(ds), f"d = {d}: queries, Ambiguity and PriView…")
        dense = densify(data, d, s["seed"])
        wl = seed004(dense, s["selectivities"], s["attrs"], s["groupbys"], s["max_cells"], s["seed"])
        for label, mech in (("Ambiguity", "ambiguity"), ("PriView", "priview")):
            try:
                rel = mechanisms.sanitize(dense, mech, {"alpha": s["alpha"], "beta": s["beta"]}, s["seed"])
                v = _mean(evaluate_release(rel, wl))
                groups, unplaced = rel.privacy.get("groups"), rel.privacy.get("unplaced", 0)
            except WorkbenchError as exc:
                notes.append(f"{label} at d = {d}: {exc}")
                v, groups, unplaced = None, None, None
            series[label].append(v)
            rows.append({"d": d, "mechanism": label, "mean relative error": v, "groups": groups,
                         "mean group size": (dense.n - (unplaced or 0)) / groups if groups else None,
                         "unplaced records": unplaced})
    _tick(progress, 1.0, "done")
    fig = _line_fig(f"Information loss against density, {data.name}, α = {s['alpha']:g}, β = {s['beta']:g}", ds,
                    series, "density d (about (100/d)% of the rows distinct)", "mean relative error")
    fig.update_xaxes(tickvals=ds)  # d is a whole number: no ticks between the densities run
    return ExperimentResult(
        figures=[("Information loss against density: (a) Ambiguity, (b) PriView", fig,
                  "Mean relative error of seed 004's GROUP BY cells on the loaded table made d times denser. The "
                  "paper finds denser tables less accurate for both, because their QI-groups are larger.")],
        tables=[("Information loss", pd.DataFrame(rows), "Per density and mechanism, with the groups built.")],
        notes=notes, data={"densities": ds, "errors": series, "rows": rows})


_DENS = Param("densities", "d", "Densities d to compare, comma separated (1 = the table as loaded).", "1,2,3,4,5",
              kind="text", paper="seed 004 §9.1: 1 ≤ d ≤ 5")
_REPEATS = Param("repeats", "runs", "Runs per setting (the median is reported).", 1, kind="int", low=1, high=20)
_ALPHAS = Param("alphas", "α", "Values of α, comma separated.", "0.05,0.1,0.2", kind="text",
                paper="seed 004 Fig. 11: not printed in the text")
_BETAS_T = Param("betas", "β", "Values of β, comma separated.", "0.025,0.05,0.1", kind="text",
                 paper="seed 004 Fig. 12: 0.1, 0.05, 0.025")

EXPERIMENTS += [
    Experiment("seed004-time-vs-alpha-beta", "Ambiguity: construction time against α and β (seed 004 Fig. 11)",
               "seed 004 §9.2, Fig. 11", "Seconds to build the Ambiguity scheme on the loaded table at each α and β.",
               (_ALPHAS, _BETAS_T, _REPEATS, SEED), _time_ab, page="papers", order=53),
    Experiment("seed004-time-vs-density", "Ambiguity: construction time against density (seed 004 Fig. 12)",
               "seed 004 §9.2, Fig. 12", "Seconds to build the Ambiguity scheme on denser copies of the loaded table "
               "(Occ-100K-d), one line per β.", (ALPHA, _DENS, _BETAS_T, _REPEATS, SEED), _time_density, page="papers", order=54),
    Experiment("seed004-loss-vs-density", "Ambiguity and PriView: information loss against density (seed 004 Fig. 15)",
               "seed 004 §9.3, Fig. 15", "Seed 004's GROUP BY workload answered from Ambiguity and PriView on denser "
               "copies of the loaded table (Occ-100K-d).",
               (ALPHA, BETA, _DENS, SELECTIVITIES, _ATTRS_A, GROUPBYS, CELLS, SEED), _loss_density, page="papers", order=55),
]


# ------------------------------------------------------------------ beyond the paper: PriView's Theorem 6 and the repair
def _priview_exact(data: Dataset, s: dict[str, Any], progress=None) -> ExperimentResult:
    _tick(progress, 0.0, "Drawing the GROUP BY queries…")
    wl = seed004(data, s["selectivities"], s["attrs"], s["groupbys"], s["max_cells"], s["seed"])
    runs = (("PriView (paper's construction)", "priview", {"construction": "paper"}),
            ("PriView (construction=exact)", "priview", {"construction": "exact"}),
            ("Ambiguity", "ambiguity", {}))
    rows, notes, series = [], [], {}
    for i, (label, mech, extra) in enumerate(runs):
        _tick(progress, 0.1 + 0.3 * i, f"{label}…")
        try:
            rel = mechanisms.sanitize(data, mech, {"alpha": s["alpha"], "beta": s["beta"], **extra}, s["seed"])
        except WorkbenchError as exc:
            notes.append(f"{label}: {exc}")
            continue
        ev = evaluate_release(rel, wl)
        p = rel.privacy
        err = _mean(ev)
        series[label] = err
        rows.append({"release": label, "records published": rel.rows_out, "groups": p.get("groups"),
                     "split": rel.published.get("split", ""),
                     "exact presence (max)": p.get("max_presence"),
                     "exact association (max)": p.get("max_association"),
                     "Theorem 6 presence": p.get("max_presence_paper"),
                     "Theorem 6 association": p.get("max_association_paper"),
                     "meets α and β exactly": bool(p.get("alpha_met") and p.get("beta_met")),
                     "mean relative error": err})
    _tick(progress, 1.0, "done")
    fig = go.Figure(go.Bar(x=list(series), y=list(series.values()),
                           marker_color=[COLOURS.get("PriView"), PALETTE[3], COLOURS.get("Ambiguity")][:len(series)],
                           hovertemplate="%{x}<br>mean relative error %{y:.3f}<extra></extra>"))
    fig.update_layout(title={"text": f"Information loss, {data.name}, α = {s['alpha']:g}, β = {s['beta']:g}", "x": 0},
                      height=380, margin={"l": 60, "r": 20, "t": 60, "b": 60})
    fig.update_yaxes(title_text="mean relative error of the GROUP BY cells", rangemode="tozero")
    return ExperimentResult(
        figures=[("PriView as published vs PriView repaired vs Ambiguity", fig,
                  "The same GROUP BY workload answered from each release. The repaired construction keeps its "
                  "promise (exact presence and association from the published tables within α and β) at the cost "
                  "of larger groups and records left out; left-out records count as undercounts here.")],
        tables=[("Privacy and loss", pd.DataFrame([{k: _rounded(v) if k in _MEASURES else v for k, v in r.items()}
                                                   for r in rows]),
                 "Exact measures are computed from the published tables over all possible worlds "
                 "(core.mechanisms.ambiguity_algorithm.priview_stats); Theorem 6's are the paper's formulas. "
                 "Rounded to 10 decimals: a release meets α and β when its measure is at most α or β plus 1e-12 "
                 "of float rounding.")],
        notes=notes, data={"rows": rows, "errors": series, "alpha": s["alpha"], "beta": s["beta"]})


_MEASURES = ("exact presence (max)", "exact association (max)", "Theorem 6 presence", "Theorem 6 association")


def _rounded(v: float | None) -> float | None:
    """An exact measure rounded to 10 decimals: the release compares it with α or β allowing 1e-12 of float
    rounding, so 0.10000000000068 meets β = 0.1 and is shown as 0.1 (the figure the comparison accepts)."""
    return None if v is None else round(float(v), 10)


EXPERIMENTS.append(Experiment(
    "seed004-priview-exact", "PriView: Theorem 6 against the exact measures, and the repaired construction",
    "seed 004 §8, Theorem 6 (beyond the paper)",
    "PriView's paper construction, PriView with construction=exact and Ambiguity at the same α and β: exact "
    "presence and association read from the published tables, Theorem 6's values, records published and the "
    "information loss on seed 004's workload.",
    (ALPHA, BETA, SELECTIVITIES, _ATTRS_A, GROUPBYS, CELLS, SEED), _priview_exact, page="papers", order=56))
