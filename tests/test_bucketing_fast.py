"""The numpy two-size search (:func:`core.mechanisms.bucketization_algorithm.two_size_fast`) against Algorithm 1 pair by pair and the plain scan."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.mechanisms import bucketization_algorithm as bk

# value counts from tiny to census-like, including absent values (count 0)
counts_st = st.lists(st.one_of(st.integers(0, 12), st.integers(0, 400), st.integers(0, 400_000)),
                     min_size=1, max_size=14).filter(lambda c: sum(c) > 0)


def _thresholds(counts, theta, b, raise_to):
    """``fprime``, then some values' f' set by hand (overrides), valid or not."""
    o = np.asarray(counts, dtype=np.int64)
    fp = bk.fprime(o, theta, b)
    for i, v in raise_to:
        fp[i % len(o)] = v
    return o, fp


overrides_st = st.lists(st.tuples(st.integers(0, 13), st.floats(0.01, 1.0)), max_size=3)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(counts_st, st.floats(0.5, 64), st.floats(0, 0.3), overrides_st, st.integers(2, 70))
@pytest.mark.slow
def test_fast_search_equals_algorithm1(counts, theta, b, raise_to, max_size):
    """Same setting (sizes, buckets, loss), or None for both, on every table: no case is skipped."""
    o, fp = _thresholds(counts, theta, b, raise_to)
    assert bk.two_size_fast(o, fp, max_size) == bk.two_size(o, fp, max_size)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.integers(0, 30), min_size=1, max_size=6).filter(lambda c: sum(c) > 0), st.floats(0.5, 8),
       st.floats(0, 0.3), overrides_st, st.integers(2, 16))
@pytest.mark.slow
def test_fast_search_equals_the_plain_scan(counts, theta, b, raise_to, max_size):
    """The definition itself (every feasible pair checked by Theorem 3) on small tables."""
    o, fp = _thresholds(counts, theta, b, raise_to)
    fast = bk.two_size_fast(o, fp, max_size)
    assert fast == bk.two_size_scan(o, fp, max_size)
    if fast is not None:
        assert bk.valid_two(o, fp, fast.s1, fast.b1, fast.s2, fast.b2)


@pytest.mark.slow
def test_fast_search_on_census_counts_and_in_blocks(monkeypatch):
    """Census-like counts at the paper's thetas and several M'; small pair blocks give the same answer."""
    rng = np.random.default_rng(3)
    base = np.array([326973, 162975, 81733, 40937, 878, 420, 204, 354326, 177524, 89355, 353659, 23284, 129536,
                     64815, 7273, 3739, 14466, 61446, 16927, 318560])
    found = 0
    for trial in range(5):
        o = base if trial == 0 else rng.permutation(base) // int(rng.integers(1, 50))
        for theta in (2.0, 8.0, 8.5, 32.0):
            for max_size in (30, 50, 90):
                fp = bk.fprime(o, theta, 0.02)
                loop = bk.two_size(o, fp, max_size)
                assert bk.two_size_fast(o, fp, max_size) == loop
                monkeypatch.setattr(bk, "PAIR_BLOCK", 61)
                assert bk.two_size_fast(o, fp, max_size) == loop
                monkeypatch.setattr(bk, "PAIR_BLOCK", 2048)
                found += loop is not None
    assert found >= 30  # most settings have an answer: the comparison is not between two Nones


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 10 ** 9), st.integers(2, 120))
def test_gamma_of_every_pair_equals_lemma4(n, max_size):
    s1, s2 = np.triu_indices(max_size + 1, 1)
    keep = s1 >= 1
    s1, s2 = s1[keep], s2[keep]
    ok, b1_0, b2_0, d1, d2, k = bk._gamma_all(n, s1, s2)
    for j in range(0, len(s1), max(1, len(s1) // 60)):
        g = bk.gamma_list(n, int(s1[j]), int(s2[j]))
        if g is None:
            assert not ok[j]
        else:
            assert ok[j] and (g.b1_0, g.b2_0, g.d1, g.d2, g.k) == (b1_0[j], b2_0[j], d1[j], d2[j], k[j])


def test_gamma_example4():
    ok, b1_0, b2_0, d1, d2, k = bk._gamma_all(28, np.array([2]), np.array([4]))
    assert ok[0] and (b1_0[0], b2_0[0], d1[0], d2[0], k[0]) == (14, 0, 2, 1, 7)  # seed 003 Example 4
    ok, b1_0, b2_0, _, _, k = bk._gamma_all(29, np.array([2, 3]), np.array([4, 5]))
    assert not ok[0]  # no even split of 29 records into 2s and 4s
    assert ok[1] and (b1_0[1], b2_0[1], k[1]) == (8, 1, 1)  # 3 b1 + 5 b2 = 29: (8, 1), (3, 4)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(counts_st, st.floats(1, 32), st.floats(0, 0.2), st.integers(4, 50))
@pytest.mark.slow
def test_multi_and_two_size_settings_equal_with_either_search(counts, theta, b, max_size):
    """Algorithm 2's whole recursion (and the two-size bucketing) is the same with the loop search."""
    o = np.asarray(counts, dtype=np.int64)
    fp = np.maximum(bk.fprime(o, theta, b), o / o.sum())  # Lemma 1 holds: a setting exists if M' allows
    for build in (bk.multi_size, bk.two_size_bucketing):
        try:
            fast = build(o, fp, max_size)
        except bk.NotEligible:
            with pytest.raises(bk.NotEligible):
                build(o, fp, max_size, search=bk.two_size)
            continue
        loop = build(o, fp, max_size, search=bk.two_size)
        assert [(s, b_) for s, b_, _ in fast.classes] == [(s, b_) for s, b_, _ in loop.classes]
        for (_, _, c1), (_, _, c2) in zip(fast.classes, loop.classes):
            assert np.array_equal(c1, c2)


