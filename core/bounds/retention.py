"""Uniform perturbation: (rho1, rho2)-privacy -> gamma -> retention p (seed 002).

Uniform perturbation (UP) keeps a record's sensitive value with probability
``p`` and otherwise replaces it by a value drawn uniformly from the whole
domain of ``m`` values (possibly the same one).  The transition matrix has
``p + (1-p)/m`` on the diagonal and ``q = (1-p)/m`` off it; their ratio is
the amplification ``gamma``.  (rho1, rho2)-privacy fixes the largest allowed
``gamma`` and hence the largest retention ``p`` for a domain of size ``m``.

The plain functions here (:func:`gamma_from_rho`, :func:`retention_from_gamma`,
:func:`gamma_from_retention`, :func:`uniform_transition`, and
:func:`error_bound`, seed 002's eq. 11, drawn by :mod:`core.bounds.sdr`) are
the shared arithmetic for the ``uniform``, ``sdr`` and ``reconstruction``
mechanisms.
UP with amplification ``gamma`` is k-ary randomized response with
``epsilon_LDP = ln(gamma)``.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from . import Bound, Curve
from ..errors import ParameterError
from ..params import Param

__all__ = [
    "gamma_from_rho",
    "retention_from_gamma",
    "gamma_from_retention",
    "uniform_transition",
    "error_bound",
    "BOUNDS",
]


def _out(value):
    """A float for scalar results, the array otherwise."""
    return float(value) if np.ndim(value) == 0 else value


def gamma_from_rho(rho1, rho2):
    """Largest amplification ``gamma`` that ensures (rho1, rho2)-privacy.

    ``gamma = rho2 (1 - rho1) / (rho1 (1 - rho2))``.

    Parameters
    ----------
    rho1 : float or array_like
        Prior bound: values whose prior probability is at most ``rho1`` are
        protected, ``0 < rho1 < rho2``.
    rho2 : float or array_like
        Posterior bound: after seeing the release an adversary's belief in
        such a value stays at most ``rho2``, ``rho2 < 1``.

    Returns
    -------
    float or numpy.ndarray
        ``gamma > 1``.

    Raises
    ------
    ParameterError
        Unless ``0 < rho1 < rho2 < 1``.

    References
    ----------
    seed 002 (Chaytor & Wang, small domain randomization), eq. 6
    (Theorem 1 after Evfimievski et al., eq. 3).

    Examples
    --------
    >>> gamma_from_rho(1/3, 2/3)        # seed 002, Example 1
    4.0
    >>> round(gamma_from_rho(1/13, 1/6), 6)   # seed 002 §6.2, L = 6
    2.4
    """
    r1 = np.asarray(rho1, dtype=float)
    r2 = np.asarray(rho2, dtype=float)
    if not (np.all(np.isfinite(r1)) and np.all(np.isfinite(r2))
            and np.all(r1 > 0) and np.all(r2 < 1) and np.all(r1 < r2)):
        raise ParameterError(
            f"(rho1, rho2)-privacy needs 0 < rho1 < rho2 < 1 (the posterior bound must exceed "
            f"the prior bound). Got rho1 = {_show(rho1)} and rho2 = {_show(rho2)}."
        )
    return _out(r2 * (1 - r1) / (r1 * (1 - r2)))


def retention_from_gamma(gamma, m):
    """Largest retention probability ``p`` for amplification ``gamma`` and domain size ``m``.

    ``p = (gamma - 1) / (m - 1 + gamma)`` (and ``q = 1/(m - 1 + gamma)``).

    Parameters
    ----------
    gamma : float or array_like
        Amplification, ``gamma >= 1`` (``gamma = 1`` gives ``p = 0``).
    m : int or array_like
        Number of values in the sensitive domain, ``m >= 1``.

    Returns
    -------
    float or numpy.ndarray

    Raises
    ------
    ParameterError
        If ``gamma < 1`` or ``m < 1``.

    References
    ----------
    seed 002, eq. 4.

    Examples
    --------
    >>> round(retention_from_gamma(4, 10) * 13, 12)   # seed 002 Example 1: p = 3/13
    3.0
    """
    g = np.asarray(gamma, dtype=float)
    mm = np.asarray(m, dtype=float)
    if not (np.all(np.isfinite(g)) and np.all(g >= 1)):
        raise ParameterError(f"The amplification gamma must be a number >= 1. Got {_show(gamma)}.")
    if not (np.all(np.isfinite(mm)) and np.all(mm >= 1)):
        raise ParameterError(f"The domain size m must be at least 1. Got {_show(m)}.")
    return _out((g - 1) / (mm - 1 + g))


def gamma_from_retention(p, m):
    """Amplification ``gamma`` of uniform perturbation with retention ``p`` over ``m`` values.

    Inverse of :func:`retention_from_gamma`: ``gamma = (1 + p (m - 1)) / (1 - p)``,
    i.e. the diagonal ``p + (1-p)/m`` over the off-diagonal ``(1-p)/m``.

    Parameters
    ----------
    p : float or array_like
        Retention probability, ``0 <= p < 1``.
    m : int or array_like
        Domain size, ``m >= 1``.

    Returns
    -------
    float or numpy.ndarray

    Raises
    ------
    ParameterError
        If ``p`` is outside ``[0, 1)`` or ``m < 1``.

    References
    ----------
    seed 002, eq. 4 (solved for gamma).

    Examples
    --------
    >>> round(gamma_from_retention(3/13, 10), 12)
    4.0
    """
    pp = np.asarray(p, dtype=float)
    mm = np.asarray(m, dtype=float)
    if not (np.all(np.isfinite(pp)) and np.all(pp >= 0) and np.all(pp < 1)):
        raise ParameterError(f"The retention probability p must be in [0, 1). Got {_show(p)}.")
    if not (np.all(np.isfinite(mm)) and np.all(mm >= 1)):
        raise ParameterError(f"The domain size m must be at least 1. Got {_show(m)}.")
    return _out((1 + pp * (mm - 1)) / (1 - pp))


def uniform_transition(p, m):
    """Diagonal and off-diagonal entries of the uniform-perturbation matrix.

    ``P[x -> x] = p + (1-p)/m`` and ``P[x -> y] = (1-p)/m`` for ``y != x``.

    Returns
    -------
    (float, float) or (numpy.ndarray, numpy.ndarray)

    References
    ----------
    seed 002, eq. 1 and eq. 5; MECHANISMS.md §0.

    Examples
    --------
    >>> d, o = uniform_transition(3/13, 10)    # seed 002 Example 1
    >>> round(d * 13, 12), round(o * 13, 12)
    (4.0, 1.0)
    """
    pp = np.asarray(p, dtype=float)
    mm = np.asarray(m, dtype=float)
    off = (1 - pp) / mm
    return _out(pp + off), _out(off)


def _show(value) -> str:
    if np.ndim(value) == 0:
        try:
            return f"{float(value):g}"
        except (TypeError, ValueError):
            return repr(value)
    return repr(value)


def _frac(x: float) -> str:
    """``0.22`` for a short decimal, ``1/13`` for 0.0769..., else ``%g``."""
    if round(x, 4) == x:
        return f"{x:g}"
    fr = Fraction(x).limit_denominator(100)
    return f"{fr.numerator}/{fr.denominator}" if abs(float(fr) - x) < 1e-12 else f"{x:g}"


# (rho2 = 1/L) values of seed 002 §6.2 / Table 2, drawn for comparison
_TABLE2_L = (6, 5, 4, 3)


def _curve(prm: dict) -> Curve:
    rho1, rho2, m, m_max = prm["rho1"], prm["rho2"], prm["m"], prm["m_max"]
    if not rho1 < rho2:
        raise ParameterError(
            f"The 'rho1' parameter of bound retention must be smaller than 'rho2' "
            f"({_frac(rho2)}): the posterior bound must exceed the prior bound. Got {_frac(rho1)}."
        )
    gamma = gamma_from_rho(rho1, rho2)
    x = np.arange(2, m_max + 1)
    series = {"p": retention_from_gamma(gamma, x)}
    labels = {"p": f"ρ₁ = {_frac(rho1)}, ρ₂ = {_frac(rho2)} (γ = {gamma:.3g})"}
    styles = {}
    for L in _TABLE2_L:
        if 1 / L > rho1:
            key = f"p_L{L}"
            series[key] = retention_from_gamma(gamma_from_rho(rho1, 1 / L), x)
            labels[key] = f"ρ₂ = 1/{L} (seed 002 Table 2, L = {L})"
            styles[key] = "dot"
    p_m = retention_from_gamma(gamma, m)
    diag, off = uniform_transition(p_m, m)
    return Curve(
        name="retention",
        title="Uniform perturbation: retention probability against domain size",
        x=x,
        x_label="domain size m (number of distinct sensitive values)",
        y_label="retention probability p (chance a record keeps its true value)",
        series=series,
        labels=labels,
        styles=styles,
        notes={
            "gamma": gamma,
            "epsilon_ldp": math.log(gamma),
            "m": m,
            "p_at_m": p_m,
            "diagonal_at_m": diag,
            "off_diagonal_at_m": off,
        },
        log_x=m_max > 200,
        caption=(
            f"Under ({_frac(rho1)}, {_frac(rho2)})-privacy a record keeps its true sensitive value "
            f"with probability {p_m:.1%} when the attribute has m = {m:,} values. Retention falls "
            f"roughly like 1/m, so large domains leave little signal; splitting the table into "
            f"sub-tables with small domains (seed 002) raises it."
        ),
    )


def error_bound(size, m, gamma, delta: float = 0.05):
    """eps of seed 002 eq. 11: the relative-frequency error bound at confidence 1 - delta.

    ``eps = 2 sqrt(ln(2/delta) / |T|) (m/(gamma - 1) + 1)``, i.e. Theorem 2's
    condition ``|T| >= 4 ln(2/delta) / (p eps)^2`` taken with equality, with
    ``p = (gamma-1)/(m-1+gamma)`` (eq. 4).  The paper writes ``log``; the
    Chernoff bound it comes from (``2 exp(-mu theta^2 / 4)``) makes it the
    natural logarithm.

    Parameters
    ----------
    size : int or array_like
        Records in the (sub-)table, ``|T| >= 1``.
    m : int or array_like
        Distinct sensitive values in it.
    gamma : float or array_like
        Amplification, ``> 1`` (``inf`` gives ``p = 1``).
    delta : float
        The bound fails with probability at most delta, ``0 < delta < 1``.

    Returns
    -------
    float or numpy.ndarray

    References
    ----------
    seed 002 (Chaytor & Wang), Theorem 2, eq. 11 and eq. 12; Appendix 10.4.

    Examples
    --------
    >>> round(error_bound(36, 6, 4.0), 4)     # seed 002 Example 1, sub-table T1
    1.9206
    """
    size = np.asarray(size, dtype=float)
    m = np.asarray(m, dtype=float)
    gamma = np.asarray(gamma, dtype=float)
    if not 0 < delta < 1:
        raise ParameterError(f"The confidence parameter delta must be in (0, 1). Got {delta:g}.")
    with np.errstate(divide="ignore", invalid="ignore"):
        inv_p = np.where(np.isinf(gamma), 1.0, m / (gamma - 1) + 1)
        out = 2 * np.sqrt(math.log(2 / delta) / size) * inv_p
    return float(out) if out.ndim == 0 else out


BOUNDS = [
    Bound(
        name="retention",
        title="ρ₁/ρ₂ → γ → retention p (uniform perturbation)",
        paper="seed 002, eq. 4 and eq. 6, Table 2",
        params=(
            Param("rho1", "ρ₁", "Values rarer than this share of the records are protected (prior bound).",
                  1 / 13, low=0, high=1, closed="neither", step=0.005, safer="higher",
                  paper="seed 002 §6.2"),
            Param("rho2", "ρ₂", "An attacker's belief in a protected value must stay below this (posterior bound).",
                  1 / 6, low=0, high=1, closed="neither", step=0.005, safer="lower",
                  paper="seed 002 §6.2 (L = 6)"),
            Param("m", "m", "Number of distinct sensitive values in your table (read-out below the chart).",
                  50, kind="int", low=2, high=100000, paper="seed 002 §6.2 (OCC, m = 50)"),
            Param("m_max", "m_max", "Largest domain size drawn on the chart.",
                  100, kind="int", low=3, high=10000, paper="chart range"),
        ),
        compute=_curve,
        explain=(
            "Uniform perturbation keeps each record's sensitive value with probability p and "
            "otherwise draws a replacement uniformly from all m values. (ρ₁, ρ₂)-privacy says: if "
            "an attacker believed a value with probability at most ρ₁ before seeing the release, "
            "they believe it with probability at most ρ₂ after. That holds when the chance of "
            "keeping a value is at most γ = ρ₂(1 − ρ₁)/(ρ₁(1 − ρ₂)) times the chance of switching "
            "to any one other value (seed 002 eq. 6), which allows a retention of "
            "p = (γ − 1)/(m − 1 + γ) (eq. 4). The same γ spread over more values leaves less "
            "retention: that is the cost of a large domain, and the reason small domain "
            "randomization partitions the table. Dotted lines repeat the curve for the ρ₂ = 1/L "
            "settings of the paper's Table 2 (only those above ρ₁)."
        ),
        order=30,
    ),
]
