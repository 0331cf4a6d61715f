"""Chernoff tail bounds against the exact tail of a sum of Bernoulli trials (seed 001).

(lambda, delta)-reconstruction privacy (seed 001) tests a micro group by
bounding the tails of an observed count ``O_x``, a sum of independent
Bernoulli ("Poisson") trials with mean ``mu``, with the Chernoff bounds of
Theorem 4.8.  This module gives the bounds and the exact tails they bound.

The exact tail takes *groups* of identically distributed trials
(``counts[i]`` trials with success probability ``probs[i]``), because under
uniform perturbation the trials of a micro group are not identical: the
``o_x`` records holding ``x`` publish ``x`` with probability ``p + (1-p)/m``,
the others with ``(1-p)/m`` (a sum of two binomials).
"""

from __future__ import annotations

import numpy as np

from . import Bound, Curve
from ._numeric import ceil_int, floor_int
from ..errors import ParameterError
from ..params import Param

__all__ = [
    "sum_pmf",
    "exact_tail",
    "chernoff_upper",
    "chernoff_lower",
    "simplified_upper",
    "simplified_lower",
    "BOUNDS",
]

#: Above this many multiply-adds the convolution switches to FFT.
_DIRECT_CONVOLVE_MAX = 4_000_000


def _groups(counts, probs) -> tuple[np.ndarray, np.ndarray]:
    """Validate groups of trials: int64 counts >= 0 and probabilities in [0, 1]."""
    counts = np.atleast_1d(np.asarray(counts))
    probs = np.atleast_1d(np.asarray(probs, dtype=float))
    if counts.ndim != 1 or counts.shape != probs.shape or counts.size == 0:
        raise ParameterError(
            "counts and probs must be two lists of the same non-zero length "
            f"(one entry per group of trials). Got {counts.size} counts and {probs.size} probabilities."
        )
    if not (np.all(np.isfinite(counts.astype(float))) and np.all(counts >= 0)
            and np.all(np.mod(counts, 1) == 0)):
        raise ParameterError(f"Every group size in counts must be a whole number >= 0. Got {counts.tolist()}.")
    if not (np.all(np.isfinite(probs)) and np.all(probs >= 0) and np.all(probs <= 1)):
        raise ParameterError(f"Every success probability in probs must be in [0, 1]. Got {probs.tolist()}.")
    return counts.astype(np.int64), probs



# scipy is imported where it is used: ``import core.bounds`` (the CLI's start, every mechanism) stays light
def _stats():
    from scipy import stats

    return stats


def _fftconvolve(a, b):
    from scipy.signal import fftconvolve

    return fftconvolve(a, b)


def _xlogy(x, y):
    from scipy.special import xlogy

    return xlogy(x, y)


def sum_pmf(counts, probs) -> np.ndarray:
    """Exact distribution of a sum of independent binomials.

    Parameters
    ----------
    counts : sequence of int
        Number of trials in each group (``>= 0``).
    probs : sequence of float
        Success probability of each group's trials, in ``[0, 1]``.

    Returns
    -------
    numpy.ndarray
        ``pmf[k] = P[S = k]`` for ``k = 0..sum(counts)``, where
        ``S = sum_i Binomial(counts[i], probs[i])``.

    Notes
    -----
    Each group's pmf comes from :mod:`scipy.stats.binom`; groups are combined
    by direct convolution, which is exact up to rounding.  For very large
    groups (more than ``4e6`` multiply-adds) an FFT convolution is used;
    its absolute error is about ``1e-16``, so tails far below that lose
    relative precision (irrelevant against any delta a user would choose).

    References
    ----------
    seed 001, Lemma 1 and Theorem 4.8 (O_x is a sum of independent Poisson
    trials); MECHANISMS.md §2.

    Examples
    --------
    >>> np.round(sum_pmf([1, 1], [0.5, 0.5]), 3)
    array([0.25, 0.5 , 0.25])
    """
    counts, probs = _groups(counts, probs)
    pmf = np.ones(1)
    for n, q in zip(counts, probs):
        part = _stats().binom.pmf(np.arange(n + 1), n, q)
        if pmf.size == 1:
            pmf = part * pmf[0]
        elif pmf.size * part.size <= _DIRECT_CONVOLVE_MAX:
            pmf = np.convolve(pmf, part)
        else:
            pmf = np.clip(_fftconvolve(pmf, part), 0.0, None)
    return pmf


