"""Analytical curves (core.bounds): worked numbers, brute-force twins, contracts.

Reference values quote their origin: the seed papers in ../shared/seeds/ and
their close reading ../shared/MECHANISMS.md (which was checked numerically).
"""

from __future__ import annotations

import itertools
import json
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose
from scipy import stats

from core import bounds
from core.bounds import chernoff, retention, splu
from core.bounds._numeric import ceil_int, floor_int, snap
from core.errors import ParameterError

OURS = {"splu-privacy": 10, "splu-utility": 20, "retention": 30, "chernoff": 40}
FAST = settings(database=None, deadline=None, max_examples=60)


# ---------------------------------------------------------------- brute force
def _binom_pmf_exact(n: int, p: Fraction, k: int) -> Fraction:
    return math.comb(n, k) * p**k * (1 - p) ** (n - k)


def _privacy_tail_exact(f: int, gamma: int, eps: Fraction) -> float:
    """Lemma 2's T_p(f) in rational arithmetic: no floating point at all."""
    lo = math.ceil((1 - eps) * f)
    hi = math.floor((1 + eps) * f)
    p = Fraction(1, gamma)
    inside = sum(_binom_pmf_exact(gamma * f, p, x) for x in range(lo, hi + 1))
    return float(1 - inside)


def _utility_tail_exact(f: int, gamma: int, eps: Fraction) -> float:
    """Pr[|f' - f| >= eps f] by enumerating every published count."""
    p = Fraction(1, gamma)
    return float(sum(_binom_pmf_exact(gamma * f, p, x)
                     for x in range(gamma * f + 1) if abs(x - f) >= eps * f))


# ------------------------------------------------------------------- rounding
def test_snap_rounding_at_exact_integers():
    # (1 + 0.15) * 100 = 114.99999999999999 and (1 - 0.45) * 100 = 55.00000000000001
    # in binary floating point; the summation limits must be 115 and 55.
    assert math.floor((1 + 0.15) * 100) == 114  # the trap
    assert int(floor_int((1 + 0.15) * 100)) == 115
    assert math.ceil((1 - 0.45) * 100) == 56  # the trap
    assert int(ceil_int((1 - 0.45) * 100)) == 55
    # the brief's example: (1 + 0.3) * 10 = 13.000000000000002
    assert int(floor_int((1 + 0.3) * 10)) == 13
    assert float(snap(114.5)) == 114.5


def test_rounding_matches_rational_arithmetic_on_a_grid():
    # brute-force twin: eps = k/20 as an exact fraction, f = 1..200
    for k in range(1, 20):
        eps_f, eps_q = k / 20, Fraction(k, 20)
        f = np.arange(1, 201)
        lo = ceil_int((1 - eps_f) * f)
        hi = floor_int((1 + eps_f) * f)
        assert lo.tolist() == [math.ceil((1 - eps_q) * i) for i in range(1, 201)]
        assert hi.tolist() == [math.floor((1 + eps_q) * i) for i in range(1, 201)]


# ---------------------------------------------------------------- splu-privacy
def test_privacy_example_1():
    # seed 000 Example 1: f = 5, gamma = 10, eps = 0.3: P(4 <= X <= 6) = 0.52,
    # so T_p(5) = 0.48; MECHANISMS.md §1 gives 0.5199 / 0.480.
    inside = stats.binom.cdf(6, 50, 0.1) - stats.binom.cdf(3, 50, 0.1)
    assert_allclose(inside, 0.5199, atol=5e-5)
    assert_allclose(splu.privacy_tail(5, 10, 0.3), 0.480, atol=5e-4)


def test_privacy_guarantee_alpha_3():
    # MECHANISMS.md §1: gamma = 10, eps = 0.3, alpha = 3: T_p = 0.6126, f = 1 binds,
    # so (0.3, 0.6, 3)-privacy holds as seed 000 Example 2 states.
    t_p, f = splu.small_sum_privacy(10, 0.3, 3)
    assert_allclose(t_p, 0.6126, atol=5e-5)
    assert f == 1
    assert t_p >= 0.6


def test_privacy_sawtooth_values():
    # MECHANISMS.md §1: gamma = 10, eps = 0.3, f = 1..6 (seed 000 Fig. 5)
    got = splu.privacy_tail(np.arange(1, 7), 10, 0.3)
    assert_allclose(got, [0.613, 0.715, 0.764, 0.429, 0.480, 0.519], atol=5e-4)


