"""The recommender against a brute-force search over the same settings."""

import math

import numpy as np
import pytest

from core import recommend, risk
from core.recommend import Goals
from core.table import load_dataset
from core.workload import seed000

NAMES = ["splu", "uniform", "anatomy", "dbr", "laplace"]


def brute(points, goals, data):
    """Independent re-implementation: every point, every target, best large error among the feasible."""
    best = {}
    for p in points:
        small = recommend.analytical_small_privacy(p, data)
        if small is None:
            small = None if p.small_sum_disclosure is None else 1 - p.small_sum_disclosure
        sel = [b for b in p.bands if b["unit"] == "selectivity" and b["lo"] >= goals.large_selectivity - 1e-12
               and b["mean_relative_error"] is not None]
        q = sum(b["queries"] for b in sel)
        large = sum(b["mean_relative_error"] * b["queries"] for b in sel) / q if q else None
        ok = (goals.small_privacy is None or (small is not None and small >= goals.small_privacy)) \
            and (goals.large_error is None or (large is not None and large <= goals.large_error)) \
            and (goals.max_lift is None or p.inference_lift <= goals.max_lift) \
            and (goals.max_risk is None or (p.risk_high is not None and p.risk_high <= goals.max_risk))
        if ok and (p.mechanism not in best or p.large_error < best[p.mechanism].large_error):
            best[p.mechanism] = p
    return best


@pytest.mark.parametrize("sample, sa", [("toy-sdr", "sa"), ("adult", "occupation")])
@pytest.mark.parametrize("goals", [Goals(), Goals(small_privacy=0.3, large_error=0.5, max_lift=3.0),
                                   Goals(small_privacy=None, large_error=0.05, max_lift=None),
                                   Goals(small_privacy=None, large_error=0.5, max_lift=None, max_risk=0.05)])
@pytest.mark.slow
def test_recommendations_match_brute_force_and_meet_their_targets_when_rerun(sample, sa, goals):
    data = load_dataset(sample, sa)
    w = seed000(data, 300 if data.n > 1000 else 40, seed=0)
    t = risk.targets(data, records=500, seed=0)
    points, skipped = risk.sweep_points(data, NAMES, w, t, seed=2)
    recs = recommend.recommend(data, NAMES, goals, w, t, seed=2, points=points)
    expected = brute(points, goals, data)
    for r in recs:
        if r.mechanism in expected:
            assert r.meets and r.point.large_error == expected[r.mechanism].large_error
            # rerun the recommended setting from scratch: the targets still hold
            again = risk.measure(data, r.mechanism, r.point.params, w, t, seed=2)
            assert all(c.ok for c in recommend.check(again, goals, data))
        else:
            assert not r.meets
            if r.point is not None:
                assert r.binding in {c.target for c in r.checks if not c.ok}


def test_laplace_small_count_privacy_is_exact():
    p = risk.Point("laplace", {"epsilon": math.log(3)}, 0, 0, 1, None, 1, None, None)
    # P(|Lap(1/eps)| > 0.3 * 10) = exp(-3 ln 3) = 1/27
    assert recommend.analytical_small_privacy(p, None) == pytest.approx(1 / 27)
    rng = np.random.default_rng(0)
    noise = rng.laplace(0, 1 / math.log(3), 400_000)
    assert np.mean(np.abs(noise) > 3) == pytest.approx(1 / 27, abs=0.002)


@pytest.mark.parametrize("field, value", [
    ("small_privacy", 2), ("small_privacy", -0.1), ("small_privacy", float("nan")), ("large_error", 0),
    ("large_error", 11), ("max_lift", 20), ("max_lift", 0.1), ("large_selectivity", 0.5), ("max_risk", 1.5),
    ("max_risk", -0.1),
])
def test_targets_out_of_range_are_refused(field, value):
    # QA: --small-privacy 2 ran and printed "at least 200% chance"
    from core.errors import ParameterError

    with pytest.raises(ParameterError, match="parameter of the recommender must be"):
        Goals(**{field: value})


def test_goals_accept_their_declared_ranges_and_no_target():
    g = Goals(small_privacy=None, large_error=None, max_lift=None)
    assert g.describe() == []
    assert Goals(small_privacy=1, large_error=10, max_lift=0.5, large_selectivity=0.05).small_privacy == 1.0
    for p in recommend.SETTINGS[2:]:
        assert p.default is None or p.contains(p.default)


def test_cli_refuses_a_target_out_of_range_in_one_line():
    from test_cli import run_inprocess

    proc = run_inprocess("recommend", "adult", "--sensitive", "occupation", "--small-privacy", "2")
    assert proc.returncode == 2 and proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "'small_privacy'" in lines[0] and "[0, 1]" in lines[0]


def test_a_per_answer_budget_is_said_wherever_laplace_is_put_forward():
    from core.mechanisms import MECHANISMS

    note = recommend.per_answer_budget("laplace", {"epsilon": 2.0})
    assert note.startswith("ε = 2 is per answer") and "k·ε" in note
    # only mechanisms that answer queries one by one spend their budget per answer
    assert [n for n in MECHANISMS if recommend.per_answer_budget(n)] == \
        [n for n, m in MECHANISMS.items() if m.publishes == "answers"] == ["laplace"]
    points = [risk.Point("laplace", {"epsilon": e}, 0, 0.2, 1.0, 0.05, 1.0, 0.01 / e, 0.5) for e in (0.1, 2.0)]
    rec = recommend.choose(points, Goals(small_privacy=None, large_error=None, max_lift=None), None, "laplace")
    assert rec.meets and rec.point.params == {"epsilon": 2.0}
    assert rec.caveat == note and rec.to_json()["caveat"] == note
    up = recommend.choose([risk.Point("uniform", {"p": 0.5}, 0, 0.2, 1.0, 0.05, 1.0, 0.01, 0.5)],
                          Goals(small_privacy=None, max_lift=None), None, "uniform")
    assert up.caveat is None


def _scaled(mech, p, err, risk_value, low, high):
    return risk.Point(mech, {"p": p}, 0, 0.2, 1.0, 0.05, 1.0, err, 0.5, added_risk=risk_value, risk_low=low,
                      risk_high=high)


def test_the_risk_target_reads_the_intervals_upper_end():
    """A setting whose added risk is below R but whose interval reaches above it is not put forward."""
    points = [_scaled("uniform", 0.9, 0.01, 0.08, 0.05, 0.12),   # most accurate, interval reaches 0.12
              _scaled("uniform", 0.5, 0.03, 0.04, 0.01, 0.07),   # within R = 0.1 at its upper end
              _scaled("uniform", 0.1, 0.20, 0.00, 0.00, 0.02)]
    goals = Goals(small_privacy=None, large_error=None, max_lift=None, max_risk=0.1)
    rec = recommend.choose(points, goals, None, "uniform")
    assert rec.meets and rec.point.params == {"p": 0.5}
    assert [c.target for c in rec.checks] == ["added risk"] and rec.checks[0].value == 0.07
    # contrary case: nothing within R = 0.01 at its upper end; the nearest miss names the risk target
    miss = recommend.choose(points, Goals(small_privacy=None, large_error=None, max_lift=None, max_risk=0.01),
                            None, "uniform")
    assert not miss.meets and miss.binding == "added risk" and miss.point.params == {"p": 0.1}
    assert "added risk at most 0.1 (upper end of its 95% interval)" in goals.describe()
