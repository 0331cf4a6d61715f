"""The vectorised counting primitive against one boolean mask per query."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

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


#: module settings that force each way CountIndex can count: one bincount over the
#: whole table, a bincount over the table of occurring combinations, or hashing the cells
PATHS = {
    "dense": {"DENSE_CELLS": 10**9, "DENSE_PER_ROW": 10**9},
    "compact": {"DENSE_CELLS": 0, "DENSE_PER_ROW": 10**9},
    "hashed": {"DENSE_CELLS": 0, "DENSE_PER_ROW": 0, "DENSE_FLOOR": 0},
}


def _random_table(rng, n: int, columns: int, max_domain: int, weighted: bool):
    """QI columns with random domains (1 .. max_domain - 1), a target of 2-4 codes, optional weights."""
    domains = [int(x) for x in rng.integers(1, max_domain, size=columns)]
    qi = [rng.integers(0, k, size=n) for k in domains]
    m = int(rng.integers(2, 5))
    target = rng.integers(0, m, size=n)
    return domains, qi, m, target, (rng.random(n) if weighted else None)


@pytest.fixture
def counting_path(request, monkeypatch):
    for name, value in PATHS[request.param].items():
        monkeypatch.setattr(counting, name, value)
    return request.param


@pytest.mark.parametrize("counting_path", list(PATHS), indirect=True)
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10_000), n=st.integers(1, 300), d=st.integers(1, 3), weighted=st.booleans())
def test_equality_and_set_predicates_match_brute_force(counting_path, seed, n, d, weighted):
    rng = np.random.default_rng(seed)
    domains, qi, m, target, weights = _random_table(rng, n, 4, 6, weighted)
    attrs = tuple(sorted(rng.choice(4, size=d, replace=False).tolist()))
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


def _random_batches(rng, domains, m, subsets, q=12):
    """An equality batch and a set-predicate batch (SA ORs included) per attribute subset."""
    out = []
    for attrs in subsets:
        sa = np.eye(m, dtype=bool)[rng.integers(0, m, size=q)]
        sa[: q // 3] |= rng.random((q // 3, m)) < 0.5
        values = np.stack([rng.integers(0, domains[a], size=q) for a in attrs], axis=1)
        out.append(QueryBatch(attrs=attrs, values=values, sa=sa))
        out.append(QueryBatch(attrs=attrs, masks=tuple(rng.random((q, domains[a])) < 0.5 for a in attrs), sa=sa))
    return out


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(1, 400), weighted=st.booleans(),
       on_superset=st.booleans())
def test_superset_projection_and_prepare_match_brute_force(seed, n, weighted, on_superset):
    """Indexes projected from a superset's cells (and set predicates matched on a superset) count like the rows."""
    rng = np.random.default_rng(seed)
    domains, qi, m, target, weights = _random_table(rng, n, 5, 7, weighted)
    subsets = [tuple(sorted(rng.choice(5, size=d, replace=False).tolist())) for d in (1, 1, 2, 2, 3, 4, 5)]
    batches = _random_batches(rng, domains, m, subsets)
    rec = Records(qi, domains, target, m, weights)
    if on_superset:  # every set-predicate-only subset is matched on a superset with padded masks
        rec.SMALL_INDEX, rec.OWN_INDEX_QUERIES = 0, 10**9
        batches = [b for b in batches if not b.is_equality or len(b.attrs) >= 4]
    rec.prepare(batches)
    for b in batches:
        expected = brute(qi, target, m, weights, b.attrs, b.qi_masks(domains))
        np.testing.assert_allclose(rec.counts(b), expected, rtol=1e-9, atol=1e-9)
    # without prepare, largest subsets asked first: every later index is a projection
    lazy = Records(qi, domains, target, m, weights)
    for b in sorted(batches, key=lambda b: -len(b.attrs)):
        expected = brute(qi, target, m, weights, b.attrs, b.qi_masks(domains))
        np.testing.assert_allclose(lazy.counts(b), expected, rtol=1e-9, atol=1e-9)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(1, 200), groups=st.integers(1, 30), n_target=st.integers(1, 8))
