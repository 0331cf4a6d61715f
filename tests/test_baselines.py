"""Anatomy, DBR and Laplace: the papers' baselines."""

import numpy as np
import pandas as pd
import pytest

from core import mechanisms
from core.counting import QueryBatch, select
from core.errors import NotEligible
from core.table import bind, make_table
from core.workload import data_records


def table(n=1000, m=8, seed=0):
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({"a": rng.integers(0, 4, n), "b": rng.integers(0, 3, n),
                          "s": rng.integers(0, m, n).astype(str)})
    return bind(make_table(frame, "t"), "s", ["a", "b"])


def test_anatomy_groups_are_l_diverse_and_keep_every_record():
    data = table()
    rel = mechanisms.sanitize(data, "anatomy", {"l": 4}, seed=1)
    st = rel.tables["st"].to_frame()
    qit = rel.tables["qit"].to_frame()
    assert len(qit) == data.n and st["count"].sum() == data.n
    per_group = st.groupby("gid")["s"].agg(["nunique", "size"])
    assert (per_group["nunique"] == per_group["size"]).all()
    assert per_group["size"].isin([4, 5]).all()
    assert rel.privacy["l_diversity"] >= 4


def test_anatomy_estimator_matches_the_formula():
    """est = sum_g c(g, C) c(g, x) / |g| computed by hand from the published tables."""
    data = table(n=300, m=5, seed=2)
    rel = mechanisms.sanitize(data, "anatomy", {"l": 3}, seed=3)
    qit, st = rel.tables["qit"].to_frame(), rel.tables["st"].to_frame()
    labels_a = data.qi_labels[0]
    batch = QueryBatch(attrs=(0,), values=np.array([[1], [2]]), sa=np.eye(5, dtype=bool)[[0, 4]])
    got = mechanisms.estimate(rel, [batch])
    sizes = st.groupby("gid")["count"].sum()
    for q, (a_code, x_code) in enumerate([(1, 0), (2, 4)]):
        c_gc = qit[qit["a"] == labels_a[a_code]].groupby("gid").size()
        c_gx = st[st["s"] == data.sa_labels[x_code]].groupby("gid")["count"].sum()
        expected = sum(c_gc.get(g, 0) * c_gx.get(g, 0) / sizes[g] for g in sizes.index)
        assert got[q] == pytest.approx(expected)


def test_anatomy_eligibility_names_the_value_and_the_largest_l():
    frame = pd.DataFrame({"a": range(10), "s": list("aaaaabbccd")})
    data = bind(make_table(frame, "t"), "s", ["a"])
    with pytest.raises(NotEligible) as exc:
        mechanisms.sanitize(data, "anatomy", {"l": 3}, seed=0)
    assert "'a' has 5" in str(exc.value) and "largest feasible l is 2" in str(exc.value)
    assert exc.value.suggestion == {"l": 2}


def test_dbr_keeps_the_marginal_and_breaks_the_link():
    data = table(n=50_000, m=4, seed=4)
    rel = mechanisms.sanitize(data, "dbr", {}, seed=5)
    pub = np.bincount(rel.main_table.columns["s"], minlength=4) / data.n
    np.testing.assert_allclose(pub, data.sa_counts / data.n, atol=0.01)
    # share of unchanged values is the collision probability sum f_x^2, not 1
    f = data.sa_counts / data.n
    assert rel.privacy["share_unchanged"] == pytest.approx((f**2).sum(), abs=0.01)


def test_laplace_noise_has_scale_one_over_epsilon():
    data = table(n=500, m=3, seed=6)
    batch = QueryBatch(attrs=(0,), values=np.zeros((20_000, 1), dtype=int), sa=np.eye(3, dtype=bool)[np.zeros(20_000, int)])
    true = select(data_records(data).counts(batch), batch.sa)
    rel = mechanisms.sanitize(data, "laplace", {"epsilon": 0.5}, seed=7)
    noise = mechanisms.estimate(rel, [batch]) - true
    # Laplace(b): mean 0, mean absolute deviation b = 1/epsilon
    assert abs(noise.mean()) < 0.1
    assert np.mean(np.abs(noise)) == pytest.approx(2.0, rel=0.05)
    assert rel.tables["histogram"].to_frame()["noisy_count"].sum() == pytest.approx(500, abs=40)
