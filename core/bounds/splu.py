"""SPLU-Gen's guarantees: small-sum privacy and large-sum utility (seed 000).

Under SPLU-Gen with ``p = 1/gamma`` the published count ``f'`` of a
sensitive value held by ``f`` records is ``Binomial(gamma f, 1/gamma)``
(seed 000 §4, the distribution behind Theorem 2), so both guarantees are
tail probabilities of one binomial and can be computed exactly:

* small-sum privacy (Lemma 2 / Theorem 4, Fig. 5, the "binomial sawtooth"):
  the chance that a small count is published with a large relative error;
* large-sum utility (Theorem 3 / Lemma 1, Fig. 4): the chance that a large
  count is published with a relative error of ``eps`` or more.  The paper's
  bound (Theorem 3) is wrong; see :func:`published_bound`.

The pure functions here are also what the ``splu`` mechanism's privacy
checks call.
"""

from __future__ import annotations

import math

import numpy as np

from . import Bound, Curve
from ._numeric import ceil_int, floor_int
from ..params import Param

__all__ = [
    "privacy_tail",
    "small_sum_privacy",
    "utility_tail",
    "chebyshev_bound",
    "published_bound",
    "t_f_corrected",
    "t_f_published",
    "t_f_exact",
    "BOUNDS",
]


# --------------------------------------------------------------------------
# Small-sum privacy
# --------------------------------------------------------------------------
def privacy_tail(f, gamma: int, eps: float) -> np.ndarray:
    """Probability that a true count ``f`` is published with a large error.

    ``T_p(f) = 1 - sum_{x = ceil((1-eps) f)}^{floor((1+eps) f)}
    Binom.pmf(x; gamma f, 1/gamma)``, computed as the two tails
    ``P[X < ceil((1-eps) f)] + P[X > floor((1+eps) f)]`` with
    :mod:`scipy.stats.binom` (never a normal approximation, which the paper
    rules out for small counts).

    Parameters
    ----------
    f : int or array_like of int
        True count(s) of the sensitive value, ``f >= 1``.
    gamma : int
        Decoy group size, ``gamma >= 2``.
    eps : float
        Relative error, ``0 < eps <= 1``.

    Returns
    -------
    numpy.ndarray
        ``T_p(f)`` for each ``f`` (float array, same shape as ``f``).

    Notes
    -----
    The summation limits are rounded with :func:`core.bounds._numeric.ceil_int`
    / ``floor_int`` so that e.g. ``(1 + 0.15) * 100 = 114.99999999999999``
    counts as 115.

    The sum keeps the boundary values ``x = (1 +- eps) f`` (when they are
    whole numbers) inside the "close" interval, so ``T_p(f)`` is
    ``Pr[|f' - f| > eps f]`` (strict), while Definition 2 asks for
    ``Pr[|f' - f| >= eps f]``.  The strict probability is the smaller one,
    so ``T_p`` is a conservative (never optimistic) privacy guarantee; the
    two differ only when ``eps f`` is a whole number (e.g. ``f = 10`` at
    ``eps = 0.3``).

    Lemma 2 starts the sum at the ceiling (``ceil(0.7 f)`` in Example 2);
    Theorem 4 prints a floor.  Only the ceiling reproduces the paper's
    claim ``T_p >= 0.6`` for ``gamma = 10, eps = 0.3, alpha = 3``: with the
    floor, ``T_p(1) = 1 - P[X <= 1] = 0.264``.

    References
    ----------
    seed 000 (Fu et al., "Small sum privacy and large sum utility"), §4.2,
    Example 1, Lemma 2, Example 2 / Fig. 5, Theorem 4.

    Examples
    --------
    >>> np.round(privacy_tail([1, 2, 3, 4, 5, 6], gamma=10, eps=0.3), 3)
    array([0.613, 0.715, 0.764, 0.429, 0.48 , 0.519])
    """
    f = np.asarray(f, dtype=np.int64)
    n = gamma * f
    p = 1.0 / gamma
    lo = ceil_int((1.0 - eps) * f)
    hi = floor_int((1.0 + eps) * f)
    # both tails directly (not 1 - P[interval]) to keep precision when T_p is small
    from scipy import stats  # here: importing the bounds stays light

    return stats.binom.cdf(lo - 1, n, p) + stats.binom.sf(hi, n, p)