def exact_tail(counts, probs, threshold, side: str = "upper"):
    """Exact tail probability of a sum of independent binomials.

    Parameters
    ----------
    counts, probs : sequence
        Groups of trials, as in :func:`sum_pmf`.  One identical group
        (``[n], [q]``) is the plain ``Binomial(n, q)``.
    threshold : float or array_like
        Real threshold(s) ``t``.
    side : {"upper", "lower"}
        ``"upper"``: ``P[S >= t]``; ``"lower"``: ``P[S <= t]`` (both
        non-strict, as Theorem 4.8 states them).

    Returns
    -------
    float or numpy.ndarray
        One probability per threshold.

    Notes
    -----
    ``S >= t`` is ``S >= ceil(t)`` and ``S <= t`` is ``S <= floor(t)``; the
    rounding snaps values within ``1e-9`` (relative) of an integer first, so
    ``(1 + 0.3) * 30`` counts as 39 whatever its last bit.

    References
    ----------
    seed 001, Theorem 4.6 (the error events of the reconstruction are these
    tails of ``O_x``) and Theorem 4.8; MECHANISMS.md §2.

    Examples
    --------
    >>> round(exact_tail([10], [0.5], 8), 6)        # P[Bin(10, 1/2) >= 8] = 56/1024
    0.054688
    >>> round(exact_tail([2, 3], [0.9, 0.1], 0.5, side="lower"), 6)
    0.00729
    """
    if side not in {"upper", "lower"}:
        raise ParameterError(f"side must be 'upper' or 'lower'. Got {side!r}.")
    t = np.asarray(threshold, dtype=float)
    counts, probs = _groups(counts, probs)
    if counts.size == 1:
        # a single group is a plain binomial: scipy's cdf/sf, no pmf array needed
        n, q = int(counts[0]), float(probs[0])
        if side == "upper":
            out = np.asarray(_stats().binom.sf(ceil_int(t) - 1, n, q), dtype=float)
        else:
            out = np.asarray(_stats().binom.cdf(floor_int(t), n, q), dtype=float)
        return float(out) if out.ndim == 0 else out
    pmf = sum_pmf(counts, probs)
    total = pmf.size - 1
    if side == "upper":
        # tail[k] = P[S >= k]; summing from the small end keeps tiny tails precise
        tail = np.append(np.cumsum(pmf[::-1])[::-1], 0.0)
        k = np.clip(ceil_int(t), 0, total + 1)
    else:
        # tail[k + 1] = P[S <= k]; tail[0] = P[S <= -1] = 0
        tail = np.append(0.0, np.cumsum(pmf))
        k = np.clip(floor_int(t) + 1, 0, total + 1)
    out = np.minimum(tail[k], 1.0)
    return float(out) if out.ndim == 0 else out


def chernoff_upper(mu, e):
    """Chernoff upper-tail bound ``(exp(e) / (1+e)^(1+e))^mu >= P[X >= (1+e) mu]``, ``e > 0``.

    References
    ----------
    seed 001, Theorem 4.8, eq. (2).

    Examples
    --------
    >>> round(float(chernoff_upper(30, 0.3)), 4)
    0.2916
    """
    e = np.asarray(e, dtype=float)
    return np.exp(np.asarray(mu, dtype=float) * (e - _xlogy(1 + e, 1 + e)))


def chernoff_lower(mu, e):
    """Chernoff lower-tail bound ``(exp(-e) / (1-e)^(1-e))^mu >= P[X <= (1-e) mu]``, ``0 < e < 1``.

    At ``e = 1`` the formula's limit ``exp(-mu)`` is returned (``0^0 = 1``).

    References
    ----------
    seed 001, Theorem 4.8, eq. (3).

    Examples
    --------
    >>> round(float(chernoff_lower(30, 0.3)), 4)
    0.2209
    """
    e = np.asarray(e, dtype=float)
    return np.exp(np.asarray(mu, dtype=float) * (-e - _xlogy(1 - e, 1 - e)))


def simplified_upper(mu, e):
    """Simplified upper-tail bound ``exp(-mu e^2 / 3)``, valid for ``0 < e <= 1``.

    References
    ----------
    seed 001, Theorem 4.8, eq. (4).

    Examples
    --------
    >>> round(float(simplified_upper(30, 0.3)), 4)
    0.4066
    """
    e = np.asarray(e, dtype=float)
    return np.exp(-np.asarray(mu, dtype=float) * e**2 / 3.0)


def simplified_lower(mu, e):
    """Simplified lower-tail bound ``exp(-mu e^2 / 2)``, valid for ``0 < e < 1``.

    References
    ----------
    seed 001, Theorem 4.8, eq. (5).

    Examples
    --------
    >>> round(float(simplified_lower(30, 0.3)), 4)
    0.2592
    """
    e = np.asarray(e, dtype=float)
    return np.exp(-np.asarray(mu, dtype=float) * e**2 / 2.0)