def test_privacy_ceil_not_floor():
    # seed 000 Theorem 4 prints floor((1-eps) f) as the lower limit, Lemma 2 /
    # Example 2 the ceiling.  With the floor, T_p(1) = 1 - P[X <= 1] = 0.264 and
    # the paper's own claim T_p >= 0.6 (Example 2) would fail: the ceiling is right.
    floor_reading = 1 - stats.binom.cdf(1, 10, 0.1)
    assert_allclose(floor_reading, 0.2639, atol=5e-5)
    assert_allclose(splu.privacy_tail(1, 10, 0.3), 1 - 0.9**9, rtol=1e-12)  # 1 - P[X = 1]


@pytest.mark.parametrize(
    "gamma, eps, fs",
    [
        (10, Fraction(3, 10), range(1, 21)),  # includes f = 10: (1+0.3)*10 = 13.000000000000002
        (5, Fraction(15, 100), [20, 40, 100]),  # (1+0.15)*100 = 114.99999999999999
        (3, Fraction(45, 100), [20, 100]),  # (1-0.45)*100 = 55.00000000000001
        (2, Fraction(1), [1, 2, 7]),
    ],
)
def test_privacy_tail_matches_rational_twin(gamma, eps, fs):
    fs = list(fs)
    got = splu.privacy_tail(fs, gamma, float(eps))
    want = [_privacy_tail_exact(f, gamma, eps) for f in fs]
    assert_allclose(got, want, rtol=1e-9, atol=1e-13)


def test_privacy_curve():
    c = bounds.compute("splu-privacy")
    assert c.x.tolist() == list(range(1, 21))
    assert_allclose(c.series["min_over_alpha"], 0.61258, atol=5e-6)
    assert c.notes["binding_f"] == 1
    assert_allclose(c.notes["T_p"], c.series["privacy"][:3].min())
    # larger alpha: f = 4 binds (0.429) for gamma = 10, eps = 0.3 (MECHANISMS.md §1 sawtooth)
    c = bounds.compute("splu-privacy", {"alpha": "6"})
    assert c.notes["binding_f"] == 4
    assert_allclose(c.notes["T_p"], 0.429, atol=5e-4)


# ---------------------------------------------------------------- splu-utility
F_CHECK = [100, 300, 900]


def test_utility_check_values():
    # MECHANISMS.md §1 (gamma = 10, eps = 0.1), f = 100 / 300 / 900:
    # published 0.001 / 1.1e-4 / 1.2e-5, Chebyshev 0.90 / 0.30 / 0.10,
    # exact binomial tail 0.316 / 0.0725 / 0.00167.
    assert_allclose(splu.published_bound(F_CHECK, 10, 0.1), [0.001, 1.1e-4, 1.2e-5], rtol=0.03)
    assert_allclose(splu.chebyshev_bound(F_CHECK, 10, 0.1), [0.90, 0.30, 0.10], rtol=1e-12)
    assert_allclose(splu.utility_tail(F_CHECK, 10, 0.1), [0.316, 0.0725, 0.00167], rtol=2e-3)


