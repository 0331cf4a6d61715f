"""Risk measures on constructed tables where the answer is known."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, strategies as st

from core import mechanisms, risk
from core.mechanisms.base import Mechanism, observed, qi_table
from core.release import Published
from core.table import bind, make_table
from core.workload import seed000


class Raw(Mechanism):
    """Publishes the table as it is (a test double: the worst case for privacy)."""

    name = "raw-test"

    def sanitize(self, data, values, rng):
        return Published(tables={"release": qi_table(data, np.arange(data.n), data.sa_codes)})

    def estimate(self, release, batch, rng):
        return observed(release, batch)[0]


@pytest.fixture
def raw(monkeypatch):
    monkeypatch.setitem(mechanisms.MECHANISMS, "raw-test", Raw())
    return "raw-test"


def correlated(n=3000, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 4, n)
    b = rng.integers(0, 3, n)
    # the SA depends on the QIs, so a raw release lets the adversary guess well
    s = np.where(rng.random(n) < 0.7, (a + b) % 5, rng.integers(0, 5, n))
    frame = pd.DataFrame({"a": a, "b": b, "s": [f"v{x}" for x in s]})
    return bind(make_table(frame, "t"), "s", ["a", "b"])


def test_raw_release_scores_the_bayes_optimal_accuracy(raw):
    data = correlated()
    t = risk.targets(data, records=1000, seed=1)
    w = seed000(data, 200, seed=0)
    p = risk.measure(data, raw, {}, w, t, seed=0)
    assert p.inference_accuracy == pytest.approx(risk.bayes_accuracy(data, t))
    assert p.inference_accuracy > 0.6 and p.inference_lift > 2
    assert p.small_sum_disclosure == 1.0 and p.large_error == 0.0 and p.presence == 1.0


def test_dbr_scores_the_global_mode_baseline():
    """Large micro groups and an SA drawn independently of the QIs: the guess is the global mode."""
    rng = np.random.default_rng(2)
    n = 20_000
    frame = pd.DataFrame({"a": rng.integers(0, 2, n),
                          "s": rng.choice(["x", "y", "z"], size=n, p=[0.5, 0.3, 0.2])})
    data = bind(make_table(frame, "t"), "s", ["a"])
    t = risk.targets(data, records=2000, seed=3)
    w = seed000(data, 50, seed=0)
    p = risk.measure(data, "dbr", {}, w, t, seed=4)
    assert p.inference_accuracy == pytest.approx(t.mode_share, abs=0.03)
    assert p.inference_lift == pytest.approx(1.0, abs=0.06)


def test_more_noise_means_less_inference():
    data = correlated(seed=5)
    t = risk.targets(data, records=1500, seed=0)
    w = seed000(data, 200, seed=0)
    hi = risk.measure(data, "uniform", {"p": 0.9}, w, t, seed=1)
    lo = risk.measure(data, "uniform", {"p": 0.05}, w, t, seed=1)
    assert hi.inference_accuracy > lo.inference_accuracy + 0.2
    assert hi.large_error < lo.large_error


def test_ties_go_to_the_global_mode():
    t = risk.Targets(values=np.zeros((2, 1), int), group_of=np.array([0, 1, 1]), truth=np.array([2, 2, 0]),
                     mode_share=0.5, mode=2)
    est = np.array([1.0, 1.0, 1.0, 0.0, 3.0, 1.0])  # group 0: all tied; group 1: value 1 wins
    np.testing.assert_array_equal(risk.guesses(est, t, 3), [2, 1, 1])


@given(st.lists(st.tuples(st.floats(0, 5), st.floats(0, 5)), min_size=1, max_size=30))
def test_pareto_front_matches_brute_force(pairs):
    pts = [risk.Point("m", {}, 0, 0.5, x, None, 1.0, y, None) for x, y in pairs]
    front = set(risk.pareto(pts))
    for i, (x, y) in enumerate(pairs):
        dominated = any(xj <= x and yj <= y and (xj < x or yj < y) for j, (xj, yj) in enumerate(pairs) if j != i)
        assert (i in front) == (not dominated)


def test_settings_left_out_of_a_sweep_name_their_values():
    from core.table import load_dataset

    data = load_dataset("toy-ambiguity")
    w = seed000(data, queries=20, seed=0)
    t = risk.targets(data, records=8, seed=0)
    points, skipped = risk.sweep_points(data, ["sdr"], w, t, sweeps={"sdr": [1 / 6, 0.25]})
    assert not points
    assert [s.split(":")[0] for s in skipped] == ["Small domain randomization (PP) at rho2 = 1/6",
                                                  "Small domain randomization (PP) at rho2 = 0.25"]
    assert risk.setting_text({}) == "no parameters"


@pytest.mark.parametrize("name, params", [pytest.param("ambiguity", {"beta": 0.2}, marks=pytest.mark.slow),
                                          ("mondrian", {"beta": 0.2}),
                                          ("mondrian", {"beta": 0.5})])
def test_the_attack_shares_each_groups_product_and_answers_as_one_query_at_a_time(name, params):
    """The attack's batch (each sampled group under every SA value) takes the shared path of Ambiguity's and
    Mondrian's estimators; its answers equal the per-SA-value pass (each value's queries alone, no row repeated)."""
    from core.table import load_table

    data = bind(load_table("census:4000"), "occupation", ["age", "workclass", "education", "sex", "race"])
    t = risk.targets(data, 600, 3)
    batch = risk.group_batches(data, t)[0]
    rel = mechanisms.sanitize(data, name, params, 5)
    together = mechanisms.estimate(rel, [batch])
    assert len(t.values) * 2 <= len(batch)  # rows repeat: the shared path is taken
    alone = np.zeros(len(batch))
    for v in range(data.m):
        rows = np.flatnonzero(batch.sa[:, v])
        alone[rows] = mechanisms.estimate(rel, [batch.take(rows)])  # distinct rows: the per-value pass
    assert together.sum() > 0
    np.testing.assert_allclose(together, alone, rtol=1e-9, atol=1e-9)


def test_a_release_of_no_rows_is_scored_by_the_mechanisms_attacker_alone():
    """Ambiguity holds every record back on a small one-QI table (ANES 1996: age and income): nothing to read."""
    from core.table import load_dataset

    rng = np.random.default_rng(1)
    rows = zip(rng.integers(18, 91, 900), rng.integers(1, 25, 900))
    data = load_dataset(("age,income\n" + "".join(f"{a},{i}\n" for a, i in rows)).encode(), "income", ["age"],
                        filename="anes.csv")
    release = mechanisms.sanitize(data, "ambiguity", {"beta": 0.1}, 0)
    assert release.rows_out == 0
    assert risk.published_rows(release, data, np.random.default_rng(0)) is None
    a = risk.assess(data, "ambiguity", {"beta": 0.1}, 0, attacks=200)
    assert [b.attacker for b in a.by] == ["mechanism"] and 0 <= a.signed.high <= 1
    with_rows = mechanisms.sanitize(data, "anatomy", {}, 0)  # a release with rows is still read
    assert risk.published_rows(with_rows, data, np.random.default_rng(0)) is not None
