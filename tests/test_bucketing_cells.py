"""Bucketization's census-scale slider path: the ST's cells without a sort of every record, a slot's bucket id,
the guarantee and the page's counts block by block, the local engine's published-order hook, the collector freeze.

Each new path is checked against the plain computation it replaces, on tables where the blocks, classes and
value runs fall at every kind of boundary.
"""

from __future__ import annotations

import gc

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.mechanisms import bucketization_algorithm as bk
from core import lru
from core import mechanisms
from core.engine.combos import LazyCombos
from core.engine.protocol import Plan
from core.mechanisms import bucketization as bmod
from core.table import bind, code_dtype, load_table

# value counts from tiny to a few thousand, absent values included; more than 256 values now and then
counts_st = st.one_of(
    st.lists(st.integers(0, 3000), min_size=1, max_size=14),
    st.lists(st.integers(0, 3), min_size=257, max_size=300),
).filter(lambda c: sum(c) > 1)


def _plan(counts, theta, max_size, method):
    o = np.asarray(counts, dtype=np.int64)
    fp = np.maximum(bk.fprime(o, theta, 0.02), o / o.sum())
    try:
        return bk.bucketize(o, fp, max_size, method)
    except bk.NotEligible:
        return bk.bucketize(o, np.ones(len(o)), 2, "two")  # f' = 1: any bucket is valid


def _reference(plan, ids):
    """The ST's cells from the dense (buckets x values) counts, renumbered and sorted by (id, value)."""
    _, dense = bk.bucket_counts(plan)
    g, x = np.nonzero(dense)
    order = np.lexsort((x, ids[g]))
    return ids[g][order], x[order], dense[g, x][order]


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(counts_st, st.floats(1, 16), st.integers(4, 50), st.sampled_from(["two", "multi"]),
       st.integers(0, 2 ** 31 - 1), st.sampled_from([1, 7, 64, 1 << 20]))
@pytest.mark.slow  # over 1 s of CPU (the conftest check)
def test_published_cells_are_the_dense_cells_sorted_by_id(counts, theta, max_size, method, seed, block):
    """Same cells, counts and order as the dense table sorted, for any block size (1 record: a bucket a block)."""
    plan = _plan(counts, theta, max_size, method)
    n_buckets = int(bk.classes_by_size(plan)[1].sum())
    ids = np.random.default_rng(seed).permutation(n_buckets)
    old = bk.CELL_RECORDS
    bk.CELL_RECORDS = block
    try:
        bid, value, count = bk.published_cells(plan, ids)
    finally:
        bk.CELL_RECORDS = old
    ref = _reference(plan, ids)
    assert np.array_equal(bid, ref[0]) and np.array_equal(value, ref[1]) and np.array_equal(count, ref[2])
    assert value.dtype == (np.uint8 if len(counts) <= 255 else np.uint16)
    # ids in int32 (a permutation of fewer than 2**31 buckets), counts in the narrowest unsigned type
    assert bid.dtype == np.int32 and count.dtype == code_dtype(int(count.max(initial=0)))
    # and the unpermuted entries are the same cells bucket by bucket
    g, x, c, sizes = bk.bucket_entries(plan)
    assert np.array_equal(np.bincount(g, weights=c, minlength=n_buckets), sizes)
    assert np.array_equal(np.lexsort((x, g)), np.arange(len(g)))


@pytest.mark.parametrize("spread", [3, 2 ** 40])
def test_published_cells_sort_ids_that_are_not_a_permutation(spread):
    """Distinct ids that are not ``0 .. n - 1`` (none of the mechanism's own) are sorted, not scattered: the same
    cells in the same order as the dense table sorted; ``2**40`` makes the packed bits overflow, so
    :func:`sort_cells` takes its argsort."""
    plan = _plan([40, 7, 300, 0, 12], 4, 20, "multi")
    n_buckets = int(bk.classes_by_size(plan)[1].sum())
    ids = np.random.default_rng(3).permutation(n_buckets).astype(np.int64) * spread + 5
    got = bk.published_cells(plan, ids)
    ref = _reference(plan, ids)
    assert all(np.array_equal(a, b) for a, b in zip(got, ref))
    assert got[0].dtype == (np.int32 if spread == 3 else np.int64)  # ids above 2**31 stay int64


def test_published_cells_refuse_ids_of_another_plan():
    plan = _plan([40, 7, 300, 0, 12], 4, 20, "multi")
    n_buckets = int(bk.classes_by_size(plan)[1].sum())
    with pytest.raises(ValueError, match="ids for"):
        bk.published_cells(plan, np.arange(n_buckets + 1))


