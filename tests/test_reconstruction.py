"""(lambda, delta)-reconstruction privacy (seed 001): the test, the threshold, Algorithm 1, the estimator.

Seed 001's extraction lost most symbols; MECHANISMS.md §2 reconstructs the
formulas.  Each formula is checked here numerically against an independent
evaluation (brute force, exact distributions, simulation).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st
from scipy import stats

from core import mechanisms
from core.bounds.chernoff import chernoff_lower, chernoff_upper, simplified_lower, simplified_upper, sum_pmf
from core.bounds.reconstruction import exact_error_tails
from core.counting import QueryBatch, select
from core.errors import NotEligible, ParameterError
from core.mechanisms.reconstruction import (
    FAMILIES, algorithm1, analyse, conversion_e, duplicates, group_ids, group_violates, is_private,
    largest_safe_p, micro_groups, sample_counts, sample_sizes, simulate_group, tail_bounds, threshold)
from core.table import bind, load_dataset, make_table
from core.workload import data_records

RP = mechanisms.get("reconstruction")


@pytest.fixture(scope="module")
def adult():
    return load_dataset("adult", "occupation")


def grouped_table(seed=0, n_groups=12, sizes=(5, 200), m=6, skew=3.0):
    """A table of a few micro groups of very different sizes and skews (some violate at lambda = delta = 0.5)."""
    rng = np.random.default_rng(seed)
    rows = []
    for g in range(n_groups):
        size = int(rng.integers(*sizes))
        probs = rng.dirichlet(np.full(m, 1.0 / skew))
        for v in rng.choice(m, size=size, p=probs):
            rows.append((g % 4, g // 4, f"v{v}"))
    frame = pd.DataFrame(rows, columns=["a", "b", "s"])
    return bind(make_table(frame, f"grouped{seed}"), "s", ["a", "b"])


# ------------------------------------------------------------------ Theorem 4.6
@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 300), frac=st.floats(0.01, 1.0), p=st.floats(0.05, 1.0), m=st.integers(2, 60),
       lam=st.floats(0.01, 0.99))
def test_bound_conversion_identity(n, frac, p, m, lam):
    # seed 001 Theorem 4.6 with Lemma 1's MLE: F' - f > lam f  <=>  O > (1 + e) mu, and the lower tail alike,
    # for every possible observed count O of a group of n records, o of them holding the value
    o = max(1, min(n, round(frac * n)))
    f = o / n
    q = (1 - p) / m
    mu = n * (f * p + q)
    e = conversion_e(f, p, m, lam)
    counts = np.arange(n + 1)
    estimate = (counts / n - q) / p            # Lemma 1 (ii)
    lhs_up, rhs_up = estimate - f > lam * f, counts > (1 + e) * mu
    lhs_low, rhs_low = estimate - f < -lam * f, counts < (1 - e) * mu
    # exclude counts sitting on the boundary up to rounding (both sides are then equalities)
    edge = np.isclose(counts, (1 + e) * mu, rtol=1e-9) | np.isclose(counts, (1 - e) * mu, rtol=1e-9)
    assert np.array_equal(lhs_up[~edge], rhs_up[~edge])
    assert np.array_equal(lhs_low[~edge], rhs_low[~edge])
    # Lemma 1 (i): the observed count's mean is mu (sum of two binomials), so F' is unbiased (Lemma 1 (iii))
    pmf = sum_pmf([o, n - o], [p + q, q])
    np.testing.assert_allclose(pmf @ counts, mu, rtol=1e-9, atol=1e-9)


@pytest.mark.slow
def test_bound_conversion_probabilities_match_simulation():
    # the exact tails of the reconstruction error (two binomials) against a simulation of the estimator
    n, o, p, m, lam = 100, 60, 0.46, 14, 0.3
    up, low = exact_error_tails(n, o, p, m, lam)
    est = simulate_group(np.array([0, 1]), np.array([o, n - o]), p, m, 200_000, np.random.default_rng(5))[:, 0]
    f = o / n
    for exact, hits in ((up, est - f > lam * f), (low, est - f < -lam * f)):
        se = math.sqrt(exact * (1 - exact) / len(est))
        assert abs(hits.mean() - exact) < 4 * se


# ------------------------------------------------------------------ Theorems 4.8, 5.11, 5.13
def test_full_bounds_claim1_upper_dominates_lower():
    # proof of Theorem 5.11, Claim 1: the full upper-tail bound is never below the lower-tail bound, 0 < e < 1
    e = np.linspace(1e-4, 1 - 1e-4, 2000)
    for mu in (0.5, 3.0, 40.0):
        assert np.all(chernoff_upper(mu, e) >= chernoff_lower(mu, e))
        assert np.all(simplified_upper(mu, e) >= simplified_lower(mu, e))
        # and the full bounds are tighter (smaller) than the simplified ones they approximate
        assert np.all(chernoff_lower(mu, e) <= simplified_lower(mu, e) * (1 + 1e-12))


def _brute_threshold(f, p, m, lam, delta, family):
    """Largest real n with both Chernoff bounds >= delta, by bisection on the bounds themselves."""
    q = (1 - p) / m
    e = lam * f * p / (f * p + q)
    up, low = (chernoff_upper, chernoff_lower) if family == "full" else (simplified_upper, simplified_lower)

    def ok(n):
        mu = n * (f * p + q)
        return min(float(up(mu, e)), float(low(mu, e))) >= delta

    lo, hi = 0.0, 1.0
    while ok(hi):
        hi *= 2
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if ok(mid) else (lo, mid)
    return lo


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("f, p, m, lam, delta", [
    (1.0, 0.46, 14, 0.5, 0.5), (0.75, 0.46, 14, 0.5, 0.5), (0.3, 0.22, 50, 0.3, 0.3),
    (0.9, 0.14, 50, 0.9, 0.1), (0.5, 0.9, 2, 0.1, 0.9), (0.05, 0.38, 16, 0.7, 0.7)])
def test_threshold_against_direct_evaluation_of_the_bounds(family, f, p, m, lam, delta):
    s = float(threshold(f, p, m, lam, delta, family))
    np.testing.assert_allclose(s, _brute_threshold(f, p, m, lam, delta, family), rtol=1e-9)
    # and on whole groups: floor(s) records pass Corollary 4.10 for the top value, one more fails
    n = math.floor(s)
    if n >= 1:
        assert is_private(n, f, p, m, lam, delta, family)
    assert not is_private(n + 1, f, p, m, lam, delta, family)


def test_threshold_closed_form_of_theorem_5_13():
    # s_g = 2 ln(1/delta) (f p + (1-p)/m) / (lambda p f)^2 (MECHANISMS.md §2)
    f, p, m, lam, delta = 0.8, 0.46, 14, 0.5, 0.5
    expected = 2 * math.log(1 / delta) * (f * p + (1 - p) / m) / (lam * p * f) ** 2
    np.testing.assert_allclose(threshold(f, p, m, lam, delta, "simplified"), expected, rtol=1e-12)


@settings(max_examples=80, deadline=None)
@given(counts=st.lists(st.integers(0, 60), min_size=2, max_size=8).filter(lambda c: sum(c) > 0),
       p=st.sampled_from([0.14, 0.22, 0.30, 0.38, 0.46, 0.8]), lam=st.sampled_from([0.1, 0.3, 0.5, 0.7, 0.9]),
       delta=st.sampled_from([0.1, 0.3, 0.5, 0.7, 0.9]), family=st.sampled_from(FAMILIES))
def test_top_value_lower_tail_binds(counts, p, lam, delta, family):
    # Theorems 5.11 / 5.13: Corollary 4.10 over every value present <=> |g| <= s_g(top frequency)
    counts = np.array(counts)
    m = len(counts)
    n = int(counts.sum())
    present = np.flatnonzero(counts)
    every_value = all(bool(is_private(n, counts[x] / n, p, m, lam, delta, family)) for x in present)
    by_threshold = n <= threshold(counts.max() / n, p, m, lam, delta, family) * (1 + 1e-9)
    assert every_value == by_threshold
    vio = group_violates(np.array([n]), np.zeros(len(present), int), counts[present], p, m, lam, delta, family)
    assert bool(vio[0]) == (not every_value)


# ------------------------------------------------------------------ micro groups
def test_micro_groups_against_pandas(adult):
    g = micro_groups(adult)
    frame = adult.frame()
    sizes = frame.groupby(list(adult.qi), observed=True).size()
    assert g.n_groups == len(sizes) == 14_668  # Adult, occupation as SA, seven QIs
    assert sorted(g.size.tolist()) == sorted(sizes.tolist())
    top = frame.groupby(list(adult.qi) + [adult.sa], observed=True).size().groupby(level=list(range(7))).max()
    assert sorted(g.top_count.tolist()) == sorted(top.tolist())
    # every record's group shares its QI values with the group's first record
    for j in range(len(adult.qi)):
        assert np.array_equal(adult.qi_codes[j], adult.qi_codes[j][g.first_row[g.group]])
    assert np.array_equal(np.bincount(g.pair_group, weights=g.pair_count).astype(int), g.size)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 2**40), st.integers(0, 5)), min_size=1, max_size=60))
def test_group_ids_never_overflow(rows):
    # three columns whose domain product (4 x 2^41 x 6 x 2^41 x ...) overflows int64 after re-use
    cols = [np.array([r[i] for r in rows]) for i in range(3)] * 3
    domains = [4, 2**41, 6] * 3
    ids, k = group_ids(cols, domains, len(rows))
    distinct = {r: i for i, r in enumerate(sorted(set(rows)))}
    assert k == len(distinct)
    assert [distinct[r] for r in rows] == ids.tolist()


# ------------------------------------------------------------------ Example 5.15: sampling and scaling
def test_example_5_15_sampling_counts():
    # seed 001 Example 5.15: 5 records of x1 and 15 of x2 sampled to s_g = 15: 3.75 -> 3 or 4, 11.25 -> 11 or 12
    reps = 40_000
    pg = np.repeat(np.arange(reps), 2)
    counts = sample_counts(pg, np.tile([5, 15], reps), np.full(reps, 20), np.full(reps, 15),
                           np.random.default_rng(7)).reshape(reps, 2)
    assert set(counts[:, 0]) == {3, 4} and set(counts[:, 1]) == {11, 12}
    assert np.all(counts.sum(axis=1) == 15)  # coupled flips: always exactly the sample size
    # each value's share is kept in expectation: P(4 of x1) = 0.75
    se = math.sqrt(0.75 * 0.25 / reps)
    assert abs(counts[:, 0].mean() - 3.75) < 4 * se


def test_example_5_15_independent_flips_would_exceed_the_threshold():
    # the paper's independent coin flips give 4 + 12 = 16 > s_g = 15 records with probability 0.75 * 0.25;
    # with delta chosen so that s_g = 15 at f = 0.75 (lambda = 0.5, p = 0.46, m = 14), 16 trials fail the test
    lam, p, m, f = 0.5, 0.46, 14, 0.75
    q = (1 - p) / m
    delta = math.exp(-15 * (lam * p * f) ** 2 / (2 * (f * p + q)))
    np.testing.assert_allclose(threshold(f, p, m, lam, delta), 15.0, rtol=1e-12)
    assert np.isclose(0.75 * 0.25, 0.1875)
    assert not is_private(16, 12 / 16, p, m, lam, delta)
    # our sample size survives every rounding: 15 with 3 + 12 (f = 0.8) would fail, so 14 is used
    assert not is_private(15, 12 / 15, p, m, lam, delta)
    n = sample_sizes(np.array([20]), np.array([15]), np.array([15.0]), p, m, lam, delta)
    assert n.tolist() == [14]
    for top in (10, 11):  # 10.5 rounded either way
        assert is_private(14, top / 14, p, m, lam, delta) and is_private(14, (14 - top) / 14, p, m, lam, delta)


def test_example_5_15_scaling_counts():
    # 15 randomised records scaled back to 20: each duplicated once, plus once more with probability 1/3;
    # the total is exactly |g| and x1's share (3.75 of 15 -> 5 of 20) is kept in expectation
    reps = 20_000
    rng = np.random.default_rng(11)
    pg = np.repeat(np.arange(reps), 2)
    c = sample_counts(pg, np.tile([5, 15], reps), np.full(reps, 20), np.full(reps, 15), rng)
    rec_group = np.repeat(pg, c)
    rec_value = np.repeat(np.tile([0, 1], reps), c)
    d = duplicates(rec_group, np.full(reps, 20), np.full(reps, 15), rng)
    assert set(d.tolist()) == {1, 2}
    totals = np.bincount(rec_group, weights=d)
    assert np.all(totals == 20)  # "within one record": here exactly
    x1 = np.bincount(rec_group, weights=d * (rec_value == 0))
    assert abs(d.mean() - 20 / 15) < 0.01
    assert abs(x1.mean() - 5.0) < 4 * x1.std() / math.sqrt(reps)


def test_sampling_marginals_are_the_papers():
    # value x keeps floor(t) + Bernoulli(frac(t)) records, t = n o_x / |g|, for several values at once
    rng = np.random.default_rng(3)
    o = np.array([7, 1, 13, 2, 4])
    size, n = int(o.sum()), 11
    reps = 30_000
    c = sample_counts(np.repeat(np.arange(reps), len(o)), np.tile(o, reps), np.full(reps, size),
                      np.full(reps, n), rng).reshape(reps, len(o))
    t = n * o / size
    assert np.all((c == np.floor(t)) | (c == np.floor(t) + 1))
    assert np.all(c.sum(axis=1) == n)
    se = np.sqrt((t % 1) * (1 - t % 1) / reps) + 1e-12
    assert np.all(np.abs(c.mean(axis=0) - t) < 4 * se + 1e-9)


# ------------------------------------------------------------------ Algorithm 1
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_algorithm1_leaves_no_violating_group_on_adult(adult, seed):
    rel = mechanisms.sanitize(adult, "reconstruction", {"lambda": 0.5, "delta": 0.5}, seed=seed)
    priv = rel.privacy
    assert priv["micro_groups"] == 14_668
    assert priv["violating_groups_before"] == 123  # plain UP, p = 0.46, lambda = delta = 0.5, simplified
    assert priv["violating_groups_after"] == 0
    assert priv["resampled_groups"] == 123
    assert 0.2 < priv["share_records_resampled"] < 0.25
    assert priv["largest_threshold_gap"] > 0


def test_algorithm1_independently_checked(adult):
    # redo the after-check from the published table's side: group sizes are unchanged, every resampled group
    # randomised at most s_g records, and the sampled counts pass Corollary 4.10 value by value
    for family in FAMILIES:
        an = analyse(micro_groups(adult), 0.46, adult.m, 0.7, 0.5, family)
        g = an.groups
        out, sampled = algorithm1(adult.sa_codes, an, np.random.default_rng(4))
        assert len(out) == adult.n and out.dtype == adult.sa_codes.dtype
        assert np.array_equal(np.bincount(g.group, minlength=g.n_groups), g.size)
        rs = an.resample
        assert rs.sum() > 100
        assert np.all(an.n_sample[rs] <= np.floor(an.s_g[rs] * (1 + 1e-9)))
        assert np.all(an.n_sample[rs] >= 1)
        per_group = np.bincount(g.pair_group, weights=sampled, minlength=g.n_groups)
        assert np.array_equal(per_group[rs], an.n_sample[rs])
        trials = np.where(rs, an.n_sample, g.size)
        for gid in np.flatnonzero(rs)[:200]:
            lo, hi = np.searchsorted(g.pair_group, [gid, gid + 1])
            for c in sampled[lo:hi]:
                if c:
                    assert is_private(trials[gid], c / trials[gid], 0.46, adult.m, 0.7, 0.5, family)
        # a resampled group publishes at most n_sample distinct perturbation outcomes: its rows repeat
        order = np.argsort(g.group, kind="stable")
        first = np.flatnonzero(rs)[0]
        rows = order[g.group[order] == first]
        assert len(np.unique(out[rows])) <= an.n_sample[first]


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), lam=st.sampled_from([0.3, 0.5, 0.7]), delta=st.sampled_from([0.3, 0.5, 0.7]),
       family=st.sampled_from(FAMILIES))
def test_algorithm1_no_violation_property(seed, lam, delta, family):
    data = grouped_table(seed)
    rel = mechanisms.sanitize(data, "reconstruction", {"lambda": lam, "delta": delta, "bound": family}, seed=seed)
    assert rel.privacy["violating_groups_after"] == 0
    assert len(rel.main_table) == data.n


def test_same_seed_same_release(adult):
    a = mechanisms.sanitize(adult, "reconstruction", {"lambda": 0.5, "delta": 0.5}, seed=9)
    b = mechanisms.sanitize(adult, "reconstruction", {"lambda": 0.5, "delta": 0.5}, seed=9)
    c = mechanisms.sanitize(adult, "reconstruction", {"lambda": 0.5, "delta": 0.5}, seed=10)
    col = adult.sa
    assert np.array_equal(a.main_table.columns[col], b.main_table.columns[col])
    assert not np.array_equal(a.main_table.columns[col], c.main_table.columns[col])
    # QI columns are published unchanged (as a multiset of rows)
    for q in adult.qi:
        assert np.array_equal(np.sort(a.main_table.columns[q]), np.sort(adult.qi_codes[adult.qi.index(q)]))


def test_no_violation_means_plain_up(adult):
    rel = mechanisms.sanitize(adult, "reconstruction", {}, seed=1)  # lambda = delta = 0.3: Adult has no open group
    assert rel.privacy["violating_groups_before"] == 0
    assert rel.privacy["share_independent_trials"] == 1.0
    assert "plain UP" in rel.notes[0]


# ------------------------------------------------------------------ estimator
def test_estimator_unbiased_over_many_releases():
    # Theorem 5.18: the UP estimator on RP's table is unbiased; fixed seeds, 200 releases (2 ms each)
    data = grouped_table(5, n_groups=10, sizes=(40, 300), skew=6.0)
    batch = QueryBatch(attrs=(0,), values=np.array([[0], [1], [2], [3]]), sa=np.eye(data.m, dtype=bool)[[0, 1, 2, 3]])
    true = select(data_records(data).counts(batch), batch.sa)
    raw = {"lambda": 0.5, "delta": 0.5, "p": 0.6}
    assert mechanisms.sanitize(data, "reconstruction", raw, seed=0).privacy["resampled_groups"] >= 3
    est = np.array([mechanisms.estimate(mechanisms.sanitize(data, "reconstruction", raw, seed=s), [batch])
                    for s in range(200)])
    se = est.std(axis=0, ddof=1) / math.sqrt(len(est))
    assert np.all(np.abs(est.mean(axis=0) - true) < 4 * se)


def test_simulated_group_estimates_unbiased_and_noisier_under_rp():
    # one micro group: 40 of 'x', 10 of 'y'; UP uses 50 trials, RP 12; both unbiased, RP's variance about 50/12
    rng = np.random.default_rng(2)
    up = simulate_group(np.array([3, 5]), np.array([40, 10]), 0.46, 14, 40_000, rng)
    rp = simulate_group(np.array([3, 5]), np.array([40, 10]), 0.46, 14, 40_000, rng, n_sample=12)
    for est in (up, rp):
        assert abs(est[:, 3].mean() - 0.8) < 4 * est[:, 3].std() / math.sqrt(len(est))
        np.testing.assert_allclose(est.sum(axis=1), 1.0, atol=1e-9)  # frequencies add up to 1
    ratio = rp[:, 3].var() / up[:, 3].var()
    assert 3.0 < ratio < 5.0


def test_up_part_matches_uniform_estimator(adult):
    # outside resampled groups nothing differs from UP: with no open group the estimates are UP's exactly
    from core.workload import seed000

    wl = seed000(adult, queries=200, seed=1)
    rp = mechanisms.sanitize(adult, "reconstruction", {"p": 0.3}, seed=4)
    assert rp.privacy["resampled_groups"] == 0
    up = mechanisms.sanitize(adult, "uniform", {"p": 0.3}, seed=4)
    np.testing.assert_allclose(mechanisms.estimate(rp, wl), mechanisms.estimate(up, wl))


# ------------------------------------------------------------------ parameters and eligibility
def test_parameters_and_derived(adult):
    values = RP.resolve({})
    assert (values["lambda"], values["delta"], values["p"], values["bound"]) == (0.3, 0.3, 0.46, "simplified")
    d = RP.derived(adult, values)
    np.testing.assert_allclose(d["threshold_one_value"], threshold(1.0, 0.46, 14, 0.3, 0.3))
    # p empty: (rho1, rho2) -> gamma -> p exactly as uniform perturbation
    up = mechanisms.get("uniform")
    d2 = RP.derived(adult, RP.resolve({"p": None, "rho1": "1/13", "rho2": "1/6"}))
    np.testing.assert_allclose(d2["p"], up.derived(adult, up.resolve({}))["p"])
    with pytest.raises(ParameterError, match="rho1 < rho2"):
        RP.resolve({"p": None, "rho1": 0.4, "rho2": 0.2})
    for bad in ({"lambda": 0}, {"lambda": 1}, {"delta": 1.5}, {"bound": "loose"}, {"p": 0}):
        with pytest.raises(ParameterError):
            RP.resolve(bad)


def test_not_eligible_when_one_record_already_fails(adult):
    # lambda = delta = 0.9 at p = 0.46: s_g = 0.61 < 1 for a one-value group; singletons cannot be repaired
    raw = {"lambda": 0.9, "delta": 0.9}
    with pytest.raises(NotEligible) as exc:
        mechanisms.sanitize(adult, "reconstruction", raw, seed=1)
    assert "lower p to at most" in str(exc.value)
    best = exc.value.suggestion["p"]
    assert threshold(1.0, best, adult.m, 0.9, 0.9) >= 1.0
    assert threshold(1.0, best + 0.002, adult.m, 0.9, 0.9) < 1.0
    np.testing.assert_allclose(threshold(1.0, largest_safe_p(adult.m, 0.9, 0.9), adult.m, 0.9, 0.9), 1.0)
    rel = mechanisms.sanitize(adult, "reconstruction", {**raw, **exc.value.suggestion}, seed=1)
    assert rel.privacy["violating_groups_after"] == 0
    assert RP.eligibility(adult, raw).ok is False


def test_manifest_block(adult):
    rel = mechanisms.sanitize(adult, "reconstruction", {"lambda": 0.5, "delta": 0.5}, seed=3)
    man = rel.manifest()
    for key in ("micro_groups", "violating_groups_before", "violating_groups_after", "share_records_resampled",
                "largest_threshold_gap"):
        assert key in man["privacy"]
    assert man["published"]["p"] == 0.46 and man["published"]["bound"] == "simplified"
    assert "resampled" not in " ".join(man["published"])  # which groups were resampled is not published
    assert "--param lambda=0.5" in man["reproduce"]


def test_tail_bounds_match_chernoff_module():
    n, f, p, m, lam = 80, 0.6, 0.46, 14, 0.3
    mu = n * (f * p + (1 - p) / m)
    e = conversion_e(f, p, m, lam)
    np.testing.assert_allclose(tail_bounds(n, f, p, m, lam, "full"), (chernoff_upper(mu, e), chernoff_lower(mu, e)))
    np.testing.assert_allclose(tail_bounds(n, f, p, m, lam, "simplified"),
                               (simplified_upper(mu, e), simplified_lower(mu, e)))


def test_chi_square_of_published_values_in_a_resampled_group():
    # a one-value group of 200 records above its threshold: its published values come from n_sample trials,
    # each showing the true value with probability p + (1-p)/m; check the per-trial rate over many releases
    frame = pd.DataFrame({"a": [1] * 200 + [2] * 30, "s": ["x"] * 200 + [f"v{i % 5}" for i in range(30)]})
    data = bind(make_table(frame, "one-value"), "s", ["a"])
    an = analyse(micro_groups(data), 0.46, data.m, 0.5, 0.5)
    assert an.violating.tolist() == [True, False]
    n_s = int(an.n_sample[0])
    rng = np.random.default_rng(8)
    kept = []
    for _ in range(400):
        out, _ = algorithm1(data.sa_codes, an, rng)
        kept.append(np.mean(out[:200] == data.sa_codes[0]))
    p_show = 0.46 + 0.54 / data.m
    # mean share is unbiased; its variance is that of n_s trials, not 200
    assert abs(np.mean(kept) - p_show) < 4 * math.sqrt(p_show * (1 - p_show) / n_s / 400)
    var_ratio = np.var(kept, ddof=1) / (p_show * (1 - p_show) / n_s)
    assert stats.chi2(399).ppf(0.001) / 399 < var_ratio < stats.chi2(399).ppf(0.999) / 399 * 1.1
