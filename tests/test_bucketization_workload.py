"""Seed 003's OR-predicate workload and the projected counting behind it."""

from __future__ import annotations

import numpy as np
import pytest

from core import mechanisms
from core.counting import Records
from core.evaluate import make_workload
from core.mechanisms.base import bucket_records
from core.table import load_dataset
from core.workload import data_records, true_answers
from core.workloads.seed003 import mean_relative_error, mse, or_width, seed003


@pytest.fixture(scope="module")
def adult():
    return load_dataset("adult", "occupation")


def test_or_width_is_anatomys_b():
    # b = ceil(|A| s^(1/(qd+1))): |A| = 74 ages, s = 1%: qd = 1 -> 7.4 -> 8; qd = 3 -> 74 x 0.316 = 23.4 -> 24
    assert or_width(74, 0.01, np.array([1, 3])).tolist() == [8, 24]
    assert or_width(2, 0.01, np.array([1])).tolist() == [1]  # at least one value
    assert or_width(14, 1.0, np.array([2])).tolist() == [14]  # s = 1: every value


def test_queries_follow_the_generator(adult):
    wl = seed003(adult, queries=400, seed=3)
    assert len(wl) == 400 and wl.kind == "seed003"
    k = len(adult.qi)
    seen_dims = set()
    for batch in wl.batches:
        qd = len(batch.attrs)
        seen_dims.add(qd)
        for a, mask in zip(batch.attrs, batch.masks):
            assert np.all(mask.sum(axis=1) == or_width(adult.domains[a], 0.01, np.array([qd]))[0])
        assert np.all(batch.sa.sum(axis=1) == or_width(adult.m, 0.01, np.array([qd]))[0])
    assert seen_dims == set(range(1, k + 1))  # q_d uniform in 1..7: every dimensionality occurs
    # expected selectivity 1%: on real (non-uniform) data the mean lands near it
    sel = wl.true / adult.n
    assert 0.003 < sel.mean() < 0.03
    one = seed003(adult, queries=50, sa="one", seed=3)
    assert all(np.all(b.sa.sum(axis=1) == 1) for b in one.batches)
    assert "IN (" in wl.describe(adult, 0) and " AND " in wl.describe(adult, 5)


def test_true_answers_equal_a_brute_force_scan(adult):
    wl = seed003(adult, queries=60, seed=1)
    for i in range(0, 60, 7):
        batch, r = wl.locate(i)
        hit = batch.sa[r][adult.sa_codes]
        for a, mask in zip(batch.attrs, batch.masks):
            hit &= mask[r][adult.qi_codes[a]]
        assert wl.true[i] == hit.sum()
    again = seed003(adult, queries=60, seed=1)
    np.testing.assert_array_equal(wl.true, again.true)
    assert not np.array_equal(wl.true, seed003(adult, queries=60, seed=2).true)


@pytest.mark.slow
def test_projected_counts_equal_the_plain_records(adult):
    wl = seed003(adult, queries=200, seed=5)
    direct = true_answers(data_records(adult), wl.batches)
    np.testing.assert_array_equal(direct, wl.true)
    # the bucketization estimator (QIT index x ST) equals Anatomy's expanded-records estimator
    rel = mechanisms.sanitize(adult, "bucketization", {"sizes": "two"}, seed=2)
    qit, st = rel.tables["qit"], rel.tables["st"]
    args = ([qit.columns[c] for c in adult.qi], adult.domains, qit.columns["bid"], st.columns["bid"],
            st.columns["occupation"], st.columns["count"], adult.m)
    expanded = true_answers(bucket_records(*args), wl.batches)
    projected = true_answers(Records.from_groups(*args), wl.batches)
    np.testing.assert_allclose(projected, expanded, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(mechanisms.estimate(rel, wl), expanded, rtol=1e-9, atol=1e-9)


def test_registered_kind_and_metrics(adult):
    wl = make_workload(adult, "seed003", queries="30", selectivity="0.05", seed="2")
    assert len(wl) == 30 and wl.settings["selectivity"] == 0.05
    assert [b.name for b in wl.bands][0] == "all queries (answer > 0)"
    assert mse(np.array([1.0, 3.0]), np.array([2.0, 1.0])) == pytest.approx(2.5)
    assert mean_relative_error(np.array([0.0, 2.0, 4.0]), np.array([5.0, 1.0, 5.0])) == pytest.approx(0.375)