@pytest.mark.slow  # over 1 s of CPU (the conftest check)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(counts_st, st.floats(1, 16), st.integers(4, 40), st.integers(0, 2 ** 31 - 1))
def test_slot_buckets_with_ids_are_the_ids_of_the_slot_buckets(counts, theta, max_size, seed):
    plan = _plan(counts, theta, max_size, "multi")
    ids = np.random.default_rng(seed).permutation(int(bk.classes_by_size(plan)[1].sum())).astype(np.uint32)
    got = bk.slot_buckets(plan, ids)
    assert got.dtype == np.uint32 and np.array_equal(got, ids[bk.slot_buckets(plan)])


@pytest.fixture(scope="module")
def census():
    return bind(load_table("census:6000"), "occupation", ["age", "sex", "race", "education"])


@pytest.mark.parametrize("raw", [{"theta": 8.0}, {"theta": 3.0, "sigma": 1}, {"theta": 30.0}])
def test_guarantee_and_page_counts_are_the_same_in_small_blocks(monkeypatch, census, raw):
    """The verdict (figures included) and the page's exposure and SA counts do not depend on the block size."""
    from pages.ui import data as uidata
    from pages.ui.views import bucketization as view

    release = mechanisms.sanitize(census, "bucketization", raw, 5)
    mech = mechanisms.get("bucketization")
    values = mech.resolve(raw)
    whole = mech.guarantee(census, values, release)
    exposed = view.exposure(release, census)
    counts = uidata.release_sa_counts(release, census)
    monkeypatch.setattr(bmod, "CELL_BLOCK", 5)
    monkeypatch.setattr(view, "CELL_BLOCK", 5)
    monkeypatch.setattr(uidata, "BLOCK_ROWS", 7)
    assert mech.guarantee(census, values, release) == whole
    small = view.exposure(release, census)
    assert np.array_equal(small.revealed, exposed.revealed)
    assert np.array_equal(small.revealed_size1, exposed.revealed_size1)
    name, got = uidata.release_sa_counts(release, census)
    assert name == counts[0] and np.array_equal(got, counts[1])
    st_t = release.tables["st"]
    assert np.array_equal(got, np.bincount(st_t.columns[census.sa], weights=st_t.columns["count"],
                                           minlength=census.m))
    sizes = bmod.bucket_sizes(release)
    assert np.array_equal(sizes, np.bincount(release.tables["qit"].columns["bid"]))
    assert bmod.bucket_sizes(release) is sizes  # counted once per release


def test_a_plan_without_in_order_is_applied_batch_by_batch(monkeypatch, census):
    """The default hook says None; a release is the same whichever path the engine takes (see
    tests/test_record_memo.py for bucketization's own)."""
    plan = mechanisms.get("uniform").plan(LazyCombos(census), mechanisms.get("uniform").resolve({}), 5)
    assert type(plan).in_order is Plan.in_order and plan.in_order(np.arange(census.n)) is None
    from core.engine import memo as record_memo

    monkeypatch.setattr(record_memo, "RECORD_MEMO", None)  # as in the CLI (the app's pages install one)
    bplan = mechanisms.get("bucketization").plan(LazyCombos(census), mechanisms.get("bucketization").resolve({}), 5)
    assert bplan.in_order(np.arange(census.n)) is None  # no memo (the CLI): batch by batch


def test_freeze_startup_runs_once(monkeypatch):
    monkeypatch.setattr(lru, "_FROZEN", [False])
    gc.unfreeze()
    before = gc.get_freeze_count()
    try:
        assert lru.freeze_startup() is True
        assert gc.get_freeze_count() > before
        assert lru.freeze_startup() is False
    finally:
        gc.unfreeze()


def test_refreeze_collects_frozen_garbage(monkeypatch):
    """A reference cycle frozen while alive and dropped later is collected by :func:`core.lru.refreeze`."""
    import weakref

    class Node:
        pass

    gc.unfreeze()
    a, b = Node(), Node()
    a.other, b.other = b, a
    probe = weakref.ref(a)
    monkeypatch.setattr(lru, "_FROZEN", [False])
    try:
        lru.freeze_startup()
        del a, b
        gc.collect()
        assert probe() is not None  # frozen: the collector does not look at it
        assert lru.frozen()
        lru.refreeze()
        assert probe() is None
    finally:
        gc.unfreeze()


@pytest.mark.parametrize("n_buckets", [5_000, 2 ** 60])  # packed, and the argsort when the bits do not fit
def test_sort_cells_orders_unordered_cells_by_bucket_then_value(n_buckets):
    rng = np.random.default_rng(4)
    pairs = rng.choice(5_000 * 40, 20_000, replace=False)
    g, x, c = pairs // 40, pairs % 40, rng.integers(1, 60, 20_000)
    bid, value, count = bk.sort_cells(g, x, c, n_buckets, 40)
    order = np.lexsort((x, g))
    assert np.array_equal(bid, g[order]) and np.array_equal(value, x[order]) and np.array_equal(count, c[order])
    assert value.dtype == np.uint8 and count.dtype == np.uint8
    assert bid.dtype == np.int32  # by the largest id (below 5,000 here), not by the number of buckets
