"""The differential inference theorem (seed 003 Theorem 2): Laplace answers still reveal y/x.

An adversary asks two count queries, ``x`` = people matching a description
and ``y`` = those among them with a sensitive value; an epsilon-DP curator
answers ``X = x + Lap(b)``, ``Y = y + Lap(b)``, ``b = 1/epsilon``.  Theorem 2
(second-order Taylor expansion):

    E[Y/X] ~= (y/x)(1 + 2b^2/x^2),   var[Y/X] ~= (2b^2/x^2)(1 + (y/x)^2),

so for a large group the noisy ratio is as good as the true one (Corollary
1): epsilon = 0.1, x = 100 gives a factor 1.02; x = 1000 gives 1.0002.

What the theorem glosses over (checked numerically, see the tests)
-------------------------------------------------------------------
X has a positive density at 0, so ``E|1/X|`` is infinite: the exact mean
and variance of Y/X do not exist, and a Monte Carlo mean of Y/X never
settles (a draw of X near 0 can move it arbitrarily).  The Taylor numbers
are the first terms of a divergent asymptotic series
``x E[1/X] ~ sum_k (2k)! (b/x)^(2k)`` (Laplace moments), the next term
being ``24 b^4/x^4``.  A finite value that agrees with the series is the
Cauchy principal value, in closed form with exponential integrals:

    x PV E[1/X] = (x / 2b) (e^(-x/b) Ei(x/b) + e^(x/b) E1(x/b)),

which gives 1.02355 at epsilon = 0.1, x = 100 (the paper's 1.02 is its
second-order truncation) and 1.00020024 at x = 1000.  Y and X are
independent, so ``E[Y/X] / (y/x) = x E[1/X]`` whatever y is.  Robust
summaries of a simulation (median, trimmed mean) land near 1 and converge
to y/x all the same, which is the theorem's point.

References
----------
seed 003 §2.1, Theorem 2, Corollary 1; MECHANISMS.md section 4.
"""

from __future__ import annotations

import math

import numpy as np

from . import Bound, Curve
from ..params import Param

GRID_POINTS = 41
MC_DRAWS = 5000
MC_SEED = 2011


def theorem2(x, y, epsilon: float) -> tuple[np.ndarray, np.ndarray]:
    """Theorem 2's ``(E[Y/X], var[Y/X])`` for true answers x, y and budget epsilon.

    >>> [round(float(v), 6) for v in theorem2(100, 99, 0.1)]
    [1.0098, 0.039602]
    """
    x = np.asarray(x, dtype=float)
    r = np.asarray(y, dtype=float) / x
    k = 2.0 / (epsilon * x) ** 2  # 2 b^2 / x^2
    return r * (1 + k), k * (1 + r * r)


def bias_factor(x, epsilon: float) -> np.ndarray:
    """Theorem 2's ``E[Y/X] / (y/x) = 1 + 2b^2/x^2``."""
    return 1 + 2.0 / (epsilon * np.asarray(x, dtype=float)) ** 2


def principal_value_factor(x, epsilon: float) -> np.ndarray:
    """``x PV E[1/X]`` for ``X = x + Lap(1/epsilon)``: the finite value the Taylor series approximates.

    >>> round(float(principal_value_factor(100, 0.1)), 5)
    1.02355
    """
    z = np.atleast_1d(np.asarray(x, dtype=float) * epsilon)  # x / b
    out = np.empty_like(z)
    small = z < 500
    zs = z[small]
    # e^{-z} Ei(z) + e^{z} E1(z), both finite for 0 < z < 700
    from scipy import special  # here: importing the bounds stays light

    out[small] = zs / 2 * (np.exp(-zs) * special.expi(zs) + np.exp(zs) * special.exp1(zs))
    zl = z[~small]  # asymptotic series, exact to double precision here
    out[~small] = 1 + 2 / zl**2 + 24 / zl**4 + 720 / zl**6
    return out if np.ndim(x) else out[0]


def simulate(x: float, y: float, epsilon: float, draws: int, rng: np.random.Generator) -> np.ndarray:
    """``draws`` noisy ratios Y/X from independent Laplace answers (Theorem 1's mechanism)."""
    b = 1.0 / epsilon
    return (y + rng.laplace(0, b, draws)) / (x + rng.laplace(0, b, draws))


def trimmed_mean(values: np.ndarray, share: float = 0.01) -> float:
    """Mean after dropping ``share`` of the draws at each end (finite where the plain mean is not)."""
    v = np.sort(np.asarray(values, dtype=float))
    cut = int(len(v) * share)
    return float(v[cut:len(v) - cut].mean())


def robust_sd(values: np.ndarray) -> float:
    """Interquartile range / 1.349: the standard deviation a normal spread of this width would have."""
    q1, q3 = np.percentile(values, [25, 75])
    return float((q3 - q1) / 1.349)