def small_sum_privacy(gamma: int, eps: float, alpha: int) -> tuple[float, int]:
    """The guarantee ``T_p = min_{f = 1..alpha} T_p(f)`` and the ``f`` that binds.

    Parameters
    ----------
    gamma : int
        Decoy group size.
    eps : float
        Relative error.
    alpha : int
        Counts ``1..alpha`` are "small".

    Returns
    -------
    T_p : float
        Smallest probability of a relative error beyond ``eps`` over the
        small counts: SPLU-Gen satisfies SSP-privacy w.r.t. ``(eps, T_p, alpha)``.
    binding_f : int
        The count attaining the minimum (the smallest such count on ties).

    References
    ----------
    seed 000, Lemma 2 and Theorem 4; Example 2 (``gamma = 10``,
    ``eps = 0.3``, ``alpha = 3`` gives ``T_p >= 0.6``).

    Examples
    --------
    >>> t_p, f = small_sum_privacy(10, 0.3, 3)
    >>> round(t_p, 4), f
    (0.6126, 1)
    """
    f = np.arange(1, int(alpha) + 1)
    tail = privacy_tail(f, gamma, eps)
    i = int(np.argmin(tail))
    return float(tail[i]), int(f[i])


# --------------------------------------------------------------------------
# Large-sum utility
# --------------------------------------------------------------------------
def utility_tail(f, gamma: int, eps: float) -> np.ndarray:
    """Exact ``Pr[|f' - f| >= eps f]`` with ``f' ~ Binomial(gamma f, 1/gamma)``.

    Computed as ``P[X <= floor((1-eps) f)] + P[X >= ceil((1+eps) f)]``.

    Parameters
    ----------
    f : int or array_like of int
        True count(s), ``f >= 1``.
    gamma : int
        Decoy group size.
    eps : float
        Relative error.

    Returns
    -------
    numpy.ndarray

    Notes
    -----
    The inequality is non-strict (``>=``), as in Definition 1 and Theorem 3.
    This is the reading that reproduces the check values of MECHANISMS.md §1
    (``gamma = 10, eps = 0.1``): ``f = 100`` gives 0.3165 with ``>=``
    (0.2682 with ``>``), ``f = 300`` 0.0725 (0.0633), ``f = 900`` 0.00167
    (0.00148).

    References
    ----------
    seed 000, Definition 1, Theorem 3; MECHANISMS.md §1.

    Examples
    --------
    >>> np.round(utility_tail([100, 300, 900], gamma=10, eps=0.1), 5)
    array([0.3165 , 0.0725 , 0.00167])
    """
    f = np.asarray(f, dtype=np.int64)
    n = gamma * f
    p = 1.0 / gamma
    lo = floor_int((1.0 - eps) * f)
    hi = ceil_int((1.0 + eps) * f)
    from scipy import stats

    return stats.binom.cdf(lo, n, p) + stats.binom.sf(hi - 1, n, p)


def chebyshev_bound(f, gamma: int, eps: float) -> np.ndarray:
    """Corrected Chebyshev bound ``(1 - 1/gamma) / (eps^2 f)``, capped at 1.

    ``f'`` has variance ``gamma f (1/gamma)(1 - 1/gamma) = f (1 - 1/gamma)``,
    so Chebyshev's inequality gives
    ``Pr[|f' - f| >= eps f] <= (1 - 1/gamma) / (eps^2 f)``.

    A probability bound above 1 says nothing; capping it at 1 keeps it a
    valid bound and keeps a log-scaled chart readable.

    References
    ----------
    seed 000, Theorem 3 (proof, inequality (4) with ``sigma^2 = p(1-p)``),
    corrected in MECHANISMS.md §1.

    Examples
    --------
    >>> np.round(chebyshev_bound([100, 300, 900], gamma=10, eps=0.1), 3)
    array([0.9, 0.3, 0.1])
    """
    f = np.asarray(f, dtype=float)
    return np.minimum(1.0, (1.0 - 1.0 / gamma) / (eps**2 * f))


def published_bound(f, gamma: int, eps: float) -> np.ndarray:
    """The paper's Theorem 3 bound ``1 / (gamma eps^2 f^2)``: INCORRECT.

    The proof applies Chebyshev to the mean of ``n = gamma f`` trials, whose
    variance is ``p(1-p)/n``, but then divides by ``n^2`` instead of ``n``.
    The formula is far below the true tail (``gamma = 10, eps = 0.1,
    f = 100``: 0.001 against an exact 0.316), so it promises utility that
    does not exist.  Shown only to label it; capped at 1 like
    :func:`chebyshev_bound` (it only exceeds 1 for tiny ``f``).

    References
    ----------
    seed 000, Theorem 3, eq. (3); MECHANISMS.md §1.
    """
    f = np.asarray(f, dtype=float)
    return np.minimum(1.0, 1.0 / (gamma * eps**2 * f**2))


