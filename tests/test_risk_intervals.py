"""Count intervals in people (core.intervals): exact figures checked against seeded simulation."""

import json
import math

import numpy as np
import pandas as pd
import pytest

from core import intervals, mechanisms
from core.table import bind, make_table
from core.workload import seed000


def table(n=3000, seed=0):
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({"a": rng.integers(0, 12, n), "b": rng.integers(0, 6, n), "c": rng.integers(0, 3, n),
                          "s": rng.choice([f"v{i}" for i in range(5)], n, p=[0.4, 0.3, 0.15, 0.1, 0.05])})
    return bind(make_table(frame, "t"), "s", ["a", "b", "c"])


def _simulated(data, w, mechanism, params, idx, reps):
    """The pooled 95% quantile of |error| over ``reps`` independently seeded releases (the brute-force twin)."""
    true = np.asarray(w.true, float)
    errs = []
    for s in range(reps):
        rel = mechanisms.sanitize(data, mechanism, params, 1000 + s)
        errs.append(np.asarray(mechanisms.estimate(rel, w), float)[idx] - true[idx])
    return float(np.quantile(np.abs(np.concatenate(errs)), 0.95))


def test_laplace_is_its_tail():
    data = table()
    ci = intervals.count_intervals(data, "laplace", {"epsilon": 0.5}, 0, queries=200)
    assert ci.method == intervals.EXACT_LAPLACE
    assert ci.half_width(10) == pytest.approx(math.log(20) / 0.5)  # P(|Lap(2)| > h) = exp(-h / 2) = 0.05
    assert all(b.half_width == pytest.approx(math.log(20) / 0.5) for b in ci.bands if b.queries)


@pytest.mark.slow
@pytest.mark.parametrize("mechanism, params", [("uniform", {"p": 0.3}), ("reconstruction", {"p": 0.3})])
def test_the_exact_binomial_interval_matches_simulation(mechanism, params):
    data = table()
    w = seed000(data, 600, seed=1)
    ci = intervals.count_intervals(data, mechanism, params, 0, workload=w)
    compared = 0
    assert ci.method == intervals.EXACT_BINOMIAL
    true = np.asarray(w.true, float)
    for band, member in zip(ci.bands, w.membership):
        idx = np.flatnonzero(member & (true > 0))
        if len(idx) < 30:
            continue
        sim = _simulated(data, w, mechanism, params, idx, 60)
        assert band.half_width == pytest.approx(sim, rel=0.12), band.label
        compared += 1
    assert compared >= 3


def test_simulation_is_seeded_and_pools_by_count():
    data = table(seed=2)
    w = seed000(data, 200, seed=0)
    a = intervals.count_intervals(data, "anatomy", {"l": 2}, 3, workload=w, reps=3)
    b = intervals.count_intervals(data, "anatomy", {"l": 2}, 3, workload=w, reps=3)
    assert a.method == "simulation (3 releases)"
    assert json.dumps(a.to_json()) == json.dumps(b.to_json())
    near = [c for c in a.at if c.count == 10][0]
    true = np.asarray(w.true)
    assert near.queries == int(np.sum((true >= 5) & (true <= 20)))


def test_more_noise_wider_interval():
    data = table(seed=3)
    w = seed000(data, 200, seed=0)
    hi = intervals.count_intervals(data, "uniform", {"p": 0.9}, 0, workload=w).half_width(10)
    lo = intervals.count_intervals(data, "uniform", {"p": 0.1}, 0, workload=w).half_width(10)
    assert lo > 3 * hi