def _curve(prm: dict) -> Curve:
    eps, ratio, x0 = prm["epsilon"], prm["ratio"], prm["x"]
    b = 1 / eps
    hi = max(10_000.0, 10 * x0)
    lo = max(1.0, min(10.0, x0 / 10))
    x = np.unique(np.round(np.geomspace(lo, hi, GRID_POINTS)))
    factor = bias_factor(x, eps)
    sd = np.sqrt(theorem2(x, ratio * x, eps)[1])
    pv = principal_value_factor(x, eps)
    rng = np.random.default_rng(MC_SEED)
    med, trim, rsd = [], [], []
    for xi in x:
        r = simulate(xi, ratio * xi, eps, MC_DRAWS, rng)
        med.append(np.median(r) / ratio)
        trim.append(trimmed_mean(r) / ratio)
        rsd.append(robust_sd(r))
    at_mean, at_var = theorem2(x0, ratio * x0, eps)
    big = simulate(x0, ratio * x0, eps, 100_000, np.random.default_rng(MC_SEED + 1))
    notes = {
        "noise_scale_b": b,
        "theorem_factor_at_x": float(bias_factor(x0, eps)),
        "principal_value_factor_at_x": float(principal_value_factor(x0, eps)),
        "next_series_term_24b4_over_x4": 24 * b**4 / x0**4,
        "theorem_mean_at_x": float(at_mean),
        "theorem_sd_at_x": float(math.sqrt(at_var)),
        "mc_median_at_x": float(np.median(big)),
        "mc_trimmed_mean_at_x": trimmed_mean(big),
        "mc_plain_mean_at_x": float(big.mean()),
        "mc_robust_sd_at_x": robust_sd(big),
        # P(X < 1) = P(Lap(b) < 1 - x) = exp(-(x - 1)/b) / 2: how often the curator's count is about 0
        "chance_X_below_1": 0.5 * math.exp(-(x0 - 1) / b) if x0 >= 1 else 1 - 0.5 * math.exp((x0 - 1) / b),
    }
    return Curve(
        name="differential-inference",
        title="Differential inference: the noisy ratio Y/X against the query size x",
        x=x.astype(float),
        x_label="query size x (records matching the description)",
        y_label="E[Y/X] / (y/x)  (1 = unbiased); spread in units of y/x",
        series={
            "theorem": factor,
            "principal_value": pv,
            "mc_median": np.array(med),
            "mc_trimmed": np.array(trim),
            "theorem_sd": sd / ratio,
            "mc_robust_sd": np.array(rsd) / ratio,
        },
        labels={
            "theorem": "Theorem 2: 1 + 2b²/x²",
            "principal_value": "exact (principal value) x·E[1/X]",
            "mc_median": "Monte Carlo median of Y/X ÷ (y/x)",
            "mc_trimmed": "Monte Carlo 1%-trimmed mean ÷ (y/x)",
            "theorem_sd": "Theorem 2: sd of Y/X ÷ (y/x)",
            "mc_robust_sd": "Monte Carlo sd (IQR/1.349) ÷ (y/x)",
        },
        styles={"principal_value": "dash", "mc_median": "markers", "mc_trimmed": "markers",
                "theorem_sd": "dot", "mc_robust_sd": "markers"},
        hlines={"y/x (no bias)": 1.0},
        vlines={"x": float(x0)},
        notes=notes,
        log_x=True,
        log_y=True,
        caption=(
            f"Laplace answers with ε = {eps:g} (noise scale b = {b:g} records) to x and y = {ratio:g}·x. Theorem 2 "
            f"says the noisy ratio Y/X is off from y/x by a factor 1 + 2b²/x² = {float(bias_factor(x0, eps)):.6g} at "
            f"x = {x0:g}, with a standard deviation of {math.sqrt(at_var):.3g}; both vanish as x grows, so a large "
            f"group's share is revealed despite ε-differential privacy. Strictly, the mean of Y/X does not exist "
            f"(X can be near 0); the finite principal value is {float(principal_value_factor(x0, eps)):.6g} (the "
            f"next term of the series is 24b⁴/x⁴ = {24 * b**4 / x0**4:.2g}), and a simulation's median and trimmed "
            f"mean converge to y/x all the same. Look for all curves meeting the line at 1 and the spreads falling "
            f"like 1/x."
        ),
    )


BOUNDS = [
    Bound(
        name="differential-inference",
        title="Differential inference theorem (Laplace answers reveal y/x)",
        paper="seed 003 §2.1, Theorem 2, Corollary 1",
        params=(
            Param("epsilon", "ε", "Privacy budget of each Laplace answer (noise scale b = 1/ε); smaller is "
                  "safer.", 0.1, low=0, high=10, closed="right", step=0.01, safer="lower",
                  presets=(0.01, 0.05, 0.1, 0.5, 1.0), paper="seed 003 §2.1: ε = 0.1"),
            Param("ratio", "y/x", "True share of the group holding the sensitive value (what the adversary wants).",
                  0.99, low=0, high=1, closed="right", step=0.01, paper="seed 003 §2.1: x = 100, y = 99"),
            Param("x", "x", "Query size to read out (records matching the description).", 100.0, low=1,
                  high=1e7, paper="seed 003 §2.1: x = 100 and 1000"),
        ),
        compute=_curve,
        explain=(
            "Differential privacy hides whether one person is in the data, not what the data says about people "
            "like them. Ask how many people match a description (x) and how many of them have a disease (y): "
            "the noisy answers' ratio Y/X estimates y/x, and the Laplace noise does not grow with the group, so "
            "for a large group the estimate is sharp. If y/x is high, anyone matching the description is exposed "
            "(seed 003 Theorem 2)."
        ),
        order=60,
    ),
]
