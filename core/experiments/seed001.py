"""Seed 001's experiments: violating micro groups (Figure 3), RP vs UP error, output perturbation (Tables 4-5).

* ``seed001-violations`` (Attacks page): the share of micro groups that
  plain uniform perturbation leaves open to reconstruction, against p,
  lambda, delta and the table size N (seed 001 §6.2, Figure 3, left
  panels), for the simplified and the full Chernoff test.
* ``seed001-error`` (Query error page): count-query relative error of RP
  (Algorithm 1) beside UP at the same p, against p, lambda or delta, with
  the violation shares before and after (Figure 3, right panels).
* :func:`output_perturbation`: the attack of §6.3 on epsilon-DP Laplace
  answers, drawn by ``pages/ui/attacks/output_perturbation.py``.

The parameters of Tables 4-5 were lost in extraction.  Reading them as
lambda in {0.2, 0.3} and epsilon in {0.1, 0.05} (columns: for epsilon =
0.1 the counts beyond +0.2, below -0.2, beyond +0.3, below -0.3, then the
same for epsilon = 0.05) reproduces all 112 printed counts within binomial
noise, and matches the text (Group 7 of EDU: 8 and 8 cases at lambda = 0.3,
"84% confidence"; Group 2 of OCC: 8 and 8 at lambda = 0.2);
``tests/test_reconstruction_experiments.py`` checks it.

References
----------
seed 001, §6.1 (Table 3 settings), §6.2 (Figure 3), §6.3 (Tables 4-5);
MECHANISMS.md §2.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from . import Experiment, ExperimentResult
from .. import mechanisms
from ..errors import ParameterError, WorkbenchError
from ..evaluate import evaluate_release
from ..figures import PALETTE, _base, mechanism_colour
from ..mechanisms.reconstruction import FAMILIES, analyse, group_labels, micro_groups
from ..params import Param
from ..table import Dataset, subset
from ..workload import seed000

#: seed 001 Table 3
P_VALUES = (0.14, 0.22, 0.30, 0.38, 0.46)
LAMBDA_VALUES = (0.1, 0.3, 0.5, 0.7, 0.9)
DELTA_VALUES = (0.1, 0.3, 0.5, 0.7, 0.9)
#: table sizes as shares of the loaded table (the paper: 100K ... 500K of CENSUS)
SIZE_SHARES = (0.2, 0.4, 0.6, 0.8, 1.0)

#: Tables 4-5 as read back (see the module docstring)
TABLE45_EPSILONS = (0.1, 0.05)
TABLE45_LAMBDAS = (0.2, 0.3)


def subsample(data: Dataset, n: int, seed: int = 0) -> Dataset:
    """A random subset of ``n`` rows (the paper's OCC-N samples), same labels and domains."""
    if n >= data.n:
        return data
    rows = np.sort(np.random.default_rng(seed).choice(data.n, size=n, replace=False))
    return replace(subset(data, rows, f"rows{n}@{seed}"), name=f"{data.name} (sample of {n:,})",
                   content_hash=f"{data.content_hash}|rows{n}@{seed}")


#: series names that stand for a mechanism: drawn in its fixed colour (core.figures.MECHANISM_COLOURS)
_MECHANISM_OF = {"UP": "uniform", "plain UP": "uniform", "RP (Algorithm 1)": "reconstruction"}


def _lines(x, series: dict[str, Sequence[float]], title: str, x_label: str, y_label: str,
           dashes: dict[str, str] | None = None) -> go.Figure:
    fig = go.Figure()
    for i, (name, y) in enumerate(series.items()):
        colour = _MECHANISM_OF.get(name)
        fig.add_trace(go.Scatter(
            x=list(x), y=[np.nan if v is None else v for v in y], name=name, mode="lines+markers",
            line={"color": mechanism_colour(colour) if colour else PALETTE[i % len(PALETTE)],
                  "dash": (dashes or {}).get(name, "solid")},
            hovertemplate=f"{name}<br>{x_label} = %{{x:.4g}}<br>%{{y:.4g}}<extra></extra>",
        ))
    return _base(fig, title, x_label, y_label)


# ----------------------------------------------------------------- Figure 3: violations
_SYMBOL = {"p": "p", "lambda": "λ", "delta": "δ", "N": "N"}


def violation_table(data: Dataset, p: float, lam: float, delta: float, seed: int = 0) -> pd.DataFrame:
    """Share of violating micro groups under plain UP, one row per (varied parameter, value, bound family).

    Each parameter of Table 3 is varied in turn with the others fixed at
    ``p``, ``lam``, ``delta`` and the whole table.  Deterministic except
    for the random subsamples of the N rows (``seed``).
    """
    rows = []
    base = {"p": p, "lambda": lam, "delta": delta}
    groups = micro_groups(data)

    def add(varied, value, d, prm):
        g = groups if d is data else micro_groups(d)
        for fam in FAMILIES:
            an = analyse(g, prm["p"], d.m, prm["lambda"], prm["delta"], fam)
            rows.append({
                "varied": varied, "value": value, "bound": fam, "records": d.n, "micro_groups": g.n_groups,
                "violating_groups": int(an.violating.sum()),
                "share_groups_violating": float(an.violating.mean()) if g.n_groups else 0.0,
                "share_records_in_violating_groups": float(g.size[an.violating].sum() / d.n),
                "groups_no_sample_can_fix": int(an.stuck.sum()),
            })

    for name, values in (("p", P_VALUES), ("lambda", LAMBDA_VALUES), ("delta", DELTA_VALUES)):
        for v in values:
            add(name, v, data, {**base, name: v})
    for share in SIZE_SHARES:
        n = int(round(share * data.n))
        add("N", n, subsample(data, n, seed), base)
    return pd.DataFrame(rows)


def _violations_run(data: Dataset, settings: dict, progress=None) -> ExperimentResult:
    p, lam, delta = settings["p"], settings["lambda"], settings["delta"]
    if progress:
        progress(0.1, "Testing every micro group…")
    table = violation_table(data, p, lam, delta, settings["seed"])
    if progress:
        progress(1.0, "done")
    figures = []
    labels = {"p": "retention p", "lambda": "relative error λ", "delta": "tail probability δ",
              "N": "records N in the table (random samples of the loaded table)"}
    fixed = {"p": f"λ = {lam:g}, δ = {delta:g}", "lambda": f"p = {p:g}, δ = {delta:g}",
             "delta": f"p = {p:g}, λ = {lam:g}", "N": f"p = {p:g}, λ = {lam:g}, δ = {delta:g}"}
    for varied in ("p", "lambda", "delta", "N"):
        part = table[table.varied == varied]
        series, dashes = {}, {}
        for fam in FAMILIES:
            sub = part[part.bound == fam]
            key = f"micro groups, {fam} bounds"
            series[key] = (100 * sub.share_groups_violating).tolist()
            rkey = f"records in them, {fam} bounds"
            series[rkey] = (100 * sub.share_records_in_violating_groups).tolist()
            dashes[rkey] = "dot"
        x = part[part.bound == FAMILIES[0]].value.tolist()
        fig = _lines(x, series, f"Open to reconstruction under plain UP, against {_SYMBOL[varied]} ({fixed[varied]})",
                     labels[varied], "share violating (%)", dashes)
        trend = part[part.bound == "simplified"].share_groups_violating
        figures.append((
            f"Violating micro groups against {_SYMBOL[varied]}", fig,
            f"Solid lines: percentage of micro groups failing the (λ, δ) test of Corollary 4.10 when the table is "
            f"published with plain uniform perturbation ({fixed[varied]}); dotted: the percentage of records that "
            f"live in those groups. The paper's Figure 3 finds the share growing with p, λ, δ and N; here it goes "
            f"from {100 * trend.iloc[0]:.2f}% to {100 * trend.iloc[-1]:.2f}% (simplified bounds). Algorithm 1 "
            f"brings every point to 0 wherever it can sample (see the table's last column)."))
    shown = table.copy()
    shown["share_groups_violating"] = (100 * shown.share_groups_violating).round(3)
    shown["share_records_in_violating_groups"] = (100 * shown.share_records_in_violating_groups).round(2)
    shown = shown.rename(columns={"share_groups_violating": "violating groups (%)",
                                  "share_records_in_violating_groups": "records in them (%)",
                                  "groups_no_sample_can_fix": "groups no sample can fix"})
    notes = []
    stuck = table[table.groups_no_sample_can_fix > 0]
    if len(stuck):
        notes.append(
            f"At {len(stuck)} of the {len(table)} settings some groups fail the test even with one randomised "
            f"record (the threshold for a one-value group is below 1): Algorithm 1 cannot repair them, and the "
            f"reconstruction mechanism refuses those settings.")
    if table.share_groups_violating.max() == 0:
        notes.append("No micro group violates at any of these settings: raise λ, δ or p to see the trends.")
    return ExperimentResult(figures=figures, tables=[(
        "Violating micro groups per setting", shown,
        "One row per varied parameter, value and bound family; the other parameters are held at the settings "
        "above. Percentages of micro groups and of records.")], notes=notes, data={"table": table})


# ----------------------------------------------------------------- Figure 3: RP vs UP error
def _error_run(data: Dataset, settings: dict, progress=None) -> ExperimentResult:
    """RP beside UP against p, λ or δ; ``vary = "all"`` sweeps the three in turn (the paper's "across all of")."""
    sweeps = ("p", "lambda", "delta") if settings["vary"] == "all" else (settings["vary"],)
    base = {"p": settings["p"], "lambda": settings["lambda"], "delta": settings["delta"],
            "bound": settings["bound"]}
    releases, seed = settings["releases"], settings["seed"]
    if progress:
        progress(0.0, "Generating the workload…")
    workload = seed000(data, queries=settings["queries"], seed=seed)
    large = workload.membership[1:].any(axis=0)
    small = workload.membership[0]
    groups = micro_groups(data)
    steps = len(sweeps) * 5 * releases
    done = [0]
    up_cache: dict[tuple, tuple] = {}  # UP depends on p and the release only: shared by the sweeps
    figures, tables, frames, notes = [], [], {}, []
    n_large, n_small = int(large.sum()), int(small.sum())
    for varied in sweeps:
        values = {"p": P_VALUES, "lambda": LAMBDA_VALUES, "delta": DELTA_VALUES}[varied]
        rows = []
        for v in values:
            prm = {**base, varied: v}
            errs = {"uniform": [], "reconstruction": []}
            privacy = None
            for r in range(releases):
                done[0] += 1
                if progress:
                    progress(done[0] / steps, f"{_SYMBOL[varied]} = {v:g}: release {r + 1} of {releases}")
                key = (prm["p"], r)
                if key not in up_cache:
                    ev = evaluate_release(mechanisms.sanitize(data, "uniform", {"p": prm["p"]}, seed + r), workload)
                    up_cache[key] = (_mean(ev.relative_error, large), _mean(ev.relative_error, small))
                errs["uniform"].append(up_cache[key])
                try:
                    rel = mechanisms.sanitize(data, "reconstruction", prm, seed + r)
                except WorkbenchError as exc:
                    notes.append(f"{_SYMBOL[varied]} = {v:g}: {exc}")
                    break
                privacy = rel.privacy
                ev = evaluate_release(rel, workload)
                errs["reconstruction"].append((_mean(ev.relative_error, large), _mean(ev.relative_error, small)))
            up = np.mean(errs["uniform"], axis=0)
            rp = np.mean(errs["reconstruction"], axis=0) if errs["reconstruction"] else (np.nan, np.nan)
            an = analyse(groups, prm["p"], data.m, prm["lambda"], prm["delta"], prm["bound"])
            rows.append({
                _SYMBOL[varied]: v,
                "UP error, large counts": up[0], "RP error, large counts": rp[0],
                "RP / UP (large)": rp[0] / up[0] if up[0] else np.nan,
                "UP error, small counts": up[1], "RP error, small counts": rp[1],
                "violating groups under UP (%)": 100 * float(an.violating.mean()),
                "violating groups under RP (%)": (100 * privacy["violating_groups_after"] / privacy["micro_groups"]
                                                  if privacy else np.nan),
                "records resampled (%)": 100 * privacy["share_records_resampled"] if privacy else np.nan,
            })
        frame = pd.DataFrame(rows)
        frames[varied] = frame
        x = frame[_SYMBOL[varied]].tolist()
        fixed = ", ".join(f"{_SYMBOL[k]} = {base[k]:g}" for k in ("p", "lambda", "delta") if k != varied)
        axis = {"p": "retention p", "lambda": "relative error λ", "delta": "tail probability δ"}[varied]
        fig_err = _lines(x, {"UP": frame["UP error, large counts"].tolist(),
                             "RP (Algorithm 1)": frame["RP error, large counts"].tolist()},
                         f"Count-query error, UP vs RP ({fixed}, {base['bound']} bounds)", axis,
                         "mean relative error (large-count queries)")
        fig_vio = _lines(x, {"UP": frame["violating groups under UP (%)"].tolist(),
                             "RP (Algorithm 1)": frame["violating groups under RP (%)"].tolist()},
                         f"Micro groups open to reconstruction ({fixed})", axis, "violating micro groups (%)")
        worst = np.nanmax(frame["RP / UP (large)"]) if frame["RP / UP (large)"].notna().any() else np.nan
        sym = _SYMBOL[varied]
        caption = (f"Mean relative error of {n_large:,} seed-000 queries with selectivity of at least 0.5%, averaged "
                   f"over {releases} release(s) per point, both mechanisms with the same p and seeds. The paper's "
                   f"finding is that RP costs little aggregate accuracy; here RP's error is at most "
                   f"{worst:.3g} times UP's." if np.isfinite(worst) else "RP could not be computed at these settings.")
        figures += [(f"Aggregate error against {sym}: RP beside UP", fig_err, caption),
                    (f"Violations against {sym}: RP beside UP", fig_vio,
                     "Share of micro groups failing the (λ, δ) test: under plain UP, and on the records Algorithm 1 "
                     "actually randomises (0 by construction).")]
        tables.append((f"RP vs UP per setting, against {sym}", frame,
                       f"Errors are mean relative errors |true − estimate| / true: 'large counts' are the {n_large:,} "
                       f"queries with selectivity of at least 0.5%, 'small counts' the {n_small:,} with true counts 1 "
                       f"to 10 (micro-level questions, where RP is meant to add error)."))
    data_out = {"tables": frames, "varied": settings["vary"]}
    if len(sweeps) == 1:
        data_out["table"] = frames[sweeps[0]]
    return ExperimentResult(figures=figures, tables=tables, notes=notes, data=data_out)


def _mean(err: np.ndarray, mask: np.ndarray) -> float:
    sel = mask & np.isfinite(err)
    return float(err[sel].mean()) if sel.any() else float("nan")


# ----------------------------------------------------------------- §6.3: output perturbation
def ratio_error_counts(x: int, y: int, epsilon: float, lambdas: Sequence[float], trials: int,
                       rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """How many of ``trials`` noisy ratios ``Y/X`` err beyond ``+lambda`` and below ``-lambda``.

    ``X = x + Lap(1/epsilon)`` answers "count of g", ``Y = y + Lap(1/epsilon)``
    "count of g AND SA = v" (sensitivity 1); the estimate ``Y/X`` of
    ``f = y/x`` has relative error ``(Y/X - f) / f``.

    References
    ----------
    seed 001 §1.1 Example 2 and §6.3.
    """
    b = 1.0 / epsilon
    xs = x + rng.laplace(0.0, b, trials)
    ys = y + rng.laplace(0.0, b, trials)
    f = y / x
    rel = (ys / xs - f) / f
    lam = np.asarray(lambdas, dtype=float)[:, None]
    return (rel[None, :] > lam).sum(axis=1), (rel[None, :] < -lam).sum(axis=1)


@dataclass(frozen=True, eq=False)
class OutputPerturbation:
    """Result of :func:`output_perturbation`: the paper's table and the long form behind it."""

    table: pd.DataFrame     # one row per group, the paper's columns
    long: pd.DataFrame      # one row per (group, epsilon, lambda, side)
    groups: np.ndarray      # micro group ids
    eligible: int           # groups with at least min_size records


def output_perturbation(data: Dataset, epsilons: Sequence[float] = TABLE45_EPSILONS,
                        lambdas: Sequence[float] = TABLE45_LAMBDAS, groups: int = 7, trials: int = 100,
                        min_size: int = 100, seed: int = 0) -> OutputPerturbation:
    """Seed 001 §6.3 (Tables 4-5): reconstruction from epsilon-DP Laplace answers.

    Picks the ``groups`` micro groups with the largest top-value frequency
    among those with at least ``min_size`` records (ties: larger group
    first), and for each epsilon draws ``trials`` noisy answer pairs
    (:func:`ratio_error_counts`).  A group violates (lambda, delta) at an
    epsilon when the share of errors beyond +lambda or below -lambda is
    under delta (the shares stand in for the bounds, as in the paper).

    Raises
    ------
    ParameterError
        If no micro group has ``min_size`` records.
    """
    if not epsilons or not lambdas:
        raise ParameterError("Choose at least one ε and one λ.")
    g = micro_groups(data)
    eligible = np.flatnonzero(g.size >= min_size)
    if not len(eligible):
        raise ParameterError(
            f"No micro group has at least {min_size:,} records (the largest has {int(g.size.max()):,}); "
            f"lower the minimum group size.")
    order = np.lexsort((-g.size[eligible], -g.top_frequency[eligible]))
    chosen = eligible[order[:groups]]
    rng = np.random.default_rng(seed)
    overall = data.sa_counts / data.n
    labels = group_labels(data, g, chosen)
    rows, long = [], []
    for i, gid in enumerate(chosen):
        x, y, v = int(g.size[gid]), int(g.top_count[gid]), int(g.top_value[gid])
        row = {"group": i + 1, "QI values": labels[i], "|g|": x, "top value": str(data.sa_labels[v]),
               "f in g": y / x, "f in T": float(overall[v])}
        for eps in epsilons:
            over, under = ratio_error_counts(x, y, eps, lambdas, trials, rng)
            for lam, o, u in zip(lambdas, over, under):
                row[f"ε={eps:g} λ={lam:g} > +λ"] = int(o)
                row[f"ε={eps:g} λ={lam:g} < −λ"] = int(u)
                long.append({"group": i + 1, "epsilon": eps, "lambda": lam, "above": int(o), "below": int(u),
                             "share_above": o / trials, "share_below": u / trials})
        rows.append(row)
    return OutputPerturbation(pd.DataFrame(rows), pd.DataFrame(long), chosen, len(eligible))


# ----------------------------------------------------------------- figures for the seed 001 views
def distinct_points(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct points ``(x, y)`` in (x, y) order, as a ``(2, k)`` array, and how often each occurs.

    What ``np.unique(np.stack([x, y]), axis=1, return_counts=True)``
    gives, from one lexsort of the two columns instead of a sort of the
    pairs as structured values: census 5M's 80,052 micro groups took 0.04 s
    a scatter trace that way, on every slider move of RP.
    """
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if not len(x):
        return np.empty((2, 0)), np.zeros(0, dtype=np.intp)
    order = np.lexsort((y, x))
    xs, ys = x[order], y[order]
    new = np.empty(len(order), dtype=bool)
    new[0] = True
    new[1:] = (xs[1:] != xs[:-1]) | (ys[1:] != ys[:-1])
    first = np.flatnonzero(new)
    return np.stack([xs[first], ys[first]]), np.diff(np.append(first, len(order))).astype(np.intp)


def group_scatter(size: np.ndarray, top_frequency: np.ndarray, resampled: np.ndarray, curve_f: np.ndarray,
                  curve_s: np.ndarray, family: str, max_points: int = 1_000) -> go.Figure:
    """Every micro group as a point (top frequency, size) with the size threshold curve above which it is open.

    Groups at the same point are drawn once, with their number in the
    hover.  Each trace (groups that pass, groups resampled) draws at most
    ``max_points`` distinct points, thinned evenly along their (share,
    size) order (deterministic), and its legend entry then says how many of
    how many are drawn.  Drawn as SVG, not WebGL: chromium without a GPU
    draws WebGL in software, and a WebGL scatter cost about 0.7 s of every
    census 5M slider move whatever its number of points (1.19 s a move with
    400 or 2,000 points), where SVG with at most 2,000 points answers in
    0.72 s.  The Sanitize page lists the resampled groups furthest over their threshold in its table,
    and all of them in a CSV download.
    """
    fig = go.Figure()
    size, top_frequency = np.asarray(size), np.asarray(top_frequency, dtype=float)
    for name, on, colour, shape in (("passes the test (plain UP)", ~np.asarray(resampled, bool), PALETTE[0], "circle"),
                                    ("resampled by Algorithm 1", np.asarray(resampled, bool), PALETTE[1], "diamond")):
        points, groups = distinct_points(top_frequency[on], size[on].astype(float))
        if points.shape[1] > max_points:
            name = f"{name}: {max_points:,} of {points.shape[1]:,} points drawn"
            keep = np.linspace(0, points.shape[1] - 1, max_points).astype(int)
            points, groups = points[:, keep], groups[keep]
        fig.add_trace(go.Scatter(
            x=points[0], y=points[1], customdata=groups, mode="markers", name=name,
            marker={"color": colour, "size": 5 if shape == "circle" else 7, "opacity": 0.55, "symbol": shape},
            hovertemplate="top value share %{x:.1%}<br>%{y:,} records<br>%{customdata:,} group(s)<extra>"
                          + name.split(":")[0] + "</extra>"))
    fig.add_trace(go.Scatter(x=curve_f, y=curve_s, mode="lines", name=f"size threshold s_g ({family} bounds)",
                             line={"color": "#333333", "dash": "dash"},
                             hovertemplate="f = %{x:.2f}: s_g = %{y:.1f} records<extra></extra>"))
    _base(fig, "Micro groups: size against the share of their most frequent value",
          "share f of the group's most frequent sensitive value", "records in the micro group (log scale)")
    fig.update_layout(legend={"y": -0.28})
    fig.update_yaxes(type="log")
    fig.update_xaxes(range=[0, 1.02], tickformat=".0%")
    return fig


def estimate_histogram(up: np.ndarray, rp: np.ndarray | None, f: float, lam: float, value: str,
                       steps: tuple[float, float | None] = (0.0, None)) -> go.Figure:
    """Distribution of the attacker's estimate of one value's share in a micro group, UP against RP.

    An estimate from n independent trials moves in steps of about
    ``1 / (n p)`` (one more record showing the value), so RP's estimates sit
    on a coarser lattice than UP's.  Each distribution gets bins at least as
    wide as its own step (``steps`` = (UP step, RP step)) and is drawn as a
    density, the share of releases per percentage point of the estimate,
    so the two stay comparable without aliasing spikes.
    """
    fig = go.Figure()
    lo = min(float(np.min(up)), float(np.min(rp)) if rp is not None else 1.0, (1 - lam) * f) - 0.02
    hi = max(float(np.max(up)), float(np.max(rp)) if rp is not None else 0.0, (1 + lam) * f) + 0.02
    for name, est, step, colour, hatch in (("plain UP", up, steps[0], mechanism_colour("uniform"), ""),
                                           ("RP (Algorithm 1)", rp, steps[1], mechanism_colour("reconstruction"), "/")):
        if est is None:
            continue
        width = max((hi - lo) / 60, step or 0.0)
        first = f - width * (np.ceil((f - lo) / width) + 0.5)  # f sits in the middle of a bin
        edges = first + width * np.arange(int(np.ceil((hi - first) / width)) + 1)
        counts, _ = np.histogram(est, bins=edges)
        density = counts / len(est) / (width * 100)
        centres = (edges[:-1] + edges[1:]) / 2
        fig.add_trace(go.Bar(
            x=centres, y=100 * density, width=width, name=name, marker_color=colour, opacity=0.6,
            marker_pattern_shape=hatch,  # RP hatched: the two differ by more than colour
            customdata=np.stack([edges[:-1], edges[1:], 100 * counts / len(est)], axis=1),
            hovertemplate="estimate %{customdata[0]:.1%} to %{customdata[1]:.1%}: %{customdata[2]:.1f}% of "
                          "releases<extra>" + name + "</extra>"))
    fig.update_layout(barmode="overlay", bargap=0)
    fig.add_vline(x=f, line={"color": "#333333", "width": 2},
                  annotation_text=f"true share {f:.0%}", annotation_position="top")
    for side, x in (("−λ", (1 - lam) * f), ("+λ", (1 + lam) * f)):
        fig.add_vline(x=x, line={"color": "#666666", "dash": "dash", "width": 1},
                      annotation_text=f"{side}", annotation_position="top")
    _base(fig, f"Attacker's estimate of the share of '{value}'",
          f"estimated share of '{value}' in the micro group (UP estimator; can fall outside 0..1)",
          "releases per percentage point of the estimate (%)")
    fig.update_layout(legend={"y": -0.3})
    fig.update_xaxes(tickformat=".0%")
    return fig


def output_perturbation_figure(long: pd.DataFrame, lam: float, delta: float) -> go.Figure:
    """Share of noisy ratios erring beyond +lambda and below -lambda per group and epsilon, with delta."""
    part = long[np.isclose(long["lambda"], lam)]
    fig = go.Figure()
    i = 0
    for eps, sub in part.groupby("epsilon", sort=False):
        for side, col, dash in (("above +λ", "share_above", None), ("below −λ", "share_below", "/")):
            fig.add_trace(go.Bar(
                x=[f"group {g}" for g in sub.group], y=100 * sub[col], name=f"ε = {eps:g}, error {side}",
                marker={"color": PALETTE[i % len(PALETTE)], "pattern": {"shape": dash or ""}},
                hovertemplate="%{x}<br>%{y:.0f}% of noisy answers<extra>" + f"ε = {eps:g}, {side}</extra>"))
        i += 1
    fig.add_hline(y=100 * delta, line={"color": "#666666", "dash": "longdash", "width": 1},
                  annotation_text=f"δ = {delta:g}", annotation_position="top right")
    fig.update_layout(barmode="group")
    _base(fig, f"How often the ratio Y/X misses the group's top share by more than λ = {lam:g}",
          "micro group (largest top-value share first)", "noisy answer pairs (%)")
    fig.update_layout(legend={"y": -0.3})
    return fig


# ----------------------------------------------------------------- registry
_SEED = Param("seed", "seed", "Random seed (row samples, releases).", 0, kind="int", low=0, high=2**31 - 1)

EXPERIMENTS = [
    Experiment(
        name="seed001-violations",
        title="Micro groups open to reconstruction under UP (seed 001 Figure 3)",
        paper="seed 001 §6.2, Figure 3",
        explain=(
            "How many micro groups (records sharing every QI value) does plain uniform perturbation leave open "
            "to the reconstruction attack? Each chart varies one parameter of the paper's Table 3 with the "
            "others held at the settings below, for the simplified and the full Chernoff test. The paper's "
            "defaults λ = δ = 0.3 leave no group of Adult open, so the settings start at λ = δ = 0.5."),
        params=(
            Param("p", "p", "Retention held fixed while λ, δ or N vary.", 0.46, low=0, high=1, closed="right",
                  step=0.01, safer="lower", paper="seed 001 Table 3: 0.46"),
            Param("lambda", "λ", "Relative error held fixed while p, δ or N vary.", 0.5, low=0, high=1,
                  closed="neither", step=0.05, safer="higher", paper="seed 001 Table 3: 0.3"),
            Param("delta", "δ", "Tail probability held fixed while p, λ or N vary.", 0.5, low=0, high=1,
                  closed="neither", step=0.05, safer="higher", paper="seed 001 Table 3: 0.3"),
            _SEED,
        ),
        run=_violations_run,
        page="attacks",
        order=20,
    ),
    Experiment(
        name="seed001-error",
        title="Reconstruction privacy vs uniform perturbation: query error (seed 001 Figure 3)",
        paper="seed 001 §6.2, Figure 3",
        explain=(
            "Algorithm 1 (RP) randomises fewer independent records in micro groups that are open to "
            "reconstruction. Does that cost accuracy on ordinary count queries? This runs both mechanisms with "
            "the same retention p and seeds on a seed-000 workload and compares the mean relative error of "
            "queries with selectivity of at least 0.5% (the paper's aggregate queries), against p, λ or δ."),
        params=(
            Param("vary", "vary", "Parameter on the x axis (the paper's Table 3 values); all: the three sweeps in "
                  "turn.", "p", kind="choice", choices=("p", "lambda", "delta", "all")),
            Param("p", "p", "Retention (when λ or δ vary).", 0.46, low=0, high=1, closed="right", step=0.01,
                  safer="lower", paper="seed 001 Table 3: 0.46"),
            Param("lambda", "λ", "Relative error (when p or δ vary).", 0.5, low=0, high=1, closed="neither",
                  step=0.05, safer="higher", paper="seed 001 Table 3: 0.3"),
            Param("delta", "δ", "Tail probability (when p or λ vary).", 0.5, low=0, high=1, closed="neither",
                  step=0.05, safer="higher", paper="seed 001 Table 3: 0.3"),
            Param("bound", "bound", "Chernoff bounds of the test.", "simplified", kind="choice", choices=FAMILIES),
            Param("queries", "Q", "Queries in the workload (half small counts, half large).", 2000, kind="int",
                  low=100, high=20000, paper="seed 001 §6.1: 5,000"),
            Param("releases", "R", "Releases per point (errors are averaged).", 3, kind="int", low=1, high=20),
            _SEED,
        ),
        run=_error_run,
        page="query_error",
        order=20,
    ),
]

__all__ = ["subsample", "violation_table", "ratio_error_counts", "output_perturbation", "OutputPerturbation",
           "group_scatter", "estimate_histogram", "output_perturbation_figure",
           "EXPERIMENTS", "P_VALUES", "LAMBDA_VALUES", "DELTA_VALUES", "TABLE45_EPSILONS", "TABLE45_LAMBDAS"]


def _output_run(data: Dataset, s: dict, progress=None) -> ExperimentResult:
    if progress:
        progress(0.1, "Drawing noisy answers…")
    out = output_perturbation(data, groups=s["groups"], trials=s["trials"], min_size=s["min_size"], seed=s["seed"])
    if progress:
        progress(1.0, "done")
    fig = output_perturbation_figure(out.long, TABLE45_LAMBDAS[-1], 0.1)
    return ExperimentResult(
        figures=[("Reconstruction from ε-DP answers (seed 001 Tables 4-5)", fig,
                  "Per micro group, how many of the noisy reconstructions fall beyond ±λ of the true frequency.")],
        tables=[("Micro groups (the paper's columns)", out.table,
                 f"The {len(out.table)} micro groups with the largest top-value frequency among the {out.eligible:,} "
                 f"with at least {s['min_size']} records; counts out of {s['trials']} noisy answer pairs.")],
        data={"table": out.table})


EXPERIMENTS.append(Experiment(
    name="seed001-output-perturbation",
    title="Reconstruction from Laplace answers (seed 001 Tables 4-5)",
    paper="seed 001 §6.3, Tables 4-5",
    explain="The micro groups most concentrated on one value; for each ε, how often the frequency reconstructed "
            "from two noisy counts errs by more than λ either way.",
    params=(Param("groups", "g", "Micro groups shown.", 7, kind="int", low=1, high=50, paper="seed 001 §6.3: 7"),
            Param("trials", "trials", "Noisy answer pairs per group and ε.", 100, kind="int", low=10, high=10_000,
                  paper="seed 001 §6.3: 100"),
            Param("min_size", "|g|", "Smallest micro group considered.", 100, kind="int", low=1, high=100_000,
                  paper="seed 001 §6.3: not legible; 100 here"),
            Param("seed", "seed", "Seed of the noise.", 0, kind="int", low=0, high=2**31 - 1)),
    run=_output_run, page="papers"))

