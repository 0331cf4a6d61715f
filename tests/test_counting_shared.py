"""Counting on cells over shared QI combinations gives the answers the records give.

The workload's true answers are counted on the table's distinct (QI, SA)
combinations (:meth:`core.engine.combos.Combos.records`), and a release is
counted on its own distinct cells, coded by the table's QI combinations when
it publishes them (:func:`core.mechanisms.base.share_groups`).  These tests
hold both against brute force and against the per-record path
(:class:`core.counting.Records` over every row), for several mechanisms.
"""

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import core.counting as counting
from core import mechanisms
from core.counting import QIGroups, QueryBatch, Records, distinct_rows
from core.mechanisms.base import SHARED_GROUPS, published_records
from core.table import bind, load_table
from core.workload import data_records, seed000, true_answers

from test_counting import _random_batches, _random_table, brute


def _groupby(cols, domains, weights):
    frame = pd.DataFrame({f"c{j}": np.asarray(c, dtype=np.int64) for j, c in enumerate(cols)})
    frame["w"] = 1.0 if weights is None else weights
    g = frame.groupby([f"c{j}" for j in range(len(cols))], sort=True)["w"].sum()
    return [g.index.get_level_values(j).to_numpy(np.int64) for j in range(len(cols))], g.to_numpy()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10_000), n=st.integers(1, 500), k=st.integers(1, 4), batch=st.integers(1, 600),
       weighted=st.booleans())
def test_distinct_rows_match_a_group_by_in_any_batch_size(monkeypatch, seed, n, k, batch, weighted):
    monkeypatch.setattr(counting, "BATCH_ROWS", batch)
    rng = np.random.default_rng(seed)
    domains = [int(x) for x in rng.integers(1, 9, size=k)]
    cols = [rng.integers(0, d, n).astype(rng.choice([np.int8, np.int32, np.int64])) for d in domains]
    weights = rng.random(n) if weighted else None
    got, total = distinct_rows(cols, domains, weights)
    want, wtotal = _groupby(cols, domains, weights)
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)
    if weighted:
        np.testing.assert_allclose(total, wtotal, rtol=1e-12)
    else:
        assert total.dtype == np.int64
        np.testing.assert_array_equal(total, wtotal.astype(np.int64))


def test_distinct_rows_of_domains_wider_than_64_bits():
    rng = np.random.default_rng(3)
    domains = [300_000] * 4
    cols = [rng.integers(0, 300_000, 500) for _ in domains]
    cols[0][:50], cols[1][:50], cols[2][:50], cols[3][:50] = cols[0][50:100], cols[1][50:100], cols[2][50:100], \
        cols[3][50:100]
    got, total = distinct_rows(cols, domains)
    want, wtotal = _groupby(cols, domains, None)
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(total, wtotal)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10_000), n=st.integers(1, 300), weighted=st.booleans(), shared=st.booleans(),
       batch=st.integers(1, 400))
