"""Group mechanisms built from counts (issue 15): each count-based construction against today's row-based one.

Deterministic constructions must give the same groups (Anatomy's sorted
layout, Mondrian's partition, the bucket and sub-table counts); where a
record's destination is drawn (SDR's sub-tables, bucketization's size
classes) the draw is a keyed permutation of ranks (core/shuffle.py),
checked statistically here with fixed seeds.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from core.mechanisms import bucketization_algorithm as bk
from core import shuffle
from core.mechanisms import mondrian as mo
from core.mechanisms import sdr
from core.partition import distinct_value_groups, sorted_layout
from core.table import load_dataset


def ranks(key: np.ndarray) -> np.ndarray:
    """Rank of each record among the records with the same key, in input order (brute force)."""
    seen: dict[int, int] = {}
    out = np.empty(len(key), dtype=np.int64)
    for i, k in enumerate(np.asarray(key).tolist()):
        out[i] = seen.get(k, 0)
        seen[k] = out[i] + 1
    return out


@pytest.fixture(scope="module")
def adult():
    return load_dataset("adult", "occupation")


# ------------------------------------------------------------------ keyed permutations
@pytest.mark.parametrize("size", [1, 2, 3, 4, 5, 16, 17, 100, 1023, 4097])
def test_permute_is_a_bijection_of_each_keys_ranks(size):
    for key in (0, 3):
        p = shuffle.permute(11, "t", key, np.arange(size), size)
        assert sorted(p.tolist()) == list(range(size))


def test_permute_does_not_depend_on_the_batch():
    key = np.repeat([0, 1, 2], [50, 7, 300])
    rank = np.concatenate([np.arange(50), np.arange(7), np.arange(300)])
    size = np.repeat([50, 7, 300], [50, 7, 300])
    whole = shuffle.permute(5, "t", key, rank, size)
    cut = np.concatenate([shuffle.permute(5, "t", key[a:b], rank[a:b], size[a:b])
                          for a, b in ((0, 1), (1, 60), (60, 200), (200, 357))])
    assert np.array_equal(whole, cut)
    assert not np.array_equal(whole, shuffle.permute(6, "t", key, rank, size))
    assert not np.array_equal(whole, shuffle.permute(5, "u", key, rank, size))


@pytest.mark.slow
def test_permuted_positions_and_pairs_are_uniform_over_seeds():
    # position of rank 0 and rank 1 of a 7-element key under 7,000 seeds: each position
    # 1/7, each ordered pair of distinct positions 1/42 (a uniform random permutation)
    size = 7
    got = np.array([shuffle.permute(s, "u", 2, [0, 1], size) for s in range(7_000)])
    assert stats.chisquare(np.bincount(got[:, 0], minlength=size)).pvalue > 0.001
    pair = got[:, 0] * size + got[:, 1]
    counts = np.bincount(pair, minlength=size * size).reshape(size, size)
    assert np.all(np.diag(counts) == 0)
    off = counts[~np.eye(size, dtype=bool)]
    assert stats.chisquare(off).pvalue > 0.001


def test_deal_gives_each_destination_its_count():
    counts = np.array([[3, 0, 2], [1, 4, 0], [0, 1, 5]])
    key = np.repeat(np.arange(3), counts.sum(axis=0))
    pos = np.concatenate([np.arange(c) for c in counts.sum(axis=0)])
    d = shuffle.deal(counts, key, pos)
    got = np.zeros_like(counts)
    np.add.at(got, (d, key), 1)
    assert np.array_equal(got, counts)


# ------------------------------------------------------------------ Anatomy: the sorted layout
def test_sorted_layout_equals_the_row_based_groups(adult):
    rng = np.random.default_rng(0)
    for size in (2, 5, 7):
        sa = adult.sa_codes[rng.permutation(adult.n)][:5_000 + 37 * size]
        part = distinct_value_groups(sa, size, adult.m)
        lay = sorted_layout(np.bincount(sa, minlength=adult.m), size)
        assert np.array_equal(lay.group(sa, ranks(sa)), part.group)
        assert np.array_equal(lay.sizes, part.sizes)
        g, v = lay.members()
        assert sorted(zip(g.tolist(), v.tolist())) == sorted(zip(part.group.tolist(), sa.tolist()))


def test_sorted_layout_on_tiny_tables_wraps_like_the_rows():
    for counts, size in (([3, 2, 2], 4), ([1, 1, 1, 1, 1, 1, 1], 4), ([2, 2, 1], 2)):
        sa = np.repeat(np.arange(len(counts)), counts)[::-1].copy()
        part = distinct_value_groups(sa, size, len(counts))
        assert np.array_equal(sorted_layout(np.array(counts), size).group(sa, ranks(sa)), part.group)


# ------------------------------------------------------------------ bucketization
@pytest.mark.slow
@pytest.mark.parametrize("method", ["two", "multi"])
def test_buckets_from_counts_hold_what_the_row_assignment_holds(adult, method):
    plan = bk.bucketize(adult.sa_counts, bk.fprime(adult.sa_counts, 8, 0.02), 50, method)
    rows = bk.assign(adult.sa_codes, plan, np.random.default_rng(0))
    sizes_rows, counts_rows = bk.bucket_table(rows, adult.sa_codes, adult.m)
    new = bk.assign_ranked(plan, 3, adult.sa_codes, ranks(adult.sa_codes))
    sizes_new, counts_new = bk.bucket_table(new, adult.sa_codes, adult.m)
    sizes_plan, counts_plan = bk.bucket_counts(plan)
    # RRA fixes every bucket's counts from the class counts: the same buckets, bucket by bucket
    assert np.array_equal(counts_new, counts_rows) and np.array_equal(counts_plan, counts_rows)
    assert np.array_equal(sizes_plan, sizes_rows) and np.array_equal(sizes_new, sizes_rows)


def test_size_class_of_a_record_is_independent_of_its_rank(adult):
    # which records of a value land in the larger size class is uniformly random: the class of
    # the first and the second half of a value's ranks (input order) have the same distribution
    plan = bk.bucketize(adult.sa_counts, bk.fprime(adult.sa_counts, 8, 0.02), 50, "two")
    per, nb, size = bk.classes_by_size(plan)
    assert len(per) == 2
    r = ranks(adult.sa_codes)
    bucket = bk.assign_ranked(plan, 1, adult.sa_codes, r)
    cls = (bucket >= nb[0]).astype(int)
    early = r < adult.sa_counts[adult.sa_codes] // 2
    table = np.array([[np.sum(~cls & early), np.sum(cls & early)], [np.sum(~cls & ~early), np.sum(cls & ~early)]])
    assert stats.chi2_contingency(table).pvalue > 0.001


# ------------------------------------------------------------------ SDR
@pytest.fixture(scope="module")
def sdr_case():
    data = load_dataset("toy-sdr")
    mech = sdr.MECHANISMS[0]
    values = mech.resolve({"rho1": "1/3", "rho2": "2/3"})
    return data, mech.pp(data, values)


def test_subtables_from_counts_hold_pps_counts(sdr_case):
    data, pl = sdr_case
    sub = sdr.deal_subtables(pl, 4, data.sa_codes, ranks(data.sa_codes))
    got = np.zeros_like(pl.counts)
    np.add.at(got, (sub, data.sa_codes), 1)
    assert np.array_equal(got, pl.counts)


@pytest.mark.slow
def test_subtable_of_a_record_is_uniform_given_its_value(sdr_case):
    # toy-sdr (Example 4): x4 has 5 records, 4 in T1 and 1 in T2; over 5,000 seeds each of its
    # records is the one in T2 with probability 1/5, whatever its rank
    data, pl = sdr_case
    x = int(np.flatnonzero((pl.counts > 0).all(axis=0))[0])
    c = int(pl.counts[:, x].sum())
    which = np.zeros(c, dtype=int)
    r = np.arange(c)
    for seed in range(5_000):
        sub = sdr.deal_subtables(pl, seed, np.full(c, x), r)
        which[sub == 1] += 1 if pl.counts[1, x] == 1 else 0
    assert pl.counts[1, x] == 1
    assert which.sum() == 5_000
    assert stats.chisquare(which).pvalue > 0.001


def test_perturbation_stays_in_the_subtables_domain_with_retention_p(adult):
    mech = sdr.MECHANISMS[0]
    values = mech.resolve({"rho1": 0.1, "rho2": 0.3})
    pl = mech.pp(adult, values)
    sub = sdr.deal_subtables(pl, 2, adult.sa_codes, ranks(adult.sa_codes))
    out = sdr.perturb_subtables(pl, 2, 0, adult.sa_codes, sub)
    member = pl.counts > 0
    assert member[sub, out].all()
    # P(unchanged) = p_i + (1 - p_i)/m_i per record: the expected count, within 4 standard deviations
    q = pl.p[sub] + (1 - pl.p[sub]) / pl.m[sub]
    assert abs((out == adult.sa_codes).sum() - q.sum()) < 4 * np.sqrt((q * (1 - q)).sum())
    # chunked: records 100.. drawn alone equal their slice of the whole
    part = sdr.perturb_subtables(pl, 2, 100, adult.sa_codes[100:900], sub[100:900])
    assert np.array_equal(part, out[100:900])


# ------------------------------------------------------------------ Mondrian
def _combos(data):
    key = np.zeros(data.n, dtype=np.int64)
    for c, dom in zip(data.qi_codes, data.domains):
        key = key * dom + c
    key = key * data.m + data.sa_codes
    _, first, inv, count = np.unique(key, return_index=True, return_inverse=True, return_counts=True)
    return first, inv, count


@pytest.mark.slow
@pytest.mark.parametrize("cells", [mo._HIST_CELLS, 0])  # histogram and sort paths
@pytest.mark.parametrize("k,l", [(10, 10), (3, 2), (50, 5)])
def test_mondrian_on_weighted_combinations_is_the_row_partition(adult, monkeypatch, cells, k, l):
    monkeypatch.setattr(mo, "_HIST_CELLS", cells)
    pos = [np.asarray(lab, dtype=float) if num else np.arange(len(lab), dtype=float)
           for lab, num in zip(adult.qi_labels, adult.qi_numeric)]
    first, inv, count = _combos(adult)
    rows = mo.mondrian_partition(adult.qi_codes, pos, adult.sa_codes, adult.m, k, l)
    combos = mo.mondrian_partition([c[first] for c in adult.qi_codes], pos, adult.sa_codes[first], adult.m, k, l,
                                   weights=count)
    assert np.array_equal(combos.group[inv], rows.group)
    assert (combos.n_groups, combos.levels) == (rows.n_groups, rows.levels)
    b_rows = mo.group_boxes(adult.qi_codes, adult.domains, adult.qi_numeric, rows.group, rows.n_groups,
                            adult.sa_codes, adult.m)
    b_combos = mo.group_boxes([c[first] for c in adult.qi_codes], adult.domains, adult.qi_numeric, combos.group,
                              combos.n_groups, adult.sa_codes[first], adult.m, weights=count)
    assert np.array_equal(b_rows.size, b_combos.size)
    assert np.array_equal(b_rows.lo, b_combos.lo) and np.array_equal(b_rows.hi, b_combos.hi)
    assert np.array_equal(b_rows.dom, b_combos.dom)
    assert (b_rows.st != b_combos.st).nnz == 0
