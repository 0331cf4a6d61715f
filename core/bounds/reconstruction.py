"""(lambda, delta)-reconstruction privacy of one micro group: tails and the size threshold (seed 001).

Two curves:

* ``reconstruction-tails``: for a micro group of ``n`` records whose value x
  has frequency ``f``, the chance that an attacker's estimate ``F'_x`` (the
  UP estimator of Lemma 1) misses ``f`` by more than a relative error
  ``lambda'`` upwards or downwards, against ``lambda'``: the exact
  probabilities beside the full and simplified Chernoff bounds that the
  paper's test uses (Corollary 4.9), with delta as a horizontal line.  The
  observed count ``O_x`` is a sum of two binomials: the ``f n`` records
  holding x show it with probability ``p + (1-p)/m``, the others with
  ``(1-p)/m``; Theorem 4.6 turns the estimate's error into a deviation of
  ``O_x`` from its mean.
* ``reconstruction-threshold``: the size threshold ``s_g`` of Theorems 5.11
  (full bounds) and 5.13 (simplified) against the group's top frequency
  ``f``: a group with more records than the curve is open to
  reconstruction, and Algorithm 1 randomises only that many of its records.

References
----------
seed 001, Theorems 4.6, 4.8, 5.11, 5.13, Corollaries 4.9 and 4.10;
MECHANISMS.md §2.
"""

from __future__ import annotations

import math

import numpy as np

from . import Bound, Curve
from ._numeric import ceil_int, floor_int
from .chernoff import exact_tail
from ..params import Param

GRID_POINTS = 200


def exact_error_tails(n: int, count: int, p: float, m: int, lam) -> tuple[np.ndarray, np.ndarray]:
    """Exact ``Pr[F'_x - f_x > lam f_x]`` and ``Pr[F'_x - f_x < -lam f_x]`` in a micro group.

    Parameters
    ----------
    n : int
        Records (independent trials) in the group.
    count : int
        Records holding x (``f_x = count / n``), ``1 <= count <= n``.
    p, m : float, int
        Retention and SA domain size.
    lam : float or array_like
        Relative error(s).

    Notes
    -----
    By Theorem 4.6 the events are ``O_x > (1 + e) mu`` and
    ``O_x < (1 - e) mu`` with ``mu = n (f p + q)``,
    ``e = lam f p / (f p + q)``, ``q = (1-p)/m``; ``O_x`` is
    ``Binomial(count, p + q) + Binomial(n - count, q)``.  The inequalities
    are strict, as in Definition 4.5.

    References
    ----------
    seed 001, Definition 4.5, Lemma 1, Theorem 4.6.
    """
    from ..mechanisms.reconstruction import conversion_e

    q = (1 - p) / m
    f = count / n
    mu = n * (f * p + q)
    e = conversion_e(f, p, m, np.asarray(lam, dtype=float))
    groups = ([count, n - count], [p + q, q])
    upper = exact_tail(*groups, floor_int((1 + e) * mu) + 1, side="upper")
    lower = exact_tail(*groups, ceil_int((1 - e) * mu) - 1, side="lower")
    return np.asarray(upper, dtype=float), np.asarray(lower, dtype=float)