def test_cells_on_groups_match_brute_force(monkeypatch, seed, n, weighted, shared, batch):
    """Records.on_rows (own or a table's shared groups) against one boolean mask per query."""
    monkeypatch.setattr(counting, "BATCH_ROWS", batch)
    rng = np.random.default_rng(seed)
    domains, qi, m, target, weights = _random_table(rng, n, 5, 7, weighted)
    groups = None
    if shared:  # the groups of a larger table holding these rows' combinations and others
        extra = [np.concatenate([c, rng.integers(0, d, 50)]) for c, d in zip(qi, domains)]
        groups, _ = QIGroups.of_rows(extra, domains)
    rec = Records.on_rows(qi, domains, target, m, weights, groups=groups)
    assert len(rec) <= n
    assert (rec.groups is groups) == shared
    subsets = [tuple(sorted(rng.choice(5, size=d, replace=False).tolist())) for d in (1, 2, 3, 5)]
    batches = _random_batches(rng, domains, m, subsets)
    rec.prepare(batches)
    for b in batches:
        expected = brute(qi, target, m, weights, b.attrs, b.qi_masks(domains))
        np.testing.assert_allclose(rec.counts(b), expected, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(rec.total, n if weights is None else weights.sum(), rtol=1e-9)
    np.testing.assert_allclose(rec.target_totals, np.bincount(target, weights=weights, minlength=m), rtol=1e-9)
    # the rows' QI codes come back from the cells
    assert [len(c) for c in rec.qi_codes] == [len(rec)] * 5


def test_locate_refuses_rows_that_are_not_groups():
    qi = [np.array([0, 1, 2]), np.array([1, 1, 0])]
    groups, group = QIGroups.of_rows(qi, [3, 2])
    np.testing.assert_array_equal(groups.locate(qi), group)
    assert groups.locate([np.array([0, 2]), np.array([1, 1])]) is None  # (2, 1) is not a combination
    assert groups.locate([np.array([5]), np.array([0])]) is None  # a code beyond the domain
    rec = Records.on_rows([np.array([0, 2]), np.array([1, 1])], [3, 2], np.array([0, 1]), 2, groups=groups)
    assert rec.groups is not groups  # coded on its own cells instead
    batch = QueryBatch(attrs=(0, 1), values=np.array([[2, 1], [0, 1]]), sa=np.ones((2, 2), dtype=bool))
    np.testing.assert_array_equal(rec.counts(batch), [[0, 1], [1, 0]])


@pytest.fixture(scope="module")
def census():
    return bind(load_table("census:3000"), "occupation")


def test_true_answers_on_the_combinations_equal_the_records(census):
    wl = seed000(census, queries=600, seed=2)
    assert wl.groups is not None
    per_record = true_answers(Records(census.qi_codes, census.domains, census.sa_codes, census.m), wl.batches)
    np.testing.assert_array_equal(wl.true, per_record)
    cells = data_records(census)
    assert len(cells) < census.n


@pytest.mark.parametrize("mechanism,raw", [
    ("uniform", {}), ("reconstruction", {"p": 0.3}), ("splu", {}), ("sdr", {}), ("dbr", {}),
    ("anatomy", {}), ("bucketization", {}), ("mondrian", {}), ("ambiguity", {}), ("priview", {}),
])
def test_estimates_on_shared_cells_equal_the_per_record_path(census, monkeypatch, mechanism, raw):
    """A release evaluated on the workload's shared QI groups answers as when every published row is counted."""
    wl = seed000(census, queries=600, seed=2)
    release = mechanisms.sanitize(census, mechanism, raw, seed=5)
    fast = mechanisms.estimate(release, wl)
    if mechanism in ("uniform", "reconstruction", "splu", "dbr"):  # they publish the table's QI tuples
        assert release.state["_records"][SHARED_GROUPS] is wl.groups
        assert published_records(release).groups is wl.groups
    if mechanism == "sdr":  # both of its weighted counts are coded by the table's groups
        assert all(r.groups is wl.groups for r in release.state["_records"]["sdr"])
    # the per-record path: every published row counted, nothing shared
    monkeypatch.setattr(Records, "on_rows", classmethod(
        lambda cls, qi, domains, target, n_target, weights=None, groups=None:
        cls(qi, domains, target, n_target, weights)))
    again = mechanisms.sanitize(census, mechanism, raw, seed=5)
    slow = mechanisms.estimate(again, list(wl.batches))
    np.testing.assert_allclose(fast, slow, rtol=1e-9, atol=1e-9)


def test_joint_estimates_on_shared_cells_equal_the_per_record_path(monkeypatch):
    """SPLU-Gen's joint (SA, SA2) counts on the workload's QI groups answer as every published row counted."""
    from core.evaluate import estimate_joint
    from core.table import load_dataset
    from core.workload import joint

    two = load_dataset("census-2sa:3000")
    wl = joint(two, "age_interval", queries=300, seed=3)
    assert wl.groups is not None
    release = mechanisms.sanitize(two, "splu", {"gamma": 5, "sa2": "age_interval"}, seed=2)
    fast = estimate_joint(release, wl)
    assert release.state["_records"]["splu-joint"].groups is wl.groups
    monkeypatch.setattr(Records, "on_rows", classmethod(
        lambda cls, qi, domains, target, n_target, weights=None, groups=None:
        cls(qi, domains, target, n_target, weights)))
    again = mechanisms.sanitize(two, "splu", {"gamma": 5, "sa2": "age_interval"}, seed=2)
    np.testing.assert_allclose(fast, estimate_joint(again, wl), rtol=1e-9, atol=1e-9)
