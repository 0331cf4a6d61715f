"""Query workloads of seeds 000 and 002."""

from collections import Counter

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from core.table import bind, load_dataset, make_table
from core.workload import seed000, seed002

QI = ["age", "workclass", "education", "marital_status", "race", "sex", "native_country"]


@pytest.fixture(scope="module")
def adult():
    return load_dataset("adult", "occupation", QI)


def test_seed000_bands_hold_what_they_say(adult):
    w = seed000(adult, queries=2000, seed=1)
    n = adult.n
    small = w.membership[0]
    assert small.sum() == 1000
    assert np.all((w.true[small] >= 1) & (w.true[small] <= 10))
    for band, member in zip(w.bands[1:], w.membership[1:]):
        sel = w.true[member] / n
        assert member.sum() > 0
        assert np.all(sel >= band.lo - 1e-12)
        if band.hi is not None:
            assert np.all(sel < band.hi)
    # every query in exactly one band
    assert np.all(w.membership.sum(axis=0) == 1)


def test_seed000_is_deterministic_and_describes_queries(adult):
    a, b = seed000(adult, 500, seed=3), seed000(adult, 500, seed=3)
    np.testing.assert_array_equal(a.true, b.true)
    text = a.describe(adult, 0)
    assert text.endswith(tuple(f"occupation = {v}" for v in adult.sa_labels))
    assert 1 <= text.count(" AND ") <= 3


@pytest.mark.slow
def test_seed000_sampling_matches_the_papers_generator():
    """Conditioned on the band, queries are drawn as the paper's uniform generator would draw them.

    Tiny table, one band (small counts): the exact conditional probability of each query is
    P(d) / C(k, d) / (prod of domains * m), renormalised over the queries in the band.
    """
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"a": rng.integers(0, 2, 60), "b": rng.integers(0, 5, 60), "s": rng.integers(0, 2, 60)})
    data = bind(make_table(frame.astype({"s": str}), "t"), "s", ["a", "b"])
    seen = Counter()
    for seed in range(400):
        w = seed000(data, queries=2, max_attrs=2, seed=seed)  # one small-count query per workload
        (i,) = np.flatnonzero(w.membership[0])
        batch, r = w.locate(int(i))
        seen[(batch.attrs, tuple(batch.values[r].tolist()), int(np.argmax(batch.sa[r])))] += 1
    # exact conditional distribution
    from core.workload import data_records
    rec = data_records(data)
    weights = {}
    for attrs, p_sub in [((0,), 0.25), ((1,), 0.25), ((0, 1), 0.5)]:
        values, sa, count = rec.index(attrs).entries()
        cells = np.prod([data.domains[a] for a in attrs]) * data.m
        for v, s, c in zip(values, sa, count):
            if 1 <= c <= 10:
                weights[(attrs, tuple(v.tolist()), int(s))] = p_sub / cells
    keys = sorted(weights)
    total = sum(weights.values())
    observed = np.array([seen.get(k, 0) for k in keys])
    expected = np.array([weights[k] / total for k in keys]) * observed.sum()
    assert set(seen) <= set(weights)
    assert stats.chisquare(observed, expected).pvalue > 0.001


def test_seed002_crosses_conditions_with_every_value(adult):
    w = seed002(adult, conditions=50, seed=2)
    assert len(w) == 50 * adult.m
    # each condition asked once per SA value
    for batch in w.batches:
        assert batch.sa.sum() == len(batch)
        assert np.all(batch.sa.reshape(-1, adult.m, adult.m).sum(axis=1) == 1)
    # thresholds are nested
    assert np.all(w.membership[2] <= w.membership[1]) and np.all(w.membership[1] <= w.membership[0])
    sel = w.true / adult.n
    np.testing.assert_array_equal(w.membership[0], sel >= 0.001)
