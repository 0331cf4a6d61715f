"""Seed 003 Theorem 2 (differential inference) and the differential-inference curve, including the CLI."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import integrate

from core.bounds import compute
from core.bounds.differential import (
    bias_factor, principal_value_factor, robust_sd, simulate, theorem2, trimmed_mean)
from test_cli import ok, run_inprocess


def test_theorem2_numbers_of_the_paper():
    # seed 003 §2.1: eps = 0.1, x = 100: 2b^2/x^2 = 0.02, "E[Y/X] is 1.02 times y/x"; x = 1000: 1.0002
    assert bias_factor(100, 0.1) == pytest.approx(1.02)
    assert bias_factor(1000, 0.1) == pytest.approx(1.0002)
    mean, var = theorem2(100, 99, 0.1)
    assert mean == pytest.approx(0.99 * 1.02)
    assert var == pytest.approx(0.02 * (1 + 0.99**2))
    # Corollary 1: both go to y/x and 0
    mean, var = theorem2(1e6, 0.5e6, 0.1)
    assert mean == pytest.approx(0.5, rel=1e-8) and var < 1e-9


def _pv_by_quadrature(x, b):
    f = lambda t: np.exp(-abs(t - x) / b) / (2 * b)  # noqa: E731
    g = lambda t: (f(t) - f(-t)) / t  # noqa: E731  symmetric pairing = Cauchy principal value
    return x * sum(integrate.quad(g, lo, hi, limit=200)[0] for lo, hi in [(0, x), (x, x + 80 * b)])


@pytest.mark.parametrize("x", [30, 100, 300, 1000])
def test_principal_value_closed_form(x):
    assert principal_value_factor(x, 0.1) == pytest.approx(_pv_by_quadrature(x, 10.0), rel=1e-8)


def test_exact_value_beside_the_papers_second_order_one():
    # the finite (principal) value is 1.02355 at x = 100 and 1.00020024 at x = 1000; the paper truncates
    # the series 1 + 2b^2/x^2 + 24b^4/x^4 + ... after its second term
    assert principal_value_factor(100, 0.1) == pytest.approx(1.0235518, abs=1e-7)
    assert principal_value_factor(1000, 0.1) == pytest.approx(1.00020024, abs=1e-8)
    assert principal_value_factor(100, 0.1) - 1.02 == pytest.approx(0.0024 + 0.00072 + 0.0004, abs=4e-4)
    # the large-z branch joins the closed form smoothly
    for x in (4999.0, 5001.0):
        z = x / 10
        assert principal_value_factor(x, 0.1) == pytest.approx(1 + 2 / z**2 + 24 / z**4, abs=1e-12)


def test_monte_carlo_converges_to_y_over_x():
    rng = np.random.default_rng(7)
    for x, tol in ((100, 0.02), (1000, 0.002), (10000, 0.0002)):
        r = simulate(x, 0.9 * x, 0.1, 200_000, rng)
        assert abs(np.median(r) / 0.9 - 1) < tol
        assert abs(trimmed_mean(r) / 0.9 - 1) < 2 * tol
        # the spread is the theorem's sd (IQR of a Laplace-ratio, close to normal for large x)
        sd = np.sqrt(theorem2(x, 0.9 * x, 0.1)[1])
        assert robust_sd(r) == pytest.approx(sd, rel=0.25)


def test_plain_mean_has_no_limit_when_x_is_small():
    # E|1/X| is infinite: over growing samples the mean of |1/X| keeps growing (x = 5, b = 10)
    rng = np.random.default_rng(3)
    means = [np.mean(np.abs(1 / (5 + rng.laplace(0, 10, n)))) for n in (10**3, 10**5, 10**7 // 4)]
    assert means[0] < means[2]


def test_curve_series_and_notes():
    c = compute("differential-inference")
    assert {"theorem", "principal_value", "mc_median", "mc_trimmed", "theorem_sd", "mc_robust_sd"} <= set(c.series)
    assert c.notes["theorem_factor_at_x"] == pytest.approx(1.02)
    assert c.notes["principal_value_factor_at_x"] == pytest.approx(1.0235518, abs=1e-6)
    assert np.all(np.diff(c.series["theorem"]) < 0)  # the bias falls with x
    assert abs(c.series["mc_median"][-1] - 1) < 0.01
    c2 = compute("differential-inference", {"epsilon": "1", "x": "1000"})
    assert c2.notes["theorem_factor_at_x"] == pytest.approx(1.000002)


def test_cli_bound_json():
    res = json.loads(ok("bound", "differential-inference", "--param", "epsilon=0.1", "--param", "x=1000", "--json"))
    assert res["notes"]["theorem_factor_at_x"] == pytest.approx(1.0002)
    assert len(res["x"]) == len(res["series"]["theorem"]) == len(res["series"]["theorem_sd"])
    bad = run_inprocess("bound", "differential-inference", "--param", "epsilon=0")
    assert bad.returncode != 0 and "epsilon" in bad.stderr and bad.stderr.count("\n") <= 1
