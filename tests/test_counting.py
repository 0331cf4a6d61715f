"""The vectorised counting primitive against one boolean mask per query."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import core.counting as counting
from core.counting import QueryBatch, Records, select


def brute(qi, target, n_target, weights, attrs, masks):
    out = np.zeros((len(masks[0]), n_target))
    w = np.ones(len(target)) if weights is None else weights
    for q in range(len(masks[0])):
        hit = np.ones(len(target), dtype=bool)
        for j, a in enumerate(attrs):
            hit &= masks[j][q][qi[a]]
        out[q] = np.bincount(target[hit], weights=w[hit], minlength=n_target)
    return out


@pytest.mark.parametrize("dense", [True, False])
@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(1, 300), d=st.integers(1, 3), weighted=st.booleans())
def test_equality_and_set_predicates_match_brute_force(dense, seed, n, d, weighted):
    rng = np.random.default_rng(seed)
    domains = [int(x) for x in rng.integers(1, 6, size=4)]
    qi = [rng.integers(0, k, size=n) for k in domains]
    m = int(rng.integers(2, 5))
    target = rng.integers(0, m, size=n)
    weights = rng.random(n) if weighted else None
    attrs = tuple(sorted(rng.choice(4, size=d, replace=False).tolist()))
    old = counting.DENSE_CELLS
    counting.DENSE_CELLS = 10**9 if dense else 0
    try:
        rec = Records(qi, domains, target, m, weights)
        q = 25
        values = np.stack([rng.integers(0, domains[a], size=q) for a in attrs], axis=1)
        sa = np.eye(m, dtype=bool)[rng.integers(0, m, size=q)]
        eq = QueryBatch(attrs=attrs, values=values, sa=sa)
        masks = eq.qi_masks(domains)
        np.testing.assert_allclose(rec.counts(eq), brute(qi, target, m, weights, attrs, masks))
        sets = tuple(rng.random((q, domains[a])) < 0.5 for a in attrs)
        st_batch = QueryBatch(attrs=attrs, masks=sets, sa=sa)
        expected = brute(qi, target, m, weights, attrs, sets)
        np.testing.assert_allclose(rec.counts(st_batch), expected)
        np.testing.assert_allclose(select(rec.counts(st_batch), sa), (expected * sa).sum(1))
    finally:
        counting.DENSE_CELLS = old


def test_entries_list_every_nonzero_cell():
    qi = [np.array([0, 0, 1, 1, 1]), np.array([1, 1, 0, 0, 2])]
    rec = Records(qi, [2, 3], np.array([0, 0, 1, 0, 1]), 2)
    values, target, count = rec.index((0, 1)).entries()
    cells = sorted(zip(map(tuple, values.tolist()), target.tolist(), count.tolist()))
    assert cells == [((0, 1), 0, 2.0), ((1, 0), 0, 1.0), ((1, 0), 1, 1.0), ((1, 2), 1, 1.0)]


def test_absent_combination_counts_zero():
    rec = Records([np.array([0, 1])], [5], np.array([0, 1]), 2)
    batch = QueryBatch(attrs=(0,), values=np.array([[4], [1]]), sa=np.array([[True, False], [False, True]]))
    np.testing.assert_array_equal(rec.counts(batch), [[0, 0], [0, 1]])


def test_domains_whose_product_overflows_64_bits():
    """Eight columns with 300,000 values each: keys are built as ranks of the combinations seen."""
    rng = np.random.default_rng(1)
    n, d = 2000, 8
    domains = [300_000] * d
    qi = [rng.integers(0, 300_000, n) for _ in range(d)]
    qi[0][:10] = qi[0][10:20]  # a few repeated combinations
    for j in range(1, d):
        qi[j][:10] = qi[j][10:20]
    target = rng.integers(0, 3, n)
    rec = Records(qi, domains, target, 3)
    attrs = tuple(range(d))
    values = np.stack([c[:30] for c in qi], axis=1)
    values[-1, 0] = 299_999  # a combination the data never had
    batch = QueryBatch(attrs=attrs, values=values, sa=np.ones((30, 3), dtype=bool))
    expected = brute(qi, target, 3, None, attrs, batch.qi_masks(domains))
    np.testing.assert_allclose(rec.counts(batch), expected)
    got_values, _, _ = rec.index(attrs).entries()
    assert {tuple(v) for v in got_values.tolist()} == {tuple(v) for v in np.stack(qi, axis=1).tolist()}
