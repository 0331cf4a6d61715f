"""Property tests for PP (hypothesis): Lemma 1, Lemma 2 / Theorem 5, the merge DP against brute force.

Lemma 1 (seed 002 §5.1, appendix 10.5), for SA' = SA and every iteration of
the balancing phase: (i) the group is theta-balanced; (ii) the rest stays
theta-balanced and h <= mu_theta; (iii) h is the largest value with (ii).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from core.errors import NotEligible
from core.mechanisms.sdr import (
    balance,
    initial_groups,
    is_balanced,
    merge,
    plan,
    protected_values,
    rcm_order,
    segments,
)

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

counts_st = st.lists(st.integers(0, 60), min_size=2, max_size=25).filter(lambda c: sum(c) > 0)


def _top(rest, theta, rank):
    order = np.lexsort((rank, -rest))
    return order[:theta]


@SETTINGS
@given(counts_st)
def test_lemma1_balancing_invariants(counts):
    counts = np.array(counts)
    rank = np.arange(len(counts))
    theta, groups = balance(counts)
    assert theta == counts.sum() // counts.max()
    np.testing.assert_array_equal(groups.sum(axis=0), counts)  # a partition of T
    rest = counts.copy()
    for j, g in enumerate(groups):
        assert is_balanced(rest, theta)  # T0 is theta-balanced before each iteration
        assert is_balanced(g, theta)  # (i)
        top = _top(rest, theta, rank)
        mu = np.sort(rest)[::-1]
        h = int(g[top[0]])
        regular = h > 0 and np.all(g[top] == h) and g.sum() == theta * h
        if regular:
            # h records of each of the theta most frequent values of T0 (ties by value order)
            assert h <= mu[theta - 1]  # (ii)
            assert is_balanced(rest - g, theta)  # (ii)
            bigger = np.zeros_like(g)
            bigger[top] = h + 1
            assert h + 1 > mu[theta - 1] or not is_balanced(rest - bigger, theta)  # (iii)
        else:
            # the h = 0 case: the rest is the last group, and even h = 1 would break (ii)
            assert j == len(groups) - 1
            np.testing.assert_array_equal(g, rest)
            one = np.zeros_like(g)
            one[top] = 1
            assert 1 > mu[theta - 1] or not is_balanced(rest - one, theta)
        rest = rest - g
    assert rest.sum() == 0


@SETTINGS
@given(counts_st, st.floats(0.01, 0.95), st.floats(0.0, 1.0))
def test_every_subtable_meets_rho1_i_below_rho2(counts, rho1, gap):
    counts = np.array(counts)
    rho2 = rho1 + (0.999 - rho1) * max(gap, 1e-3)
    assume(rho1 < rho2 < 1)
    prot = protected_values(counts, rho1)
    assume(prot.any())
    pl = plan(counts, rho1, rho2)
    np.testing.assert_array_equal(pl.counts.sum(axis=0), counts)  # sub-tables partition T
    assert np.all(pl.rho1_i < rho2)
    # rho1_i is the largest share of a protected value in T_i (eq. 9)
    share = np.where(prot, pl.counts, 0).max(axis=1) / pl.counts.sum(axis=1)
    np.testing.assert_allclose(pl.rho1_i, share)
    # eq. 10 and eq. 4
    np.testing.assert_allclose(pl.gamma, rho2 * (1 - share) / (share * (1 - rho2)))
    np.testing.assert_allclose(pl.p, (pl.gamma - 1) / (pl.m - 1 + pl.gamma))
    # every initial group went to exactly one sub-table, contiguous in band order
    sub = pl.subtable_of_group[pl.order]
    assert np.all(np.diff(sub) >= 0) and sub[0] == 0 and sub[-1] == len(pl.size) - 1


@SETTINGS
@given(counts_st)
def test_theorem3_subtables_are_theta_balanced(counts):
    # SA' = SA: every T_i is theta-balanced, so rho1_i <= 1/theta (Theorem 3 (i))
    counts = np.array(counts)
    rho1 = counts.max() / counts.sum()
    assume(rho1 < 0.95)
    pl = plan(counts, rho1, (rho1 + 1) / 2)
    assert pl.protected[counts > 0].all()
    for c in pl.counts:
        assert is_balanced(c, pl.theta)


@SETTINGS
@given(st.lists(st.integers(0, 80), min_size=3, max_size=16).filter(lambda c: sum(c) > 0), st.floats(0.02, 0.6))
@pytest.mark.slow
def test_lemma2_skewed_groups(counts, rho1):
    # SA' strictly inside SA (appendix 10.7): every initial group is theta'-balanced on the protected
    # records alone, and the protected share in a group with the other records spread in is at most
    # alpha / (theta - alpha), alpha = 1 / (1 - 1/theta') (Lemma 2, Theorem 5 (i)), when theta > alpha.
    counts = np.array(counts)
    prot = protected_values(counts, rho1)
    assume(prot.any() and (~prot & (counts > 0)).any())
    theta_p, groups = initial_groups(counts, prot)
    kept = np.where(prot, counts, 0)
    assert theta_p == kept.sum() // kept.max()
    np.testing.assert_array_equal(groups.sum(axis=0), counts)
    theta = counts.sum() // kept.max()
    for g in groups:
        assert is_balanced(np.where(prot, g, 0), theta_p)
    if theta_p >= 2:
        alpha = 1 / (1 - 1 / theta_p)
        if theta > alpha:
            bound = alpha / (theta - alpha)
            for g in groups:
                assert np.where(prot, g, 0).max() / g.sum() <= bound + 1e-12


def _brute(ordered, protected, rho2, delta):
    t = len(ordered)
    n = ordered.sum()
    best, best_cuts = np.inf, None
    for mask in itertools.product([False, True], repeat=t - 1):
        cuts = [0] + [i + 1 for i, cut in enumerate(mask) if cut] + [t]
        c = np.array([ordered[a:b].sum(axis=0) for a, b in zip(cuts[:-1], cuts[1:])])
        s = segments(c, protected, rho2, delta)
        if not s.ok.all():
            continue
        e = float((s.size * s.eps).sum() / n)
        if e < best - 1e-12:
            best, best_cuts = e, cuts
    return best, best_cuts


groups_st = st.integers(1, 8).flatmap(lambda t: st.integers(2, 6).flatmap(lambda m: st.tuples(
    st.lists(st.lists(st.integers(0, 12), min_size=m, max_size=m).filter(lambda r: sum(r) > 0),
             min_size=t, max_size=t),
    st.lists(st.booleans(), min_size=m, max_size=m),
)))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(groups_st, st.floats(0.05, 0.95), st.sampled_from([0.01, 0.05, 0.2]))
@pytest.mark.slow
def test_merge_dp_matches_brute_force_over_all_contiguous_splits(gp, rho2, delta):
    ordered, protected = np.array(gp[0]), np.array(gp[1])
    best, cuts = _brute(ordered, protected, rho2, delta)
    if not np.isfinite(best):
        try:
            merge(ordered, protected, rho2, delta)
        except NotEligible:
            return
        raise AssertionError("merge found a partition that brute force says does not exist")
    got = merge(ordered, protected, rho2, delta)
    c = np.array([ordered[a:b].sum(axis=0) for a, b in zip(got[:-1], got[1:])])
    s = segments(c, protected, rho2, delta)
    assert s.ok.all()
    np.testing.assert_allclose(float((s.size * s.eps).sum() / ordered.sum()), best, rtol=1e-12)


@SETTINGS
@given(st.integers(1, 12).flatmap(lambda t: st.lists(
    st.lists(st.integers(0, 3), min_size=8, max_size=8).filter(lambda r: sum(r) > 0), min_size=t, max_size=t)))
@pytest.mark.slow
def test_rcm_is_a_permutation_keeping_components_contiguous(rows):
    groups = np.array(rows)
    order = rcm_order(groups)
    assert sorted(order.tolist()) == list(range(len(groups)))
    # components appear as contiguous runs, in order of their lowest group index
    present = groups > 0
    adj = (present.astype(int) @ present.T.astype(int)) > 0
    comp = -np.ones(len(groups), dtype=int)
    c = 0
    for s in range(len(groups)):
        if comp[s] >= 0:
            continue
        stack = [s]
        comp[s] = c
        while stack:
            g = stack.pop()
            for h in np.flatnonzero(adj[g]):
                if comp[h] < 0:
                    comp[h] = c
                    stack.append(h)
        c += 1
    seq = comp[order]
    assert np.all(np.diff(seq) >= 0)