def test_sentence_in_people():
    ci = intervals.CountIntervals("m", {}, 0, intervals.EXACT_LAPLACE, 0,
                                  (intervals.CountInterval("count 10", 10.0, 6.2, 5),
                                   intervals.CountInterval("count 1,000", 1000.0, 20.01, 7)), ())
    assert ci.sentence() == "a true count of 10 is published as 10 +/- 7; 1,000 as 1,000 +/- 21 (95% of the time)"
    none = intervals.CountIntervals("m", {}, 0, intervals.EXACT_LAPLACE, 0,
                                    (intervals.CountInterval("count 10", 10.0, 0.0, 5),
                                     intervals.CountInterval("count 1,000", 1000.0, None, 0)), ())
    assert none.sentence() == "a true count of 10 is published as 10 +/- 0; no count near 1,000 in the workload " \
                              "(95% of the time)"


def test_the_binomial_kernel_is_scipys_pmf():
    """core.intervals calls scipy's binomial kernel without its argument checks (binom._pmf): it must stay the
    same numbers as the public binom.pmf, support edges and a large n included."""
    from scipy import stats

    for n, q in ((1, 0.5), (7, 0.07692), (2_000, 0.12), (45_222, 0.0037), (45_222, 0.999)):
        lo, got = intervals._pmf(stats, n, q)
        k = np.arange(lo, lo + len(got))
        assert np.array_equal(got, stats.binom.pmf(k, n, q)), (n, q)
        assert got.sum() == pytest.approx(1.0, abs=1e-12)


@pytest.mark.slow  # the report is built once (about 1 s of CPU)
def test_one_size_rule_for_count_intervals_wherever_they_are_shown(monkeypatch):
    """Above MAX_ROWS records no interval is simulated (it sanitizes the table 4 more times: several GB behind a
    Sanitize slider move on census 5M); the CLI, the pages and the report all say why, in the same words."""
    from core.errors import NotEligible
    from core.report import build
    from pages.ui import cached

    data = table(n=3000)
    monkeypatch.setattr(intervals, "MAX_ROWS", 2999)
    calls = []
    real = mechanisms.sanitize
    monkeypatch.setattr(mechanisms, "sanitize", lambda *a, **k: calls.append(a[1]) or real(*a, **k))
    why = "The table has 3,000 records; count intervals are measured on tables of at most 2,999."
    with pytest.raises(NotEligible, match="at most 2,999"):
        intervals.count_intervals(data, "anatomy", {"l": 2}, 0)
    assert intervals.block(data, "anatomy", {"l": 2}, 0) == {"measured": False, "why": why}
    assert calls == []  # nothing sanitized to say so
    assert cached.people(data, data.key, "anatomy", (("l", 2),), 0) == {"measured": False, "why": why}
    html = build(data, "anatomy", {"l": 2}, 0, [], queries=200, records=200)
    assert "could not be measured: " + why in html
    monkeypatch.setattr(intervals, "MAX_ROWS", 3000)  # the contrary case: at the bound it is measured
    got = intervals.block(data, "anatomy", {"l": 2}, 0)
    assert got["measured"] is True and got["method"].startswith("simulation")


def test_the_pages_kept_workload_gives_the_block_the_cli_builds():
    """``pages.ui.cached.people`` hands ``block`` the seed-000 workload it keeps (the release seed's, built by
    ``make_workload`` as the map's is): the same block as the one ``block`` builds for itself, which the CLI
    prints; another workload gives another block (the argument is used)."""
    from core.workloads import make_workload

    data = table(seed=4)
    kept = make_workload(data, "seed000", queries=intervals.DEFAULT_QUERIES, max_attrs=3, seed=3)
    for name, params in (("uniform", {"p": 0.4}), ("anatomy", {"l": 2})):
        rel = mechanisms.sanitize(data, name, params, 3)
        built = intervals.block(data, name, params, 3, release=rel)
        assert built["measured"] and intervals.block(data, name, params, 3, release=rel, workload=kept) == built
    other = make_workload(data, "seed000", queries=300, max_attrs=3, seed=4)  # (this table has under 2,000 queries)
    assert intervals.block(data, "anatomy", {"l": 2}, 3, workload=other) != intervals.block(data, "anatomy",
                                                                                            {"l": 2}, 3)