#: Relative deviations drawn: the midpoints of 200 equal bins of (0, 1).
GRID_POINTS = 200


def _curve(prm: dict) -> Curve:
    n, q, e = prm["n"], prm["q"], prm["e"]
    mu = n * q
    grid = (np.arange(GRID_POINTS) + 0.5) / GRID_POINTS
    # identical trials: one group; the micro-group variant passes two groups
    groups = ([n], [q])
    series = {
        "exact_upper": exact_tail(*groups, (1 + grid) * mu, side="upper"),
        "exact_lower": exact_tail(*groups, (1 - grid) * mu, side="lower"),
        "chernoff_upper": chernoff_upper(mu, grid),
        "chernoff_lower": chernoff_lower(mu, grid),
        "simplified_upper": simplified_upper(mu, grid),
        "simplified_lower": simplified_lower(mu, grid),
    }
    at_e = {
        "exact_upper": exact_tail(*groups, (1 + e) * mu, side="upper"),
        "exact_lower": exact_tail(*groups, (1 - e) * mu, side="lower"),
        "chernoff_upper": float(chernoff_upper(mu, e)),
        "chernoff_lower": float(chernoff_lower(mu, e)),
        "simplified_upper": float(simplified_upper(mu, e)),
        "simplified_lower": float(simplified_lower(mu, e)),
    }
    notes = {"mu": mu, "e": e, "upper_threshold": (1 + e) * mu, "lower_threshold": (1 - e) * mu}
    notes.update({f"{k}_at_e": v for k, v in at_e.items()})
    return Curve(
        name="chernoff",
        title="Chernoff bounds against the exact tails of a count",
        x=grid,
        x_label="relative deviation e′ from the expected count μ (fraction of μ)",
        y_label="probability of a deviation of e′·μ or more",
        series=series,
        labels={
            "exact_upper": "exact P[X ≥ (1+e′)μ]",
            "exact_lower": "exact P[X ≤ (1−e′)μ]",
            "chernoff_upper": "Chernoff bound, upper tail",
            "chernoff_lower": "Chernoff bound, lower tail",
            "simplified_upper": "simplified bound exp(−μe′²/3), upper tail",
            "simplified_lower": "simplified bound exp(−μe′²/2), lower tail",
        },
        styles={
            "chernoff_upper": "dash",
            "chernoff_lower": "dash",
            "simplified_upper": "dot",
            "simplified_lower": "dot",
        },
        notes=notes,
        log_y=True,
        caption=(
            f"For a count of n = {n:,} trials with mean μ = {mu:g}, a deviation of e = {e:g} "
            f"(a count of {(1 + e) * mu:g} or more, or {(1 - e) * mu:g} or less) really happens with probability "
            f"{at_e['exact_upper']:.3g} above and {at_e['exact_lower']:.3g} below; the Chernoff "
            f"bounds say at most {at_e['chernoff_upper']:.3g} and {at_e['chernoff_lower']:.3g}. "
            f"The bounds always lie above the exact curves, so a privacy test built on them "
            f"(seed 001) can overstate the chance of a large reconstruction error."
        ),
    )


BOUNDS = [
    Bound(
        name="chernoff",
        title="Chernoff tails vs exact (reconstruction privacy)",
        paper="seed 001, Theorem 4.8 (Corollary 4.10)",
        params=(
            Param("n", "n", "Number of independent records (trials) behind the count, e.g. a micro group's size.",
                  100, kind="int", low=1, high=100000, safer="lower", paper="illustrative"),
            Param("q", "q", "Chance that one record shows the value after perturbation (f·p + (1−p)/m).",
                  0.3, low=0, high=1, closed="neither", step=0.01, paper="illustrative"),
            Param("e", "e", "Relative deviation from the expected count to read off (marked on the chart).",
                  0.3, low=0, high=1, closed="neither", step=0.01, paper="illustrative"),
        ),
        compute=_curve,
        explain=(
            "An attacker reconstructs a value's frequency in a small group of records from how often "
            "the value appears after perturbation. That count X adds up n independent yes/no "
            "outcomes with expected value μ = n q, and seed 001 measures privacy by how likely the "
            "count strays by a relative amount e from μ: if a large error stays likely, the "
            "reconstruction cannot be trusted. The paper does not compute these probabilities; it "
            "uses Chernoff's upper bounds (and simpler, looser versions of them). This chart puts "
            "those bounds beside the exact binomial probabilities. Because the bounds are always "
            "higher, a group the paper's test calls private may in truth be reconstructed "
            "accurately more often than the bound suggests."
        ),
        order=40,
    ),
]