def test_utility_tail_is_the_non_strict_inequality():
    # The check values above are Pr[|f' - f| >= eps f]; the strict reading
    # Pr[|f' - f| > eps f] gives 0.268 / 0.0633 / 0.00148 and does not match.
    n = [10 * f for f in F_CHECK]
    strict = [stats.binom.cdf(f - f // 10 - 1, m, 0.1) + stats.binom.sf(f + f // 10, m, 0.1)
              for f, m in zip(F_CHECK, n)]
    assert_allclose(strict, [0.2682, 0.0633, 0.00148], rtol=2e-3)
    assert not np.allclose(strict, [0.316, 0.0725, 0.00167], rtol=0.05)


@pytest.mark.parametrize("gamma, eps, f", [(10, Fraction(1, 10), 30), (10, Fraction(1, 10), 50),
                                           (4, Fraction(1, 4), 12), (2, Fraction(1), 9)])
def test_utility_tail_matches_enumeration(gamma, eps, f):
    assert_allclose(splu.utility_tail(f, gamma, float(eps)), _utility_tail_exact(f, gamma, eps),
                    rtol=1e-9, atol=1e-14)


def test_published_bound_is_violated_by_the_exact_tail():
    # seed 000 Theorem 3 is wrong (MECHANISMS.md §1): the exact probability of a
    # 10% error exceeds the published "upper bound" (0.316 > 0.001 at f = 100 ...).
    f = np.arange(20, 1001)
    exact = splu.utility_tail(f, 10, 0.1)
    published = splu.published_bound(f, 10, 0.1)
    assert np.all(exact > published)
    assert np.all(exact[np.isin(f, F_CHECK)] > 10 * published[np.isin(f, F_CHECK)])


@pytest.mark.parametrize("gamma, eps", [(10, 0.1), (2, 0.05), (50, 0.3), (5, 1.0)])
def test_chebyshev_is_a_valid_bound(gamma, eps):
    f = np.arange(1, 3001)
    assert np.all(splu.chebyshev_bound(f, gamma, eps) >= splu.utility_tail(f, gamma, eps))


def test_t_f_values():
    # MECHANISMS.md §1: T_f = (1 - 1/gamma)/(eps^2 T_E) = 0.9/(0.01 * 0.1) = 900;
    # seed 000 Lemma 1 (as published): (1/(gamma eps^2 T_E))^(1/2) = 10.
    assert_allclose(splu.t_f_corrected(10, 0.1, 0.1), 900, rtol=1e-12)
    assert_allclose(splu.t_f_published(10, 0.1, 0.1), 10, rtol=1e-12)


@pytest.mark.parametrize("gamma, eps, t_e", [(10, 0.1, 0.1), (10, 0.1, 0.01), (3, 0.2, 0.05), (50, 0.5, 0.3)])
def test_t_f_exact_brute_force(gamma, eps, t_e):
    # twin: scan far past the Chebyshev threshold, no horizon argument
    t_f = splu.t_f_exact(gamma, eps, t_e)
    f = np.arange(1, int(3 * splu.t_f_corrected(gamma, eps, t_e)) + 10)
    tail = splu.utility_tail(f, gamma, eps)
    assert np.all(tail[f >= t_f] <= t_e)
    if t_f > 1:
        assert tail[t_f - 2] > t_e  # f = t_f - 1 fails
    assert t_f <= splu.t_f_corrected(gamma, eps, t_e) + 1


def test_utility_curve():
    c = bounds.compute("splu-utility")
    assert c.x[0] == 1 and c.x[-1] == 1000
    assert c.notes["T_f_exact"] == 251  # gamma = 10, eps = 0.1, T_E = 0.1
    assert_allclose(c.notes["T_f_corrected"], 900, rtol=1e-12)
    assert_allclose(c.notes["T_f_published"], 10, rtol=1e-12)
    assert c.notes["T_f_published"] < c.notes["T_f_exact"] < c.notes["T_f_corrected"]
    assert c.hlines == {"T_E": 0.1}
    assert c.label("published") == "as published (incorrect): 1/(γ ε² f²)"
    assert "as published (incorrect)" in c.to_json()["labels"]["published"]
    i = [int(np.flatnonzero(c.x == f)[0]) for f in F_CHECK]
    assert_allclose(c.series["exact"][i], [0.316, 0.0725, 0.00167], rtol=2e-3)


# ------------------------------------------------------------------- retention
def test_retention_seed002_example1_unpartitioned():
    # seed 002 Example 1 / MECHANISMS.md §0: m = 10, (rho1, rho2) = (1/3, 2/3):
    # gamma = 4, p = 3/13, P[x->x] = 4/13, P[x->y] = 1/13.
    gamma = retention.gamma_from_rho(1 / 3, 2 / 3)
    assert_allclose(gamma, 4, rtol=1e-12)
    p = retention.retention_from_gamma(gamma, 10)
    assert_allclose(p, 3 / 13, rtol=1e-12)
    diag, off = retention.uniform_transition(p, 10)
    assert_allclose([diag, off], [4 / 13, 1 / 13], rtol=1e-12)
    assert_allclose(p + (1 - p) / 10, 4 / 13, rtol=1e-12)
    assert_allclose(retention.gamma_from_retention(p, 10), 4, rtol=1e-12)


def test_retention_seed002_example1_partitioned():
    # seed 002 Example 1 / MECHANISMS.md §3: T1 (m1 = 6, rho11 = 1/3): gamma 4,
    # diagonal 4/9, off 1/9; T2 (m2 = 6, rho12 = 1/6): gamma 10, diagonal 2/3, off 1/15.
    for rho1, gamma_want, diag_want, off_want in [(1 / 3, 4, 4 / 9, 1 / 9), (1 / 6, 10, 2 / 3, 1 / 15)]:
        gamma = retention.gamma_from_rho(rho1, 2 / 3)
        assert_allclose(gamma, gamma_want, rtol=1e-12)
        diag, off = retention.uniform_transition(retention.retention_from_gamma(gamma, 6), 6)
        assert_allclose([diag, off], [diag_want, off_want], rtol=1e-12)


def test_retention_table2_up_row():
    # seed 002 §6.2, rho1 = 1/13, rho2 = 1/L, OCC with m = 50: eq. 6 then eq. 4 give
    # gamma = 12/5, 3, 4, 6 and p = 1.4/51.4, 2/52, 3/53, 5/55 (2.72%, 3.85%, 5.66%, 9.09%).
    gammas = [retention.gamma_from_rho(1 / 13, 1 / L) for L in (6, 5, 4, 3)]
    assert_allclose(gammas, [2.4, 3, 4, 6], rtol=1e-12)
    p = retention.retention_from_gamma(np.array(gammas), 50)
    assert_allclose(p, [1.4 / 51.4, 2 / 52, 3 / 53, 5 / 55], rtol=1e-12)
    # The paper's Table 2 prints UP = 2.9%, 4.0%, 5.9%, 9.4%: 0.15-0.3 points higher
    # than eq. 4 / eq. 6 give (its text also says gamma = 2.5, not 2.4, for L = 6).
    # Not reproduced exactly; we keep the equations.
    assert_allclose(p, [0.029, 0.040, 0.059, 0.094], atol=0.004)


def test_retention_krr_equivalence():
    # MECHANISMS.md §0: UP is k-RR with epsilon_LDP = ln(gamma): diagonal/off-diagonal = gamma
    for gamma, m in [(2.4, 50), (4, 10), (np.e, 1000)]:
        diag, off = retention.uniform_transition(retention.retention_from_gamma(gamma, m), m)
        assert_allclose(diag / off, gamma, rtol=1e-12)
    c = bounds.compute("retention")
    assert_allclose(c.notes["epsilon_ldp"], math.log(2.4), rtol=1e-12)


@FAST
@given(gamma=st.floats(1, 1e6), m=st.integers(1, 10**6))
def test_retention_round_trip(gamma, m):
    p = retention.retention_from_gamma(gamma, m)
    assert 0 <= p < 1
    assert_allclose(retention.gamma_from_retention(p, m), gamma, rtol=1e-6)


def test_retention_functions_accept_arrays():
    m = np.arange(2, 6)
    p = retention.retention_from_gamma(4.0, m)
    assert p.shape == (4,)
    assert_allclose(p, 3 / (m + 3))
    assert_allclose(retention.gamma_from_retention(p, m), 4.0)


@pytest.mark.parametrize("rho1, rho2", [(0.5, 0.2), (0.3, 0.3), (0, 0.5), (0.2, 1.0), (float("nan"), 0.5)])
def test_gamma_from_rho_refuses(rho1, rho2):
    with pytest.raises(ParameterError, match=r"0 < rho1 < rho2 < 1"):
        retention.gamma_from_rho(rho1, rho2)


def test_retention_function_validation():
    with pytest.raises(ParameterError, match="gamma"):
        retention.retention_from_gamma(0.5, 10)
    with pytest.raises(ParameterError, match="domain size m"):
        retention.retention_from_gamma(2, 0)
    with pytest.raises(ParameterError, match="retention probability p"):
        retention.gamma_from_retention(1.0, 10)


def test_retention_curve_rho_order():
    with pytest.raises(ParameterError) as info:
        bounds.compute("retention", {"rho1": "1/3", "rho2": "1/6"})
    assert str(info.value) == (
        "The 'rho1' parameter of bound retention must be smaller than 'rho2' (1/6): "
        "the posterior bound must exceed the prior bound. Got 1/3."
    )


def test_retention_curve():
    c = bounds.compute("retention", {"rho1": "1/3", "rho2": "2/3", "m": "10", "m_max": "20"})
    assert c.x.tolist() == list(range(2, 21))
    assert_allclose(c.series["p"][c.x == 10], 3 / 13, rtol=1e-12)
    assert_allclose([c.notes["diagonal_at_m"], c.notes["off_diagonal_at_m"]], [4 / 13, 1 / 13], rtol=1e-12)
    # Table 2 reference series only where rho2 = 1/L exceeds rho1 = 1/3: none
    assert set(c.series) == {"p"}
    c = bounds.compute("retention", {"rho1": 0.22, "rho2": 0.5})
    assert set(c.series) == {"p", "p_L4", "p_L3"}
    assert c.labels["p"].startswith("ρ₁ = 0.22, ρ₂ = 0.5")
    c = bounds.compute("retention")
    assert set(c.series) == {"p", "p_L6", "p_L5", "p_L4", "p_L3"}
    assert_allclose(c.series["p"], c.series["p_L6"])  # defaults are L = 6
    assert np.all(np.diff(c.series["p"]) < 0)  # retention falls with the domain size


# -------------------------------------------------------------------- chernoff
def test_chernoff_hand_checked_point():
    # n = 100, q = 0.3, e = 0.3: mu = 30, thresholds 39 and 21.
    # Exact tails by rational enumeration: P[X >= 39] = 0.0339790, P[X <= 21] = 0.0288313.
    # Chernoff: exp(30 (0.3 - 1.3 ln 1.3)) = 0.291648, exp(30 (-0.3 - 0.7 ln 0.7)) = 0.220948;
    # simplified: exp(-30 * 0.09/3) = exp(-0.9), exp(-30 * 0.09/2) = exp(-1.35).
    q = Fraction(3, 10)
    up = float(sum(_binom_pmf_exact(100, q, k) for k in range(39, 101)))
    lo = float(sum(_binom_pmf_exact(100, q, k) for k in range(0, 22)))
    assert_allclose([up, lo], [0.0339790, 0.0288313], rtol=1e-5)
    c = bounds.compute("chernoff")
    n = c.notes
    assert_allclose([n["exact_upper_at_e"], n["exact_lower_at_e"]], [up, lo], rtol=1e-10)
    assert_allclose([n["chernoff_upper_at_e"], n["chernoff_lower_at_e"]], [0.291648, 0.220948], rtol=1e-5)
    assert_allclose([n["simplified_upper_at_e"], n["simplified_lower_at_e"]],
                    [math.exp(-0.9), math.exp(-1.35)], rtol=1e-12)
    assert n["mu"] == 30 and n["upper_threshold"] == 39 and n["lower_threshold"] == 21


def _assert_bounds_hold(c):
    s = c.series
    tol = 1e-12
    for side in ("upper", "lower"):
        exact = s[f"exact_{side}"]
        assert np.all(s[f"chernoff_{side}"] >= exact - tol), side
        assert np.all(s[f"simplified_{side}"] >= exact - tol), side
        # the full Chernoff bound is the tighter one (Theorem 4.8 vs its simplification)
        assert np.all(s[f"chernoff_{side}"] <= s[f"simplified_{side}"] + tol), side


@pytest.mark.parametrize("n, q", [(100, 0.3), (1, 0.5), (5, 0.01), (20, 0.99), (1000, 0.5), (100000, 0.001)])
def test_chernoff_bounds_hold_on_grid(n, q):
    c = bounds.compute("chernoff", {"n": n, "q": q})
    assert c.x.size == 200 and 0 < c.x.min() and c.x.max() < 1
    _assert_bounds_hold(c)


@FAST
@given(n=st.integers(1, 3000), q=st.floats(0.001, 0.999))
def test_chernoff_bounds_hold_property(n, q):
    _assert_bounds_hold(bounds.compute("chernoff", {"n": n, "q": q}))


def test_exact_tail_two_groups_brute_force():
    # micro-group shape (MECHANISMS.md §2): o_x = 3 records keep x with p + (1-p)/m,
    # 4 others turn into x with (1-p)/m; enumerate all 2^7 outcomes.
    counts, probs = [3, 4], [0.7, 0.1]
    trial_p = [0.7] * 3 + [0.1] * 4
    dist = np.zeros(8)
    for outcome in itertools.product([0, 1], repeat=7):
        dist[sum(outcome)] += math.prod(pi if o else 1 - pi for o, pi in zip(outcome, trial_p))
    assert_allclose(chernoff.sum_pmf(counts, probs), dist, atol=1e-15)
    t = np.array([-1, 0, 0.5, 2, 2.0000000000000004, 3.7, 7, 8])
    upper = [dist[max(0, math.ceil(x)):].sum() if x <= 7 else 0.0 for x in [-1, 0, 0.5, 2, 2, 3.7, 7, 8]]
    lower = [dist[: math.floor(x) + 1].sum() if x >= 0 else 0.0 for x in [-1, 0, 0.5, 2, 2, 3.7, 7, 8]]
    assert_allclose(chernoff.exact_tail(counts, probs, t, side="upper"), upper, atol=1e-15)
    assert_allclose(chernoff.exact_tail(counts, probs, t, side="lower"), lower, atol=1e-15)


def test_exact_tail_paths_agree():
    # one group (scipy sf/cdf) == the same group through the pmf path (empty second
    # group) == two equal groups merged (Bin(a, q) + Bin(b, q) = Bin(a + b, q)),
    # including the FFT convolution for large groups.
    t = np.linspace(0, 80, 33)
    for side in ("upper", "lower"):
        one = chernoff.exact_tail([200], [0.2], t, side=side)
        assert_allclose(chernoff.exact_tail([200, 0], [0.2, 0.5], t, side=side), one, rtol=1e-10, atol=1e-15)
        assert_allclose(chernoff.exact_tail([120, 80], [0.2, 0.2], t, side=side), one, rtol=1e-10, atol=1e-15)
    big = chernoff.exact_tail([3000, 3000], [0.3, 0.3], [1700, 1900], side="upper")  # 9e6 > FFT cut-off
    assert_allclose(big, stats.binom.sf([1699, 1899], 6000, 0.3), rtol=1e-6, atol=1e-14)


def test_sum_pmf_mean():
    pmf = chernoff.sum_pmf([50, 30, 7], [0.2, 0.9, 0.5])
    assert_allclose(pmf.sum(), 1, rtol=1e-12)
    assert_allclose(np.arange(pmf.size) @ pmf, 50 * 0.2 + 30 * 0.9 + 7 * 0.5, rtol=1e-12)


@pytest.mark.parametrize("counts, probs, side, message", [
    ([3, 4], [0.5], "upper", "same non-zero length"),
    ([-1], [0.5], "upper", "whole number"),
    ([2.5], [0.5], "upper", "whole number"),
    ([3], [1.5], "upper", r"in \[0, 1\]"),
    ([3], [0.5], "both", "'upper' or 'lower'"),
])
def test_exact_tail_validation(counts, probs, side, message):
    with pytest.raises(ParameterError, match=message):
        chernoff.exact_tail(counts, probs, 1, side=side)


# --------------------------------------------------------- contract and params
def test_registered_in_order():
    names = [n for n in bounds.BOUNDS if n in OURS]
    assert names == sorted(OURS, key=OURS.get)
    for name, order in OURS.items():
        assert bounds.get(name).order == order


@pytest.mark.parametrize("name", OURS)
def test_declaration_is_complete(name):
    b = bounds.get(name)
    assert b.title and b.paper.startswith("seed ") and len(b.explain) > 200
    for p in b.params:
        assert p.symbol and p.help and p.paper
        assert p.validate(p.default, f"bound {name}") == p.default  # defaults lie in range
        assert p.safer in {None, "higher", "lower"}


@pytest.mark.parametrize("name", OURS)
def test_curve_json_contract(name):
    c = bounds.compute(name)
    out = c.to_json()
    json.dumps(out, allow_nan=False)
    assert out["name"] == name
    assert out["x_label"] and out["y_label"] and out["caption"]
    assert out["series"] and set(out["labels"]) == set(out["series"])
    assert all(c.labels.get(k) for k in out["series"])  # every series has a real label
    for key, values in out["series"].items():
        assert len(values) == len(out["x"]), key
        assert all(v is None or 0 <= v <= 1 for v in values), key  # probabilities


@pytest.mark.parametrize("name", OURS)
def test_parameter_validation(name):
    b = bounds.get(name)
    for p in b.params:
        for bad in p.invalid_examples():
            with pytest.raises(ParameterError) as info:
                b.curve({p.name: bad})
            msg = str(info.value)
            assert msg.startswith(f"The '{p.name}' parameter of bound {name} must be "), msg
            assert msg.endswith(".")


def test_standard_message_form():
    with pytest.raises(ParameterError) as info:
        bounds.compute("splu-privacy", {"gamma": 1})
    assert str(info.value) == "The 'gamma' parameter of bound splu-privacy must be an integer in [2, 50]. Got 1."
    with pytest.raises(ParameterError, match="has no parameter 'lambda'"):
        bounds.compute("chernoff", {"lambda": 0.3})


def test_cli_style_strings():
    # values arrive as strings from `python -m core bound NAME --param k=v`
    c = bounds.compute("splu-privacy", {"gamma": "10", "eps": "0.3", "alpha": "3", "f_max": "6"})
    assert_allclose(c.series["privacy"], [0.613, 0.715, 0.764, 0.429, 0.480, 0.519], atol=5e-4)
    c = bounds.compute("retention", {"rho1": "1/13", "rho2": "1/6"})
    assert_allclose(c.notes["gamma"], 2.4, rtol=1e-12)
