"""F'-privacy bucketization (seed 003): Examples 3-4, validation, searches against brute force, releases."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.mechanisms import bucketization_algorithm as bk
from core import mechanisms
from core.counting import QueryBatch
from core.errors import NotEligible, ParameterError
from core.table import load_dataset

# seed 003 Example 3: 50 records, o = 1 (x1..x8), 6 (x9..x12), 9 (x13, x14); f'_i = 2 f_i + 0.05
EX3 = np.array([1] * 8 + [6] * 4 + [9] * 2)
EX3_FP = 2 * EX3 / 50 + 0.05


@pytest.fixture(scope="module")
def adult():
    return load_dataset("adult", "occupation")


# ------------------------------------------------------------------ worked examples
def test_example3_thresholds_and_theorem3():
    np.testing.assert_allclose(EX3_FP[[0, 8, 12]], [0.09, 0.29, 0.41])
    a1 = np.minimum(bk.caps(EX3_FP, 4) * 9, EX3)
    a2 = np.minimum(bk.caps(EX3_FP, 14) * 1, EX3)
    # "a_i1 = 0 / 6 / 9, a_i2 = 1 / 4 / 5"
    assert a1[[0, 8, 12]].tolist() == [0, 6, 9]
    assert a2[[0, 8, 12]].tolist() == [1, 4, 5]
    assert a1.sum() == 42 and a2.sum() == 34  # FC: 42 >= 36, 34 >= 14
    assert bk.valid_two(EX3, EX3_FP, 4, 9, 14, 1)
    assert not bk.valid_two(EX3, EX3_FP, 4, 8, 14, 1)  # CC fails: 46 != 50
    assert not bk.valid_two(EX3, EX3_FP, 5, 10, 14, 0)  # x1..x8 cannot sit in buckets of 5 (0.09 x 5 < 1)


def test_example3_record_partition_and_figure1():
    t1, t2 = bk.record_partition(EX3, EX3_FP, 4, 9, 14, 1)
    # "moving one record for each of x9 - x14 from T1 to T2"
    assert t1.tolist() == [0] * 8 + [5] * 4 + [8] * 2
    assert t2.tolist() == [1] * 14
    plan = bk.Bucketing(((4, 9, t1), (14, 1, t2)), "two")
    sa = np.repeat(np.arange(14), EX3)
    bucket = bk.assign(sa, plan, np.random.default_rng(0))
    rows = [sorted((sa[bucket == g] + 1).tolist()) for g in range(10)]
    # Figure 1(b), the nine buckets of B1 (values by index), and (a) the one bucket of B2
    assert rows[:9] == [[9, 10, 12, 13], [9, 11, 12, 14], [9, 11, 13, 14], [9, 11, 13, 14], [9, 11, 13, 14],
                        [10, 11, 13, 14], [10, 12, 13, 14], [10, 12, 13, 14], [10, 12, 13, 14]]
    assert rows[9] == list(range(1, 15))


def test_example3_setting_is_the_two_size_optimum():
    best = bk.two_size(EX3, EX3_FP, 50)
    assert (best.s1, best.b1, best.s2, best.b2, best.loss) == (4, 9, 14, 1, 9 * 9 + 13 ** 2)
    assert best == bk.two_size_scan(EX3, EX3_FP, 50)


def test_example4_gamma_list():
    g = bk.gamma_list(28, 2, 4)
    assert (g.d1, g.d2, g.b1_0, g.b2_0, g.k) == (2, 1, 14, 0, 7)
    assert g.pairs() == [(14, 0), (12, 1), (10, 2), (8, 3), (6, 4), (4, 5), (2, 6), (0, 7)]
    losses = [g.loss(i) for i in range(g.k + 1)]
    assert losses == sorted(losses) and len(set(losses)) == len(losses)  # Lemma 5: strictly increasing
    assert bk.gamma_list(7, 2, 4) is None  # no even split of 7 records into 2s and 4s
    g = bk.gamma_list(29, 3, 5)  # 3 b1 + 5 b2 = 29: (8, 1), (3, 4)
    assert g.pairs() == [(8, 1), (3, 4)]


def test_lemma2_one_size():
    o = np.array([4, 3, 3])  # 10 records, f' = 0.5: buckets of 2 need o_i <= b
    fp = np.full(3, 0.5)
    assert bk.valid_one(o, fp, 2, 5)
    assert not bk.valid_one(np.array([6, 2, 2]), fp, 2, 5)  # 6 > floor(0.5 x 2) x 5
    assert not bk.valid_one(o, fp, 3, 3)  # 9 != 10 (capacity)
    # floor(f' S) is taken on the real number: 0.29 x 100 is 29, not 28.999...
    assert bk.caps(np.array([0.29]), 100)[0] == 29


def test_lemma1_infeasible_spec_names_the_values(adult):
    mech = mechanisms.get("bucketization")
    with pytest.raises(NotEligible) as exc:
        mech.check(adult, mech.resolve({"overrides": "Prof-specialty=0.05"}))
    msg = str(exc.value)
    assert "'Prof-specialty'" in msg and "Lemma 1" in msg and "at least 0.133" in msg and "\n" not in msg
    assert not exc.value.suggestion  # an override is fixed by raising it, not by theta
    # theta below 1 with b = 0 lets frequent values fall below their share; the suggestion works
    with pytest.raises(NotEligible) as exc:
        mech.check(adult, mech.resolve({"theta": 0.5, "b": 0}))
    theta = exc.value.suggestion["theta"]
    assert theta == pytest.approx(1.0)
    assert "θ = 1" in str(exc.value)


def test_bad_overrides_are_one_sentence(adult):
    for text, part in (("Sales", "value=threshold"), ("Nobody=0.1", "not a value"), ("Sales=2", "(0, 1]"),
                       ("Sales=abc", "(0, 1]")):
        with pytest.raises(ParameterError) as exc:
            mechanisms.sanitize(adult, "bucketization", {"overrides": text}, seed=0)
        assert part in str(exc.value) and "\n" not in str(exc.value)
    # labels with spaces and several pairs; fractions as the papers write them
    over = bk.parse_overrides(" Sales = 1/10 ; Exec-managerial=0.05;", adult.sa_labels)
    labels = list(adult.sa_labels)
    assert over == {labels.index("Sales"): 0.1, labels.index("Exec-managerial"): 0.05}


# ------------------------------------------------------------------ searches against brute force
tables = st.lists(st.integers(1, 25), min_size=2, max_size=6)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tables, st.floats(0.5, 6), st.floats(0, 0.3), st.integers(3, 14))
@pytest.mark.slow
def test_pruned_two_size_equals_plain_scan(counts, theta, b, max_size):
    o = np.array(counts)
    fp = bk.fprime(o, theta, b)
    if np.any(fp < o / o.sum() - 1e-12):
        return
    pruned, scan = bk.two_size(o, fp, max_size), bk.two_size_scan(o, fp, max_size)
    assert pruned == scan
    if pruned is not None:
        assert bk.valid_two(o, fp, pruned.s1, pruned.b1, pruned.s2, pruned.b2)


@settings(max_examples=60, deadline=None)
@given(tables, st.floats(1, 6), st.floats(0, 0.2), st.integers(4, 14))
@pytest.mark.slow
def test_multi_never_loses_more_than_two_and_milp_is_lowest(counts, theta, b, max_size):
    o = np.array(counts)
    fp = bk.fprime(o, theta, b)
    try:
        two = bk.two_size_bucketing(o, fp, max_size)
    except NotEligible:
        return
    multi = bk.multi_size(o, fp, max_size)
    best = bk.optimal(o, fp, max_size)
    assert best.loss <= multi.loss <= two.loss
    for plan in (two, multi, best):
        _check_plan(o, fp, plan)


def _check_plan(o, fp, plan):
    """Class counts add up, fill their buckets, and meet Lemma 2 in every class."""
    total = sum(c for _, _, c in plan.classes)
    assert np.array_equal(total, o)
    for s, b, c in plan.classes:
        assert c.sum() == s * b
        assert bk.valid_one(c, fp, s, b) or c.sum() == 0


# ------------------------------------------------------------------ Adult (seed 003 §7 on the public stand-in)
@pytest.mark.slow
def test_adult_losses_and_l_equivalent(adult):
    fp = bk.fprime(adult.sa_counts, 8, 0.02)
    assert bk.two_size_bucketing(adult.sa_counts, fp, 50).loss == 292_920
    assert bk.two_size_bucketing(adult.sa_counts, fp, 50).setting == [(3, 13214), (45, 124)]
    assert bk.multi_size(adult.sa_counts, fp, 50).loss == 158_967
    assert bk.optimal(adult.sa_counts, fp, 50).loss == 97_739
    d = mechanisms.get("bucketization").derived(adult, mechanisms.get("bucketization").resolve({}))
    assert d["l_equivalent"] == 45 and d["anatomy_max_l"] == 7 and d["smallest_bucket"] == 1


@pytest.mark.parametrize("sizes", ["two", "multi", "optimal"])
def test_every_published_bucket_meets_fprime(adult, sizes):
    rel = mechanisms.sanitize(adult, "bucketization", {"sizes": sizes, "overrides": "Tech-support=0.05"}, seed=3)
    qit, st_ = rel.tables["qit"], rel.tables["st"]
    g = qit.columns["bid"]
    sizes_qit = np.bincount(g)
    st_sizes = np.bincount(st_.columns["bid"], weights=st_.columns["count"])
    np.testing.assert_array_equal(sizes_qit, st_sizes)
    share = st_.columns["count"] / sizes_qit[st_.columns["bid"]]
    fp = {r["value"]: r["fprime"] for r in rel.published["fprime"]}
    limit = np.array([fp[str(adult.sa_labels[x])] for x in st_.columns["occupation"]])
    assert np.all(share <= limit + 1e-12)
    assert fp["Tech-support"] == 0.05
    # the setting in the manifest is what was published
    setting = sorted(zip(*np.unique(sizes_qit, return_counts=True)))
    assert [[int(s), int(b)] for s, b in setting] == rel.published["bucket_setting"]
    assert rel.published["loss"] == int(((sizes_qit - 1) ** 2).sum())
    assert rel.published["mse"] == pytest.approx(rel.published["loss"] / (adult.n - 1))
    assert rel.privacy["every_bucket_meets_fprime"]
    # the QIT keeps every record's QI values (as a multiset) and the ST every SA value
    np.testing.assert_array_equal(np.bincount(st_.columns["occupation"], weights=st_.columns["count"]),
                                  adult.sa_counts)


def test_optimal_is_refused_on_a_large_domain():
    data = load_dataset("census:20000", "occupation")
    with pytest.raises(NotEligible) as exc:
        mechanisms.sanitize(data, "bucketization", {"sizes": "optimal"}, seed=0)
    assert "sizes=multi" in str(exc.value) and exc.value.suggestion == {"sizes": "multi"}


def test_no_setting_within_the_size_cap(adult):
    with pytest.raises(NotEligible) as exc:
        mechanisms.sanitize(adult, "bucketization", {"max_bucket": 20}, seed=0)  # Armed-Forces needs 45
    assert "M′ = 20" in str(exc.value)


# ------------------------------------------------------------------ sigma fakes, estimator, seeds
def test_sigma_fakes_are_distinct_absent_and_counted():
    data = load_dataset("census:20000", "occupation")
    rel = mechanisms.sanitize(data, "bucketization", {"sigma": 2}, seed=4)
    base = mechanisms.sanitize(data, "bucketization", {"sigma": 0}, seed=4)
    st_, st0 = rel.tables["st"], base.tables["st"]
    buckets = int(st_.columns["bid"].max()) + 1
    assert rel.published["fake_values"] == 2 * buckets
    assert len(st_) == len(st0) + 2 * buckets
    pairs = set(zip(st_.columns["bid"].tolist(), st_.columns["occupation"].tolist()))
    assert len(pairs) == len(st_)  # distinct (bucket, value): fakes never repeat a present value
    assert rel.privacy["corruption_certainty"] == pytest.approx(1 / 3)
    assert np.array_equal(rel.tables["qit"].columns["bid"], base.tables["qit"].columns["bid"])
    with pytest.raises(NotEligible) as exc:
        mechanisms.sanitize(load_dataset("adult", "occupation"), "bucketization", {"sigma": 20}, seed=0)
    assert "largest σ" in str(exc.value)


def test_estimator_matches_anatomy_formula_with_or_predicates():
    adult = load_dataset("census:20000", "occupation")  # 49 values: room for a fake in every bucket
    rel = mechanisms.sanitize(adult, "bucketization", {"sigma": 1}, seed=2)
    qit, st_ = rel.tables["qit"], rel.tables["st"]
    rng = np.random.default_rng(0)
    masks = (rng.random((5, adult.domains[0])) < 0.4, rng.random((5, adult.domains[2])) < 0.5)
    sa = np.zeros((5, adult.m), dtype=bool)
    sa[np.arange(5), rng.integers(0, adult.m, 5)] = True
    sa[0, :3] = True  # an OR over SA values too
    batch = QueryBatch(attrs=(0, 2), masks=masks, sa=sa)
    est = mechanisms.estimate(rel, [batch])
    g = qit.columns["bid"]
    size = np.bincount(st_.columns["bid"], weights=st_.columns["count"])
    for q in range(5):
        match = masks[0][q][qit.columns["age"]] & masks[1][q][qit.columns["education"]]
        c_gc = np.bincount(g[match], minlength=len(size))
        sel = sa[q][st_.columns["occupation"]]
        expect = np.sum(c_gc[st_.columns["bid"][sel]] * st_.columns["count"][sel] / size[st_.columns["bid"][sel]])
        assert est[q] == pytest.approx(expect)


def test_same_seed_same_release(adult):
    a = mechanisms.sanitize(adult, "bucketization", {"theta": 4}, seed=9)
    b = mechanisms.sanitize(adult, "bucketization", {"theta": 4}, seed=9)
    for name in ("qit", "st"):
        for col in a.tables[name].columns:
            np.testing.assert_array_equal(a.tables[name].columns[col], b.tables[name].columns[col])
    c = mechanisms.sanitize(adult, "bucketization", {"theta": 4}, seed=10)
    assert not np.array_equal(a.tables["qit"].columns["bid"], c.tables["qit"].columns["bid"])


def test_max_distinct_matches_the_assignment(adult):
    for sizes in ("two", "multi"):
        rel = mechanisms.sanitize(adult, "bucketization", {"sizes": sizes}, seed=1)
        per_bucket = np.bincount(rel.tables["st"].columns["bid"])
        plan = mechanisms.get("bucketization").setting(adult, mechanisms.get("bucketization").resolve({"sizes": sizes}))
        assert bk.max_distinct(plan) == per_bucket.max()


@settings(max_examples=60, deadline=None)
@given(tables, st.floats(0.5, 6), st.floats(0, 0.3), st.integers(3, 12))
def test_loss_pruning_alone_gives_the_same_optimum(counts, theta, b, max_size):
    o = np.array(counts)
    fp = bk.fprime(o, theta, b)
    assert bk.two_size(o, fp, max_size, prune="loss") == bk.two_size(o, fp, max_size)


def test_values_with_fprime_one_are_reported_as_unprotected(adult):
    """theta = 8 on Adult: f' = min(1, 8 f + 0.02) is 1 for the four most frequent occupations.

    Their records may sit alone in a bucket, published with their true value;
    the manifest lists the values and counts those records (recomputed here
    from the published ST).  (sigma fakes cannot help here: the largest
    bucket already lists all 14 values, so sigma = 1 is refused.)
    """
    rel = mechanisms.sanitize(adult, "bucketization", {"theta": 8}, seed=1)
    top4 = sorted(str(adult.sa_labels[i]) for i in np.argsort(adult.sa_counts)[-4:])
    assert sorted(rel.privacy["unprotected_values"]) == top4
    st = rel.tables["st"].to_frame()
    distinct = st.groupby("bid").size()
    sizes = st.groupby("bid")["count"].sum()
    assert rel.privacy["records_revealed"] == int(sizes[distinct == 1].sum()) > 0.4 * adult.n
    assert any("protects nothing" in n for n in rel.notes)
    safe = mechanisms.sanitize(adult, "bucketization", {"theta": 2}, seed=1)
    assert safe.privacy["unprotected_values"] == [] and safe.privacy["records_revealed"] == 0
