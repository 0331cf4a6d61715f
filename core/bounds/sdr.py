"""Small domain randomization: the error bound of Theorem 2 / eq. 11-12 (seed 002).

Uniform perturbation with retention ``p`` reconstructs every value's
relative frequency within

``eps(T) = 2 sqrt(ln(2/delta) / |T|) (m/(gamma - 1) + 1)``

with probability at least ``1 - delta`` (Theorem 2 taken with equality, eq.
11; ``m/(gamma-1) + 1 = 1/p``).  A partition ``Part = {T_1..T_k}`` perturbed
sub-table by sub-table has ``eps(Part) = sum_i |T_i|/|T| eps_i`` (eq. 12);
algorithm PP (:mod:`core.mechanisms.sdr`) minimises it.

The curve ``sdr-error`` draws eps against |T| for several domain sizes m at
the gamma of (rho1, rho2)-privacy, and, for a table given by its SA counts
(default: seed 002 Example 1's T, scaled to each |T|), eps(Part) of PP's
actual partition against UP's eps(T) on the same table.
"""

from __future__ import annotations

import numpy as np

from . import Bound, Curve
from ..errors import ParameterError, WorkbenchError, clip
from ..params import Param
from .retention import _frac, error_bound, gamma_from_rho  # error_bound: shared with the mechanism

__all__ = ["error_bound", "parse_counts", "BOUNDS"]

#: seed 002 Example 1: T = {12, 8, 6, 5, 4, 3, 1, 1, 1, 1} (|T| = 42, m = 10)
EXAMPLE1 = "12,8,6,5,4,3,1,1,1,1"


def parse_counts(text: str) -> np.ndarray:
    """SA counts written ``12,8,6,5`` (commas or spaces) as an int array; ParameterError otherwise."""
    parts = [p for p in str(text).replace(";", ",").replace(" ", ",").split(",") if p.strip()]
    try:
        counts = np.array([int(p) for p in parts], dtype=np.int64)
    except ValueError:
        raise ParameterError(f"The 'counts' parameter must list whole numbers of records per value, "
                             f"like {EXAMPLE1}. Got {clip(text)!r}.") from None
    if len(counts) < 2 or np.any(counts < 0) or counts.sum() == 0 or np.count_nonzero(counts) < 2:
        raise ParameterError(f"The 'counts' parameter needs at least two values with records (counts >= 0). "
                             f"Got {clip(text)!r}.")
    if len(counts) > 5000:
        raise ParameterError(f"The 'counts' parameter takes at most 5,000 values. Got {len(counts):,}.")
    return counts


def _ms(text: str) -> list[int]:
    try:
        ms = sorted({int(p) for p in str(text).replace(" ", ",").split(",") if p.strip()})
    except ValueError:
        ms = []
    if not ms or any(m < 1 or m > 100_000 for m in ms) or len(ms) > 8:
        raise ParameterError(f"The 'ms' parameter lists up to 8 domain sizes from 1 to 100,000, like 6,14,50. "
                             f"Got {clip(text)!r}.")
    return ms