def test_example3_with_the_fast_search():
    o = np.array([1] * 8 + [6] * 4 + [9] * 2)
    fp = 2 * o / 50 + 0.05
    best = bk.two_size_fast(o, fp, 50)
    assert (best.s1, best.b1, best.s2, best.b2) == (4, 9, 14, 1)  # seed 003 Example 3's setting


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.integers(0, 300), min_size=2, max_size=8).filter(lambda c: sum(c) > 0), st.floats(1, 16),
       st.integers(4, 40), st.sampled_from(["two", "multi"]), st.integers(0, 2 ** 31 - 1))
def test_slot_buckets_equal_the_record_by_record_dealing(counts, theta, max_size, method, seed):
    """Every record's bucket through its slot equals :func:`assign_ranked`'s, and slots are a permutation."""
    o = np.asarray(counts, dtype=np.int64)
    fp = np.maximum(bk.fprime(o, theta, 0.02), o / o.sum())
    try:
        plan = bk.bucketize(o, fp, max_size, method)
    except bk.NotEligible:
        plan = bk.bucketize(o, np.ones(len(o)), 2, "two")  # f' = 1: any bucket is valid
    sa = np.random.default_rng(seed % 1000).permutation(np.repeat(np.arange(len(o)), o))
    rank = np.zeros(len(sa), dtype=np.int64)
    for x in range(len(o)):
        rank[sa == x] = np.arange(o[x])
    slots = bk.deal_slots(seed, sa, rank, o)
    assert np.array_equal(np.sort(slots), np.arange(len(sa)))
    assert np.array_equal(bk.slot_buckets(plan)[slots], bk.assign_ranked(plan, seed, sa, rank))


def test_relabel_order_is_the_stable_argsort():
    """The packed sort of :func:`core.shuffle.relabel` orders as a stable argsort, ties in high bits and duplicates included."""
    from core import rng as R
    from core import shuffle

    for n in (0, 1, 2, 3, 17, 5000, 300_000):
        keys = R.words(3, "bucket/bid", 0, n)
        assert np.array_equal(shuffle._stable_order(keys), np.argsort(keys, kind="stable"))
    gen = np.random.default_rng(0)
    for _ in range(200):
        n = int(gen.integers(2, 3000))
        keys = gen.integers(0, 2 ** 64, n, dtype=np.uint64)
        keys = keys >> np.uint64(gen.integers(0, 64)) << np.uint64(gen.integers(0, 64))  # many ties
        if gen.random() < 0.5:
            keys[gen.integers(0, n, n // 3)] = keys[0]  # exact duplicates: by index
        assert np.array_equal(shuffle._stable_order(keys), np.argsort(keys, kind="stable"))


def test_relabel_from_a_kept_order_is_the_permutation_drawn_afresh(monkeypatch):
    """:func:`core.shuffle.relabel` above its threshold filters a kept order of more words: for group counts
    below, at, above within the headroom and beyond it (a new order), the permutation is the stable ranks of
    the first n words, as drawn with nothing kept; the kept orders stay within their byte budget."""
    from core import rng as R
    from core import shuffle

    def afresh(seed, purpose, n):
        out = np.empty(n, dtype=np.int64)
        out[np.argsort(R.words(seed, purpose, 0, n), kind="stable")] = np.arange(n)
        return out

    monkeypatch.setattr(shuffle, "_ORDERS", type(shuffle._ORDERS)())
    monkeypatch.setattr(shuffle, "RELABEL_KEEP_FROM", 1000)
    sizes = []
    for n in (4000, 3999, 4000, 4900, 1001, 5000, 5001, 20_000, 4000, 999, 1000):
        got = shuffle.relabel(7, "bucket/bid", n)
        assert np.array_equal(got, afresh(7, "bucket/bid", n)), n
        sizes.append(len(shuffle._ORDERS[(7, "bucket/bid")]))
    # kept for 1.25 n and reused while n <= kept <= 4 n; a larger count, or a quarter of the kept, draws again;
    # 999 is under the threshold and leaves the kept order alone
    assert sizes == [5000, 5000, 5000, 5000, 1251, 6250, 6250, 25_000, 5000, 5000, 1250]
    monkeypatch.setattr(shuffle, "RELABEL_KEEP_BYTES", 30_000)
    for seed in range(4):
        assert np.array_equal(shuffle.relabel(seed, "anatomy/gid", 3000), afresh(seed, "anatomy/gid", 3000))
    assert sum(v.nbytes for v in shuffle._ORDERS.values()) <= 30_000 and (3, "anatomy/gid") in shuffle._ORDERS