def _tails(prm: dict) -> Curve:
    from ..mechanisms.reconstruction import conversion_e, tail_bounds, threshold

    n, f_in, m, p, lam, delta = prm["n"], prm["f"], prm["m"], prm["p"], prm["lambda"], prm["delta"]
    count = min(max(int(round(f_in * n)), 1), n)
    f = count / n
    grid = (np.arange(GRID_POINTS) + 0.5) / GRID_POINTS
    ex_up, ex_low = exact_error_tails(n, count, p, m, grid)
    full_up, full_low = tail_bounds(n, f, p, m, grid, "full")
    simp_up, simp_low = tail_bounds(n, f, p, m, grid, "simplified")
    at = {}
    at["exact_upper"], at["exact_lower"] = (float(v) for v in exact_error_tails(n, count, p, m, lam))
    at["chernoff_upper"], at["chernoff_lower"] = (float(v) for v in tail_bounds(n, f, p, m, lam, "full"))
    at["simplified_upper"], at["simplified_lower"] = (float(v) for v in tail_bounds(n, f, p, m, lam, "simplified"))
    s_simple = float(threshold(f, p, m, lam, delta, "simplified"))
    s_full = float(threshold(f, p, m, lam, delta, "full"))
    passes = {fam: min(at[f"{k}_upper"], at[f"{k}_lower"]) >= delta
              for fam, k in (("simplified", "simplified"), ("full", "chernoff"))}
    exact_private = min(at["exact_upper"], at["exact_lower"]) >= delta
    notes = {
        "records_with_value": count,
        "f_used": f,
        "mu": n * (f * p + (1 - p) / m),
        "e": float(conversion_e(f, p, m, lam)),
        **{f"{k}_at_lambda": v for k, v in at.items()},
        "threshold_simplified": s_simple,
        "threshold_full": s_full,
        "private_simplified": passes["simplified"],
        "private_full": passes["full"],
        "exact_tails_at_least_delta": exact_private,
    }
    rounding = (f" (f·n = {f_in * n:g} rounded to {count} records)" if not math.isclose(f_in * n, count) else "")
    verdict = ("passes" if passes["simplified"] else "fails") + " the test with the simplified bounds and " + \
              ("passes" if passes["full"] else "fails") + " it with the full ones"
    return Curve(
        name="reconstruction-tails",
        title="Reconstruction error of a micro group: Chernoff bounds vs exact tails",
        x=grid,
        x_label="relative error λ′ of the attacker's estimate (share of the true frequency)",
        y_label="probability of an error beyond λ′",
        series={
            "exact_upper": ex_up,
            "exact_lower": ex_low,
            "chernoff_upper": full_up,
            "chernoff_lower": full_low,
            "simplified_upper": simp_up,
            "simplified_lower": simp_low,
        },
        labels={
            "exact_upper": "exact P[F′ − f > λ′f] (overestimate)",
            "exact_lower": "exact P[F′ − f < −λ′f] (underestimate)",
            "chernoff_upper": "full Chernoff bound, upper tail",
            "chernoff_lower": "full Chernoff bound, lower tail",
            "simplified_upper": "simplified bound, upper tail",
            "simplified_lower": "simplified bound, lower tail",
        },
        styles={"chernoff_upper": "dash", "chernoff_lower": "dash",
                "simplified_upper": "dot", "simplified_lower": "dot"},
        hlines={"δ": delta},
        vlines={"λ": lam},
        notes=notes,
        caption=(
            f"A micro group of n = {n:,} records with {count} holding the value (f = {f:.3g}){rounding}, "
            f"perturbed with p = {p:g} over m = {m:,} values. At λ = {lam:g} the attacker's estimate errs upward "
            f"with probability {at['exact_upper']:.3g} and downward with {at['exact_lower']:.3g}; the paper's "
            f"test uses the bounds instead ({at['simplified_upper']:.3g} and {at['simplified_lower']:.3g} "
            f"simplified, {at['chernoff_upper']:.3g} and {at['chernoff_lower']:.3g} full), and the group "
            f"{verdict} (δ = {delta:g}). The group is private while every curve stays above the δ line at λ; "
            f"its size threshold is {s_simple:.1f} records (simplified) or {s_full:.1f} (full). Where the "
            f"exact curves lie far below the bounds, the attacker does better than the test assumes."
        ),
    )