def test_group_cells_equal_the_expanded_records(seed, n, groups, n_target):
    """Records.from_groups (QIT index by group x ST) against the QIT expanded row by row by its ST."""
    from core.mechanisms.base import bucket_records

    rng = np.random.default_rng(seed)
    domains = [int(x) for x in rng.integers(1, 6, size=3)]
    qi = [rng.integers(0, k, size=n) for k in domains]
    record_group = rng.integers(0, groups, size=n)
    # an ST: some (group, target) pairs with counts 1..3; some groups have none (their records drop out),
    # some ST groups have no QIT record
    pairs = np.flatnonzero(rng.random(groups * n_target) < 0.4)
    st_group, st_target = pairs // n_target, pairs % n_target
    st_count = rng.integers(1, 4, size=len(pairs))
    args = (qi, domains, record_group, st_group, st_target, st_count, n_target)
    cells = Records.from_groups(*args)
    expanded = bucket_records(*args)
    assert len(cells) <= len(expanded)
    subsets = [(0,), (1, 2), (0, 1, 2)]
    for b in _random_batches(rng, domains, n_target, subsets):
        np.testing.assert_allclose(cells.counts(b), expanded.counts(b), rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(cells.target_totals, expanded.target_totals, rtol=1e-9, atol=1e-12)


def _einsum(counts, sa, rows=None):
    """What select computed before its one-value path: the mask in floats, summed by einsum."""
    return np.einsum("qm,qm->q", counts if rows is None else counts[rows], np.asarray(sa).astype(float))


@pytest.mark.parametrize("m", [1, 2, 14, 50])
def test_select_reads_one_value_bit_for_bit_as_the_sum_did(m):
    """One SA value per query (the risk's group batches): read off, the same bits as einsum's sum, -0.0 and the
    rows of a distinct-row matrix included; several values per query, a float mask, or a value that is not finite
    take the sum itself."""
    rng = np.random.default_rng(m)
    counts = rng.normal(0, 50, (40, m)).round(1)
    counts[rng.random((40, m)) < 0.3] = 0.0
    counts[rng.random((40, m)) < 0.2] = -0.0
    rows = rng.integers(0, 40, 300)
    one = np.zeros((300, m), bool)
    one[np.arange(300), rng.integers(0, m, 300)] = True
    for got, want in [(select(counts, one, rows=rows), _einsum(counts, one, rows)),
                      (select(counts[rows], one), _einsum(counts[rows], one))]:
        assert got.tobytes() == want.tobytes()
    summed = _einsum(counts, one, rows)
    picked = counts[rows, np.argmax(one, axis=1)]
    assert (np.signbit(picked) & (picked == 0)).any()  # some selected values are -0.0 ...
    assert not (np.signbit(summed) & (summed == 0)).any()  # ... which the sum gives as 0.0, and so does select
    several = one.copy()
    several[:, 0] = True
    assert select(counts, several, rows=rows).tobytes() == _einsum(counts, several, rows).tobytes()
    weights = one * 0.5
    assert select(counts, weights, rows=rows).tobytes() == _einsum(counts, weights, rows).tobytes()
    bad = counts.copy()
    bad[rows[0], (np.argmax(one[0]) + 1) % m] = np.inf  # a value not selected: the sum gives nan where m > 1
    assert np.array_equal(select(bad, one, rows=rows), _einsum(bad, one, rows), equal_nan=True)


def test_lookup_of_repeated_rows_equals_each_row_looked_up():
    """Rows repeated one after another (m per micro group in the risk's attacks) are looked up once; the counts
    are those of each row looked up alone, absent combinations included."""
    rng = np.random.default_rng(3)
    domains = (5, 7, 3)
    codes = [rng.integers(0, d, 2_000) for d in domains]
    rec = Records(codes, domains, rng.integers(0, 4, 2_000), 4)
    distinct = np.stack([rng.integers(0, d, 60) for d in domains], axis=1)
    distinct[0] = [4, 6, 2]
    repeated = np.repeat(distinct, 4, axis=0)
    idx = rec.index((0, 1, 2))
    got = idx.lookup(repeated)
    want = np.concatenate([idx.lookup(row[None, :]) for row in repeated])
    assert got.tobytes() == want.tobytes() and got.shape == (240, 4)