def t_f_corrected(gamma: int, eps: float, t_e: float) -> float:
    """Count above which the corrected Chebyshev bound is at most ``T_E``.

    ``T_f = (1 - 1/gamma) / (eps^2 T_E)``.

    References
    ----------
    seed 000, Lemma 1, corrected in MECHANISMS.md §1.

    Examples
    --------
    >>> round(t_f_corrected(10, 0.1, 0.1), 6)
    900.0
    """
    return (1.0 - 1.0 / gamma) / (eps**2 * t_e)


def t_f_published(gamma: int, eps: float, t_e: float) -> float:
    """The paper's Lemma 1 threshold ``T_f = (1 / (gamma eps^2 T_E))^(1/2)`` (incorrect).

    References
    ----------
    seed 000, Lemma 1.

    Examples
    --------
    >>> round(t_f_published(10, 0.1, 0.1), 6)
    10.0
    """
    return math.sqrt(1.0 / (gamma * eps**2 * t_e))


def t_f_exact(gamma: int, eps: float, t_e: float) -> int:
    """Smallest count ``T_f`` from which the exact tail stays ``<= T_E``.

    Definition 1 asks the tail to be at most ``T_E`` for *every* count
    ``f >= T_f``.  The exact tail is a sawtooth, not monotone, so this is
    one more than the largest ``f`` whose exact tail exceeds ``T_E``
    (1 if there is none).  Only counts below a horizon need checking: beyond
    ``min(T_f_corrected, (2 + eps) ln(2/T_E) / eps^2)`` the Chebyshev bound or
    the two-sided Chernoff bound ``2 exp(-f eps^2 / (2 + eps))`` already
    guarantees a tail ``<= T_E``.

    Parameters
    ----------
    gamma : int
    eps : float
        Relative error, ``0 < eps <= 1``.
    t_e : float
        Largest acceptable probability of an error of ``eps`` or more.

    Returns
    -------
    int

    References
    ----------
    seed 000, Definition 1 and Lemma 1; Chernoff bounds as in seed 001,
    Theorem 4.8 (upper tail in the form valid for all ``e > 0``).

    Examples
    --------
    >>> t_f_exact(10, 0.1, 0.1)
    251
    """
    chernoff = (2.0 + eps) * math.log(2.0 / t_e) / eps**2
    horizon = int(math.ceil(min(t_f_corrected(gamma, eps, t_e), chernoff)))
    f = np.arange(1, horizon + 1)
    above = np.flatnonzero(utility_tail(f, gamma, eps) > t_e)
    return int(f[above[-1]] + 1) if above.size else 1


# --------------------------------------------------------------------------
# Declared curves
# --------------------------------------------------------------------------
_GAMMA_HELP = "Decoy group size: each record's published value is drawn from γ candidates (larger = noisier)."


def _privacy_curve(prm: dict) -> Curve:
    gamma, eps, alpha, f_max = prm["gamma"], prm["eps"], prm["alpha"], prm["f_max"]
    f = np.arange(1, f_max + 1)
    tail = privacy_tail(f, gamma, eps)
    t_p, binding = small_sum_privacy(gamma, eps, alpha)
    pct = f"{eps * 100:g}%"
    return Curve(
        name="splu-privacy",
        title="SPLU small-sum privacy: the binomial sawtooth",
        x=f,
        x_label="true count f of a sensitive value (records)",
        y_label=f"probability the published count is off by more than {pct}",
        series={"privacy": tail, "min_over_alpha": np.full(f.shape, t_p)},
        labels={
            "privacy": f"T_p(f): chance of an error beyond {pct}",
            "min_over_alpha": f"T_p = {t_p:.3f}: the minimum over f = 1..{alpha} (binding f = {binding})",
        },
        styles={"privacy": "markers", "min_over_alpha": "dash"},
        notes={"T_p": t_p, "binding_f": binding, "alpha": alpha},
        caption=(
            f"Each dot is the chance that a value held by f records is published with a count "
            f"more than {pct} off. Every count up to α = {alpha} keeps at least {t_p:.0%} chance "
            f"of such an error (weakest at f = {binding}); the teeth come from rounding "
            f"{eps:g}·f to whole records."
        ),
    )


