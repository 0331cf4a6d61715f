"""Uniform perturbation: transition matrix, gamma <-> p, unbiased MLE, k-RR agreement."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from core import mechanisms
from core.counting import QueryBatch
from core.errors import ParameterError
from core.mechanisms.uniform import mle, perturb
from core.table import bind, make_table

UP = mechanisms.get("uniform")


def small_table(n=2000, m=10, seed=0):
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({
        "a": rng.integers(0, 3, n),
        "b": rng.choice(["x", "y"], n),
        "s": [f"v{i}" for i in rng.integers(0, m, n)],
    })
    return bind(make_table(frame, "small"), "s", ["a", "b"])


def test_seed002_example1_unpartitioned():
    # seed 002 Example 1: m = 10, (rho1, rho2) = (1/3, 2/3) -> gamma = 4, diagonal 4/13, off-diagonal 1/13
    data = small_table(m=10)
    d = UP.derived(data, UP.resolve({"rho1": "1/3", "rho2": "2/3"}))
    np.testing.assert_allclose(d["gamma"], 4.0)
    np.testing.assert_allclose(d["diagonal"], 4 / 13)
    np.testing.assert_allclose(d["off_diagonal"], 1 / 13)
    np.testing.assert_allclose(d["p"], 3 / 13)


def test_rho1_must_be_below_rho2():
    with pytest.raises(ParameterError, match="rho1 < rho2"):
        UP.resolve({"rho1": 0.3, "rho2": 0.2})
    UP.resolve({"rho1": 0.3, "rho2": 0.2, "p": 0.5})  # p given: rho only reported


def test_transition_matrix_statistically():
    rng = np.random.default_rng(12)
    m, p, n = 5, 0.3, 200_000
    out = perturb(np.full(n, 2), p, m, rng)
    observed = np.bincount(out, minlength=m)
    expected = n * np.array([(1 - p) / m] * m)
    expected[2] += n * p
    chi2 = stats.chisquare(observed, expected)
    assert chi2.pvalue > 0.001


def test_mle_is_unbiased_over_many_releases():
    data = small_table(n=600, m=6, seed=3)
    batch = QueryBatch(attrs=(0, 1), values=np.array([[1, 0], [2, 1]]), sa=np.eye(6, dtype=bool)[[0, 3]])
    from core.workload import data_records
    from core.counting import select

    true = select(data_records(data).counts(batch), batch.sa)
    ests = np.array([mechanisms.estimate(mechanisms.sanitize(data, "uniform", {"p": 0.4}, seed=s), [batch])
                     for s in range(400)])
    se = ests.std(axis=0, ddof=1) / np.sqrt(len(ests))
    assert np.all(np.abs(ests.mean(axis=0) - true) < 4 * se)


def test_same_seed_same_release_and_rows_shuffled():
    data = small_table()
    a = mechanisms.sanitize(data, "uniform", {"p": 0.5}, seed=7)
    b = mechanisms.sanitize(data, "uniform", {"p": 0.5}, seed=7)
    c = mechanisms.sanitize(data, "uniform", {"p": 0.5}, seed=8)
    pd.testing.assert_frame_equal(a.main_table.to_frame(), b.main_table.to_frame())
    assert not a.main_table.to_frame().equals(c.main_table.to_frame())
    # shuffled: the QI multiset is unchanged but the order is not the input order
    fa = a.main_table.to_frame()
    orig = data.frame()
    assert sorted(map(tuple, fa[["a", "b"]].astype(str).values)) == sorted(map(tuple, orig[["a", "b"]].astype(str).values))
    assert not (fa["a"].to_numpy() == orig["a"].to_numpy()).all()


def test_estimates_agree_with_k_rr_in_multi_freq_ldpy():
    """UP with retention p is k-RR with epsilon = ln(gamma): the LDP estimator must agree."""
    ldp = pytest.importorskip("multi_freq_ldpy.estimators.Histogram_estimator")
    data = small_table(n=20_000, m=8, seed=5)
    rel = mechanisms.sanitize(data, "uniform", {"p": 0.6}, seed=1)
    m, p = data.m, rel.params["p"]
    pub = rel.main_table.columns["s"]
    reports = np.bincount(pub, minlength=m).astype(float)
    gamma = rel.params["gamma"]
    p_grr = np.exp(np.log(gamma)) / (np.exp(np.log(gamma)) + m - 1)
    q_grr = (1 - p_grr) / (m - 1)
    theirs = ldp.MI(reports, len(pub), p_grr, q_grr) * len(pub)
    ours = mle(reports, np.full(m, len(pub)), np.ones(m), p, m)
    assert ours.min() > 0  # no clipping on their side, so the two must match exactly
    np.testing.assert_allclose(ours, theirs, rtol=1e-12)