def _threshold(prm: dict) -> Curve:
    from ..mechanisms.reconstruction import threshold

    m, p, lam, delta = prm["m"], prm["p"], prm["lambda"], prm["delta"]
    lo = 1.0 / m
    x = lo + (1.0 - lo) * np.arange(GRID_POINTS + 1) / GRID_POINTS
    simple = threshold(x, p, m, lam, delta, "simplified")
    full = threshold(x, p, m, lam, delta, "full")
    at = {f: (float(threshold(f, p, m, lam, delta, "simplified")), float(threshold(f, p, m, lam, delta, "full")))
          for f in (1.0, 0.5)}
    return Curve(
        name="reconstruction-threshold",
        title="Micro-group size threshold s_g against the top value's frequency",
        x=x,
        x_label="largest relative frequency f of a value in the micro group (share of its records)",
        y_label="size threshold s_g (records)",
        series={"simplified": simple, "full": full},
        labels={"simplified": "simplified Chernoff bounds (Theorem 5.13)",
                "full": "full Chernoff bounds (Theorem 5.11)"},
        styles={"full": "dash"},
        notes={
            "threshold_simplified_f1": at[1.0][0],
            "threshold_full_f1": at[1.0][1],
            "threshold_simplified_f05": at[0.5][0],
            "threshold_full_f05": at[0.5][1],
        },
        log_y=True,
        caption=(
            f"With p = {p:g}, m = {m:,}, λ = {lam:g} and δ = {delta:g}, a micro group whose records all hold one "
            f"value stays (λ, δ)-reconstruction-private up to {at[1.0][0]:.1f} records ({at[1.0][1]:.1f} with the "
            f"full bounds); at f = 0.5 up to {at[0.5][0]:.1f} ({at[0.5][1]:.1f}). A group above the curve is open "
            f"to reconstruction: Algorithm 1 randomises only about s_g of its records and copies them back to "
            f"its size. The more one value dominates, the fewer records it takes."
        ),
    )


_M = Param("m", "m", "Number of distinct sensitive values in the table.", 14, kind="int", low=2, high=100000,
           paper="Adult occupation: 14 (seed 001 OCC: 50)")
_P = Param("p", "p", "Retention: chance a record keeps its true value.", 0.46, low=0, high=1, closed="right",
           step=0.01, safer="lower", paper="seed 001 Table 3: default 0.46")
_LAMBDA = Param("lambda", "λ", "Relative error of the attacker's estimate that should stay likely.", 0.3,
                low=0, high=1, closed="neither", step=0.05, safer="higher", paper="seed 001 Table 3: default 0.3")
_DELTA = Param("delta", "δ", "Smallest acceptable chance (bound) of an error beyond λ in each direction.", 0.3,
               low=0, high=1, closed="neither", step=0.05, safer="higher", paper="seed 001 Table 3: default 0.3")

BOUNDS = [
    Bound(
        name="reconstruction-tails",
        title="Reconstruction of a micro group: Chernoff bounds vs exact",
        paper="seed 001, Theorem 4.6, Corollaries 4.9 and 4.10",
        params=(
            Param("n", "|g|", "Records in the micro group (all sharing the target's QI values).", 100, kind="int",
                  low=1, high=100000, safer="lower", paper="illustrative"),
            Param("f", "f", "Share of the group's records holding the value the attacker estimates.", 0.6,
                  low=0, high=1, closed="right", step=0.01, safer="lower", paper="illustrative"),
            _M, _P, _LAMBDA, _DELTA,
        ),
        compute=_tails,
        explain=(
            "An attacker who knows a person's QI values looks at the records sharing all of them (a micro "
            "group) and estimates how often each sensitive value occurs there, undoing uniform perturbation "
            "with the standard estimator. If the group is large and one value dominates, the estimate is "
            "accurate and the person's value is exposed. Seed 001 calls a group (λ, δ)-reconstruction-private "
            "when an error beyond λ (relative) remains at least δ likely both ways, and tests it with "
            "Chernoff bounds on those chances. This chart shows the bounds beside the exact chances: the "
            "test passes while the bounds at λ stay above δ."
        ),
        order=45,
    ),
    Bound(
        name="reconstruction-threshold",
        title="Micro-group size threshold (reconstruction privacy)",
        paper="seed 001, Theorems 5.11 and 5.13",
        params=(_M, _P, _LAMBDA, _DELTA),
        compute=_threshold,
        explain=(
            "The (λ, δ) test of seed 001 reduces to a size limit: a micro group is private as long as it has "
            "at most s_g records, where s_g shrinks as its most frequent value dominates, as the retention p "
            "grows, and as λ and δ grow. Algorithm 1 keeps larger groups private by randomising only s_g of "
            "their records and copying the results back to the group's size."
        ),
        order=46,
    ),
]