def _utility_curve(prm: dict) -> Curve:
    gamma, eps, t_e, f_max = prm["gamma"], prm["eps"], prm["t_e"], prm["f_max"]
    f = np.arange(1, f_max + 1)
    exact = utility_tail(f, gamma, eps)
    tf_exact = t_f_exact(gamma, eps, t_e)
    tf_corr = t_f_corrected(gamma, eps, t_e)
    tf_pub = t_f_published(gamma, eps, t_e)
    pct = f"{eps * 100:g}%"
    return Curve(
        name="splu-utility",
        title="SPLU large-sum utility: exact error probability vs the bounds",
        x=f,
        x_label="true count f of a sensitive value (records)",
        y_label=f"probability the published count is off by {pct} or more",
        series={
            "exact": exact,
            "chebyshev": chebyshev_bound(f, gamma, eps),
            "published": published_bound(f, gamma, eps),
        },
        labels={
            "exact": "exact (binomial tail)",
            "chebyshev": "Chebyshev bound (1 − 1/γ)/(ε² f), corrected",
            "published": "as published (incorrect): 1/(γ ε² f²)",
        },
        styles={"chebyshev": "dash", "published": "dot"},
        hlines={"T_E": t_e},
        notes={
            "T_f_exact": tf_exact,
            "T_f_corrected": tf_corr,
            "T_f_published": tf_pub,
            "T_E": t_e,
        },
        log_y=True,
        caption=(
            f"Counts of {tf_exact:,} records or more are published within {pct} with probability "
            f"at least {1 - t_e:.0%} (exact); the corrected Chebyshev bound only promises this "
            f"from {int(ceil_int(tf_corr)):,}. The paper's formula claims it from "
            f"{int(ceil_int(tf_pub)):,} and lies below the true error: do not use it."
        ),
    )


BOUNDS = [
    Bound(
        name="splu-privacy",
        title="SPLU small-sum privacy (binomial sawtooth)",
        paper="seed 000, Lemma 2 / Theorem 4, Fig. 5",
        params=(
            Param("gamma", "γ", _GAMMA_HELP, 10, kind="int", low=2, high=50, safer="higher",
                  paper="seed 000 Example 2 (Fig. 5)"),
            Param("eps", "ε", "How far off (as a share of the true count) a published count must be to hide it.",
                  0.3, low=0, high=1, closed="right", step=0.01, paper="seed 000 Example 2 (Fig. 5)"),
            Param("alpha", "α", "Counts up to α records are 'small' and must stay hidden.",
                  3, kind="int", low=1, high=50, paper="seed 000 Example 2"),
            Param("f_max", "α′", "Largest true count drawn on the chart.",
                  20, kind="int", low=2, high=200, paper="chart range (Fig. 5 shows small counts)"),
        ),
        compute=_privacy_curve,
        explain=(
            "SPLU-Gen replaces each record's sensitive value by one drawn uniformly from a decoy "
            "group of γ distinct values, so a value held by f records is published "
            "Binomial(γ f, 1/γ) times: right on average, but noisy. For a small count the noise is "
            "large compared with the count itself, so the published number is likely to be far off "
            "and an attacker cannot trust it. The curve is that probability, computed exactly from "
            "the binomial distribution; T_p, its minimum over the small counts 1..α, is the "
            "guarantee the paper calls (ε, T_p, α)-small-sum privacy. The sawtooth is real: the "
            "range of 'close' published counts jumps whenever (1 ± ε) f crosses a whole number."
        ),
        order=10,
    ),
    Bound(
        name="splu-utility",
        title="SPLU large-sum utility (T_E vs T_f)",
        paper="seed 000, Theorem 3 / Lemma 1, Fig. 4 (Theorem 3 corrected)",
        params=(
            Param("gamma", "γ", _GAMMA_HELP, 10, kind="int", low=2, high=50, safer="higher",
                  paper="MECHANISMS.md §1 check values"),
            Param("eps", "ε", "Relative error a useful count may have (0.1 = within 10% of the truth).",
                  0.1, low=0.05, high=1, step=0.01, paper="MECHANISMS.md §1 check values"),
            Param("t_e", "T_E", "Largest acceptable chance that a large count misses by ε or more.",
                  0.1, low=0.001, high=0.5, step=0.001, paper="seed 000 Definition 1"),
            Param("f_max", "f_max", "Largest true count drawn on the chart.",
                  1000, kind="int", low=10, high=10000, paper="seed 000 Fig. 4 (counts up to ~900)"),
        ),
        compute=_utility_curve,
        explain=(
            "The same binomial noise that hides small counts is small relative to large counts: a "
            "value held by f records is published with a standard deviation of about √f records, "
            "so the relative error shrinks like 1/√f. The exact curve is the probability of a "
            "relative error of ε or more. The paper's Theorem 3 states the bound 1/(γ ε² f²), but "
            "its proof divides by n² instead of n; the correct Chebyshev bound is "
            "(1 − 1/γ)/(ε² f), hence T_f = (1 − 1/γ)/(ε² T_E). The published formula lies far "
            "below the exact probability (0.001 against 0.316 at f = 100, γ = 10, ε = 0.1), so it "
            "is drawn only to show it is wrong. T_f (exact) is the smallest count from which the "
            "exact probability stays at or below T_E."
        ),
        order=20,
    ),
]