def _curve(prm: dict) -> Curve:
    from ..mechanisms.sdr import plan  # the algorithm (the mechanism needs only .retention: no cycle)

    rho1, rho2, delta = prm["rho1"], prm["rho2"], prm["delta"]
    if not rho1 < rho2:
        raise ParameterError(
            f"The 'rho1' parameter of bound sdr-error must be smaller than 'rho2' ({_frac(rho2)}): "
            f"the posterior bound must exceed the prior bound. Got {_frac(rho1)}.")
    if prm["n_min"] >= prm["n_max"]:
        raise ParameterError(f"The 'n_min' parameter of bound sdr-error must be smaller than 'n_max' "
                             f"({prm['n_max']:,}). Got {prm['n_min']:,}.")
    gamma = gamma_from_rho(rho1, rho2)
    counts = parse_counts(prm["counts"])
    n0 = int(counts.sum())
    x = np.unique(np.geomspace(prm["n_min"], prm["n_max"], 40).round().astype(np.int64))
    series, labels, styles = {}, {}, {}
    share = counts / n0
    part, table, subtables = [], [], []
    for n in x:
        # the same distribution at |T| = n (largest remainder rounding keeps the total at n)
        raw = share * n
        c = np.floor(raw).astype(np.int64)
        c[np.argsort(-(raw - c), kind="stable")[: n - c.sum()]] += 1
        try:
            pl = plan(c, rho1, rho2, delta)
        except WorkbenchError:  # e.g. rounding left no protected value at this size: leave a gap
            part.append(np.nan), table.append(np.nan), subtables.append(np.nan)
            continue
        part.append(pl.eps_part)
        table.append(pl.eps_up)
        subtables.append(len(pl.size))
    m_counts = int(np.count_nonzero(counts))
    series["pp"] = np.array(part)
    labels["pp"] = f"PP: ε(Part) of the partition of your counts (m = {m_counts})"
    series["up"] = np.array(table)
    labels["up"] = f"UP on the same table: ε(T) (m = {m_counts})"
    styles["up"] = "dash"
    for m in _ms(prm["ms"]):
        if m == len(counts):
            continue  # the same line as "UP on the same table"
        key = f"m{m}"
        series[key] = error_bound(x, m, gamma, delta)
        labels[key] = f"ε(T) for m = {m}, γ = {gamma:.3g}"
        styles[key] = "dot"
    own = plan(counts, rho1, rho2, delta)
    notes = {
        "gamma": gamma,
        "delta": delta,
        "table_rows": n0,
        "eps_part_at_counts": own.eps_part,
        "eps_up_at_counts": own.eps_up,
        "subtables_at_counts": len(own.size),
        "retention_up_at_counts": own.p_up,
        "retention_pp_at_counts": own.retention,
    }
    return Curve(
        name="sdr-error",
        title="Small domain randomization: error bound ε against table size",
        x=x.astype(float),
        x_label="table size |T| (records)",
        y_label="ε: bound on the error of a value's reconstructed share (fraction of |T|)",
        series=series,
        labels=labels,
        styles=styles,
        notes=notes,
        log_x=True,
        log_y=True,
        caption=(
            f"With probability at least {1 - delta:.0%}, a value's reconstructed share of the table is within ε of "
            f"its true share (ε ≥ 1 says nothing). ε falls like 1/√|T| and grows with the domain size m: for your counts "
            f"({n0:,} records) PP splits the table into {len(own.size)} sub-table(s) with ε(Part) = "
            f"{own.eps_part:.3g} against {own.eps_up:.3g} for uniform perturbation of the whole table. "
            f"The gap between the solid and dashed lines is what small domains buy."
        ),
    )


BOUNDS = [
    Bound(
        name="sdr-error",
        title="SDR error bound ε(Part) against |T| (Theorem 2, eq. 11-12)",
        paper="seed 002, Theorem 2, eq. 11 and eq. 12",
        params=(
            Param("rho1", "ρ₁", "Values rarer than this share of the records are protected (prior bound).",
                  1 / 3, low=0, high=1, closed="neither", step=0.005, safer="higher",
                  paper="seed 002 Example 1: 1/3 (§6.2 uses 1/13)"),
            Param("rho2", "ρ₂", "An attacker's belief in a protected value must stay below this (posterior bound).",
                  2 / 3, low=0, high=1, closed="neither", step=0.005, safer="lower",
                  paper="seed 002 Example 1: 2/3 (§6.2 uses 1/6)"),
            Param("delta", "δ", "The bound may fail with this probability (confidence 1 − δ).",
                  0.05, low=0, high=1, closed="neither", step=0.01, paper="seed 002 §6.1: δ = 0.05"),
            Param("counts", "counts", "Records per sensitive value of a table to partition (scaled to each |T|).",
                  EXAMPLE1, kind="text", paper="seed 002 Example 1"),
            Param("ms", "m", "Domain sizes drawn for plain uniform perturbation, comma separated.",
                  "6,10,50", kind="text", paper="Example 1 (6, 10), §6.2 (50)"),
            Param("n_min", "|T|min", "Smallest table size on the chart.", 42, kind="int", low=2, high=10**7,
                  paper="Example 1: 42"),
            Param("n_max", "|T|max", "Largest table size on the chart.", 500_000, kind="int", low=3, high=10**8,
                  paper="§6: up to 500K"),
        ),
        compute=_curve,
        explain=(
            "Theorem 2 of seed 002 bounds how far uniform perturbation's reconstruction of a value's share can "
            "be from the truth: with probability 1 − δ the error is at most ε = 2 √(ln(2/δ)/|T|) · (m/(γ − 1) + 1) "
            "(eq. 11), where m is the number of distinct values and γ the amplification that (ρ₁, ρ₂)-privacy "
            "allows. Small domain randomization perturbs each sub-table T_i only over the values it contains "
            "(m_i small) and with its own γ_i, and its error bound is the size-weighted average "
            "ε(Part) = Σ |T_i|/|T| · ε_i (eq. 12). Algorithm PP chooses the partition that minimises ε(Part). "
            "The solid line is PP on the counts you type (by default Example 1's table, scaled to each size), "
            "the dashed line uniform perturbation of the same table, and the dotted lines plain uniform "
            "perturbation for other domain sizes. δ scales every ε by the same factor, so it never changes "
            "which partition PP picks."
        ),
        order=35,
    ),
]
