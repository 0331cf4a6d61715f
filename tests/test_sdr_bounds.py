"""The sdr-error bound (core/bounds/sdr.py): eq. 11-12 values, the curve, and Theorem 2 checked by simulation."""

from __future__ import annotations

import math

import numpy as np
import pytest

from core import bounds
from core.bounds.retention import retention_from_gamma
from core.bounds.sdr import error_bound, parse_counts
from core.errors import ParameterError
from core.mechanisms.sdr import plan
from core.mechanisms.uniform import perturb


def test_example1_subtable_bounds():
    # seed 002 Example 1 / 4: T1 (36 records, m = 6, gamma 4) and T2 (6, 6, 10); T unpartitioned (42, 10, 4)
    a = 2 * math.sqrt(math.log(2 / 0.05))
    np.testing.assert_allclose(error_bound(36, 6, 4), a / 6 * 3)
    np.testing.assert_allclose(error_bound(6, 6, 10), a / math.sqrt(6) * (6 / 9 + 1))
    np.testing.assert_allclose(error_bound(42, 10, 4), a / math.sqrt(42) * (10 / 3 + 1))
    np.testing.assert_allclose(error_bound([36, 6], [6, 6], [4, 10]), [1.9206456, 2.6136676], rtol=1e-6)
    assert error_bound(100, 5, np.inf) == pytest.approx(2 * math.sqrt(math.log(40) / 100))  # p = 1


def test_theorem2_holds_by_simulation():
    # Pr[|f - f*| / |T| <= eps] >= 1 - delta for one value, with eps from eq. 11 (the Chernoff
    # bound is loose: the observed failure rate is far below delta)
    rng = np.random.default_rng(2024)
    n, m, gamma, delta = 3000, 10, 3.0, 0.3
    eps = error_bound(n, m, gamma, delta)
    p = retention_from_gamma(gamma, m)
    sa = np.repeat(np.arange(m), n // m)
    true_share = np.mean(sa == 0)
    fails = 0
    runs = 400
    for _ in range(runs):
        out = perturb(sa, p, m, rng)
        est_share = (np.mean(out == 0) - (1 - p) / m) / p
        fails += abs(est_share - true_share) > eps
    assert fails / runs <= delta
    # and a tighter "bound" (a quarter of eps) is broken often: eps is not vacuous here
    tight = eps / 4
    rng = np.random.default_rng(7)
    broken = sum(abs((np.mean(perturb(sa, p, m, rng) == 0) - (1 - p) / m) / p - true_share) > tight
                 for _ in range(200))
    assert broken > 0


def test_curve_defaults_and_notes():
    c = bounds.compute("sdr-error")
    assert c.x[0] == 42 and c.log_x and c.log_y
    # at |T| = 42 the curve runs PP on Example 1's table itself
    assert c.series["pp"][0] == pytest.approx(plan(np.array([12, 8, 6, 5, 4, 3, 1, 1, 1, 1]), 1 / 3, 2 / 3).eps_part)
    np.testing.assert_allclose(c.series["up"], error_bound(c.x, 10, 4.0))  # UP on Example 1's 10-value table
    assert np.all(c.series["pp"] < c.series["up"])
    assert c.notes["subtables_at_counts"] == 2
    assert "2 sub-table" in c.caption
    # eps falls like 1/sqrt(|T|) for fixed m and gamma
    ratio = c.series["m50"] * np.sqrt(c.x)
    np.testing.assert_allclose(ratio, ratio[0])


def test_parse_counts():
    assert parse_counts("12, 8;6 5").tolist() == [12, 8, 6, 5]
    for bad in ("", "3", "a,b", "-1,4", "0,0,5"):
        with pytest.raises(ParameterError):
            parse_counts(bad)
