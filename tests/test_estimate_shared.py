"""The estimators' shared passes (every sampled micro group under each SA value, the risk map's attack).

Each fast path is checked against the pass it replaces, to the bit: the
same terms summed in the same order give the same floats, so the map's
figures do not move.
"""

import numpy as np
import pytest

from core import mechanisms, risk
from core.counting import Records, unique_rows
from core.mechanisms import mondrian as M
from core.table import load_dataset


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64])
def test_unique_rows_is_numpys_unique_over_rows(dtype):
    rng = np.random.default_rng(7)
    for _ in range(200):
        values = rng.integers(0, rng.integers(1, 60), size=(rng.integers(1, 400), rng.integers(1, 8))).astype(dtype)
        rows, inv = np.unique(values, axis=0, return_inverse=True)
        got_rows, got_inv = unique_rows(values)
        assert got_rows.dtype == rows.dtype
        np.testing.assert_array_equal(got_rows, rows)
        np.testing.assert_array_equal(got_inv, inv.ravel())
        np.testing.assert_array_equal(got_rows[got_inv], values)


def test_unique_rows_falls_back_on_negative_codes_and_keys_that_overflow():
    negative = np.array([[0, -1], [0, -1], [2, 3]])
    wide = np.array([[2**40, 2**30, 5], [1, 2, 3], [2**40, 2**30, 5]], dtype=np.int64)  # 2^70 cells: no int64 key
    for values in (negative, wide):
        rows, inv = unique_rows(values)
        want_rows, want_inv = np.unique(values, axis=0, return_inverse=True)
        np.testing.assert_array_equal(rows, want_rows)
        np.testing.assert_array_equal(inv, want_inv.ravel())


@pytest.fixture(scope="module")
def census():
    return load_dataset("census:20000", "occupation")


def _micro_groups(data, seed):
    return risk.group_batches(data, risk.targets(data, 1500, seed))


@pytest.mark.slow
@pytest.mark.parametrize("params", [{"k": 3, "beta": 1.0}, {"k": 10, "beta": 0.2}, {"k": 50, "beta": 0.5}])
def test_mondrian_reads_only_the_boxes_holding_a_value_and_gets_every_bit_of_the_full_pass(census, params,
                                                                                         monkeypatch):
    batches = _micro_groups(census, 1)
    release = mechanisms.sanitize(census, "mondrian", params, 4)
    boxes = release.state["boxes"]
    values = np.asarray(batches[0].values, np.int64)
    rows, _ = unique_rows(values)
    assert M._per_value_sparse(boxes, batches[0].attrs, rows, release.state["domains"]) is not None  # the fast path
    fast = mechanisms.estimate(release, batches)
    monkeypatch.setattr(M, "_per_value_sparse", lambda *a: None)  # every group, as before
    full = mechanisms.estimate(mechanisms.sanitize(census, "mondrian", params, 4), batches)
    np.testing.assert_array_equal(fast, full)
    assert fast.sum() > 0


def test_mondrians_boxes_list_the_groups_holding_each_code(census):
    release = mechanisms.sanitize(census, "mondrian", {"k": 5, "beta": 1.0}, 2)
    boxes, domains = release.state["boxes"], release.state["domains"]
    for a, size in enumerate(domains):
        holders = boxes.holders(a, int(size)).toarray() != 0
        if boxes.numeric[a]:
            codes = np.arange(size)
            want = (boxes.lo[:, a][None, :] <= codes[:, None]) & (codes[:, None] <= boxes.hi[:, a][None, :])
        else:
            want = boxes.sets[a].toarray().T != 0
        np.testing.assert_array_equal(holders, want)
        np.testing.assert_array_equal(boxes.reach(a, int(size)), want.sum(axis=1))


@pytest.mark.slow
@pytest.mark.parametrize("name", ["ambiguity", "priview"])
def test_ambiguitys_shared_pass_keeps_only_pairs_that_can_count_and_gets_every_bit(name, monkeypatch):
    from core.mechanisms import ambiguity_algorithm as A

    data = load_dataset("adult", "occupation")
    batches = _micro_groups(data, 3)
    release = mechanisms.sanitize(data, name, {"beta": 0.2}, 5)
    fast = mechanisms.estimate(release, batches)
    # the pass before: every pair of a row and a group listing its value of the most selective attribute
    monkeypatch.setattr(A, "_PAIR_FILTER", False)
    full = mechanisms.estimate(mechanisms.sanitize(data, name, {"beta": 0.2}, 5), batches)
    np.testing.assert_array_equal(fast, full)
    assert fast.sum() > 0


def test_group_releases_count_on_the_tables_combinations_with_the_same_answers():
    data = load_dataset("census:20000", "occupation")
    from core.engine.combos import Combos
    from core.mechanisms.base import share_groups
    from core.workload import seed000

    workload = seed000(data, 300, seed=2)
    for name in ("anatomy", "bucketization"):
        shared = mechanisms.sanitize(data, name, {}, 1)
        share_groups(shared, Combos.of(data).groups)
        own = mechanisms.sanitize(data, name, {}, 1)
        np.testing.assert_allclose(mechanisms.estimate(shared, workload.batches),
                                   mechanisms.estimate(own, workload.batches), rtol=1e-12, atol=1e-9)
        records = [v for v in shared.state["_records"].values() if isinstance(v, Records)]
        assert records and records[0].groups is Combos.of(data).groups
