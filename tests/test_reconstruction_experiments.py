"""Seed 001: the tail and threshold curves, the Figure 3 experiments, output perturbation (Tables 4-5), CLI."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from core.bounds import BOUNDS, compute
from core.bounds.reconstruction import exact_error_tails
from core.errors import ParameterError
from core.experiments import EXPERIMENTS
from core.experiments.seed001 import (
    TABLE45_EPSILONS, TABLE45_LAMBDAS, output_perturbation, ratio_error_counts, subsample, violation_table)
from core.mechanisms.reconstruction import micro_groups, threshold
from core.table import load_dataset

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def adult():
    return load_dataset("adult", "occupation")


# ------------------------------------------------------------------ curves
def test_tails_curve_series_and_read_outs():
    c = compute("reconstruction-tails", {"n": 100, "f": 0.6, "m": 14, "p": 0.46, "lambda": 0.3, "delta": 0.3})
    assert set(c.series) == {"exact_upper", "exact_lower", "chernoff_upper", "chernoff_lower",
                             "simplified_upper", "simplified_lower"}
    assert c.hlines == {"δ": 0.3} and c.vlines == {"λ": 0.3}
    # every bound lies above its exact tail, the full bounds below the simplified ones
    for side in ("upper", "lower"):
        assert np.all(c.series[f"chernoff_{side}"] >= c.series[f"exact_{side}"] - 1e-12)
        assert np.all(c.series[f"simplified_{side}"] >= c.series[f"chernoff_{side}"] - 1e-12)
    n = c.notes
    # 100 records < s_g = 110.5 (simplified) and 100.3 (full): private by the test ...
    np.testing.assert_allclose(n["threshold_simplified"], threshold(0.6, 0.46, 14, 0.3, 0.3), rtol=1e-12)
    assert n["private_simplified"] and n["private_full"]
    # ... while the real chance of a 30% error is about 2.4% each way, far below delta
    np.testing.assert_allclose([n["exact_upper_at_lambda"], n["exact_lower_at_lambda"]], [0.02398, 0.02402],
                               atol=5e-5)
    assert not n["exact_tails_at_least_delta"]


def test_exact_error_tails_brute_force():
    # enumerate the two binomials directly
    from scipy import stats

    n, o, p, m, lam = 23, 9, 0.3, 5, 0.37
    q = (1 - p) / m
    a = stats.binom.pmf(np.arange(o + 1), o, p + q)
    b = stats.binom.pmf(np.arange(n - o + 1), n - o, q)
    joint = np.outer(a, b)
    total = np.add.outer(np.arange(o + 1), np.arange(n - o + 1))
    est = (total / n - q) / p
    f = o / n
    up, low = exact_error_tails(n, o, p, m, lam)
    np.testing.assert_allclose(up, joint[est - f > lam * f].sum(), rtol=1e-10)
    np.testing.assert_allclose(low, joint[est - f < -lam * f].sum(), rtol=1e-10)
    # at lambda = 0.4 the upper boundary (1 + e) mu = 5.92 + 0.4 * 2.7 is exactly 7 records: the strict
    # inequality of Definition 4.5 leaves O = 7 out, whatever the last bit of the float product says
    up4, _ = exact_error_tails(n, o, p, m, 0.4)
    np.testing.assert_allclose(up4, joint[total >= 8].sum(), rtol=1e-10)


def test_threshold_curve():
    c = compute("reconstruction-threshold", {"m": 14, "p": 0.46, "lambda": 0.5, "delta": 0.5})
    assert set(c.series) == {"simplified", "full"}
    assert c.x[0] == pytest.approx(1 / 14) and c.x[-1] == 1.0
    # the threshold falls as the top value dominates, and the full bounds give the smaller threshold
    assert np.all(np.diff(c.series["simplified"]) < 0)
    assert np.all(c.series["full"] < c.series["simplified"])
    # 2 ln 2 (0.46 + 0.54/14) / (0.5 * 0.46)^2
    np.testing.assert_allclose(c.notes["threshold_simplified_f1"], 13.0655, atol=5e-4)
    assert c.to_json()["series"]["full"][-1] == pytest.approx(c.notes["threshold_full_f1"])


def test_curves_registered_with_valid_defaults():
    for name in ("reconstruction-tails", "reconstruction-threshold"):
        curve = BOUNDS[name].curve()
        assert all(np.all(np.isfinite(v)) for v in curve.series.values())
        assert curve.caption and curve.x_label and curve.y_label
    with pytest.raises(ParameterError, match="'lambda' parameter"):
        compute("reconstruction-threshold", {"lambda": 1.0})


# ------------------------------------------------------------------ Figure 3
def test_violation_table_trends(adult):
    # seed 001 Figure 3: violations grow with p, lambda, delta and N (Adult, occupation, seven QIs)
    t = violation_table(adult, 0.46, 0.5, 0.5)
    for varied in ("p", "lambda", "delta", "N"):
        for fam in ("simplified", "full"):
            s = t[(t.varied == varied) & (t.bound == fam)].share_groups_violating.to_numpy()
            assert np.all(np.diff(s) >= 0), (varied, fam, s)
            assert s[-1] > s[0]
    at = t[(t.varied == "p") & (t.value == 0.46) & (t.bound == "simplified")].iloc[0]
    assert at.violating_groups == 123 and at.micro_groups == 14_668
    # the full bounds are tighter, so they flag at least as many groups
    simple = t[t.bound == "simplified"].violating_groups.to_numpy()
    full = t[t.bound == "full"].violating_groups.to_numpy()
    assert np.all(full >= simple)


def test_subsample_keeps_labels_and_is_deterministic(adult):
    a, b = subsample(adult, 1000, 3), subsample(adult, 1000, 3)
    assert a.n == 1000 and a.m == adult.m and a.domains == adult.domains
    assert np.array_equal(a.sa_codes, b.sa_codes) and a.key != adult.key
    assert micro_groups(a).size.sum() == 1000


def test_violations_experiment_runs(adult):
    res = EXPERIMENTS["seed001-violations"](adult, {})
    assert len(res.figures) == 4 and len(res.tables) == 1
    assert EXPERIMENTS["seed001-violations"].page == "attacks"


@pytest.mark.slow
def test_error_experiment_rp_beside_up(adult):
    res = EXPERIMENTS["seed001-error"](adult, {"queries": 600, "releases": 2})
    t = res.data["table"]
    assert list(t["p"]) == [0.14, 0.22, 0.30, 0.38, 0.46]
    assert np.all(t["violating groups under RP (%)"] == 0)
    assert t["violating groups under UP (%)"].iloc[-1] > 0
    # RP costs some aggregate accuracy, but not much (the paper's finding; Adult: at most ~20%)
    ratio = t["RP / UP (large)"].to_numpy()
    assert np.all(ratio > 0.95) and np.all(ratio < 1.5)
    # at p = 0.14 no group is open, so RP is UP with the same seeds
    np.testing.assert_allclose(t["UP error, large counts"].iloc[0], t["RP error, large counts"].iloc[0])


def test_error_experiment_reports_ineligible_points(adult):
    res = EXPERIMENTS["seed001-error"](adult, {"vary": "delta", "lambda": 0.9, "queries": 200, "releases": 1})
    assert any("δ = 0.9" in n for n in res.notes)
    t = res.data["table"]
    assert t["RP error, large counts"].isna().iloc[-1] and t["UP error, large counts"].notna().all()


# ------------------------------------------------------------------ output perturbation (§6.3)
# seed 001 Tables 4 (EDU-500K) and 5 (OCC-500K): |g|, f in g, then for epsilon = 0.1 the counts (of 100) of
# relative errors beyond +0.2, below -0.2, beyond +0.3, below -0.3, then the same for epsilon = 0.05 (our reading)
TABLE4 = [(89, 0.87, [18, 13, 14, 7, 34, 29, 24, 22]), (74, 0.77, [25, 23, 14, 7, 32, 32, 28, 23]),
          (138, 0.76, [11, 9, 8, 3, 18, 27, 20, 15]), (104, 0.76, [21, 12, 9, 6, 35, 28, 22, 22]),
          (104, 0.75, [23, 14, 11, 6, 35, 25, 21, 28]), (77, 0.74, [26, 11, 18, 11, 26, 39, 27, 26]),
          (102, 0.72, [18, 13, 8, 8, 32, 31, 29, 21])]
TABLE5 = [(142, 0.48, [13, 18, 11, 4, 29, 29, 27, 20]), (213, 0.47, [8, 8, 3, 0, 23, 19, 15, 11]),
          (111, 0.47, [26, 18, 16, 13, 40, 30, 27, 29]), (113, 0.45, [28, 20, 17, 8, 38, 30, 23, 25]),
          (153, 0.45, [18, 15, 6, 6, 20, 40, 26, 21]), (237, 0.45, [8, 9, 3, 3, 17, 21, 13, 12]),
          (143, 0.44, [12, 17, 12, 6, 38, 34, 27, 20])]


def _z_scores(epsilons, lambdas, trials=200_000):
    rng = np.random.default_rng(0)
    z = []
    for size, f, printed in TABLE4 + TABLE5:
        y = round(f * size)
        expected = []
        for eps in epsilons:
            over, under = ratio_error_counts(size, y, eps, lambdas, trials, rng)
            for o, u in zip(over, under):
                expected += [100 * o / trials, 100 * u / trials]
        expected = np.array(expected)
        sd = np.sqrt(100 * (expected / 100) * (1 - expected / 100))
        z.append((np.array(printed) - expected) / sd)
    return np.array(z)


def test_tables_4_5_reading_of_the_lost_parameters():
    # lambda in {0.2, 0.3} and epsilon in {0.1, 0.05} reproduce all 112 printed counts within binomial noise
    z = _z_scores(TABLE45_EPSILONS, TABLE45_LAMBDAS)
    assert np.sqrt(np.mean(z ** 2)) < 1.2 and np.abs(z).max() < 3.5
    # the text: EDU Group 7 at lambda = 0.3 has 8 and 8 cases, OCC Group 2 at lambda = 0.2 has 8 and 8
    assert TABLE4[6][2][2:4] == [8, 8] and TABLE5[1][2][0:2] == [8, 8]
    # other readings do not fit
    assert np.sqrt(np.mean(_z_scores((0.1, 0.05), (0.1, 0.3), 50_000) ** 2)) > 1.5
    assert np.sqrt(np.mean(_z_scores((0.2, 0.1), (0.1, 0.2), 50_000) ** 2)) > 1.4


def test_output_perturbation_on_adult(adult):
    res = output_perturbation(adult, min_size=100, seed=1)
    t = res.table
    assert len(t) == 7 and res.eligible == 32
    assert np.all(t["|g|"] >= 100)
    assert np.all(np.diff(t["f in g"]) <= 0)  # ordered by the top value's frequency
    g = micro_groups(adult)
    np.testing.assert_allclose(t["f in g"], g.top_frequency[res.groups])
    cols = [c for c in t.columns if c.startswith("ε=")]
    assert len(cols) == 8 and t[cols].to_numpy().max() <= 100
    assert set(res.long.columns) >= {"group", "epsilon", "lambda", "share_above", "share_below"}
    # same seed, same table
    pd.testing.assert_frame_equal(t, output_perturbation(adult, min_size=100, seed=1).table)
    with pytest.raises(ParameterError, match="No micro group has at least 1,000 records"):
        output_perturbation(adult, min_size=1000)


# ------------------------------------------------------------------ CLI end to end
def _run(*args, subprocess_=False):
    """The CLI as a user runs it: in a subprocess, or (faster) its ``main`` in this process."""
    if subprocess_:
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        return subprocess.run([sys.executable, "-m", "core", *map(str, args)], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=300)
    import contextlib
    import io

    from core.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in args])
    return subprocess.CompletedProcess(args, code, out.getvalue(), err.getvalue())


@pytest.mark.slow
def test_cli_end_to_end(tmp_path):
    out, man = tmp_path / "rp.csv", tmp_path / "rp.json"
    proc = _run("sanitize", "adult", "--sensitive", "occupation", "--mechanism", "reconstruction",
                "--param", "lambda=0.5", "--param", "delta=0.5", "--seed", "2", "--out", out, "--manifest", man)
    assert proc.returncode == 0, proc.stderr
    manifest = json.loads(man.read_text())
    assert manifest["privacy"]["violating_groups_before"] == 123
    assert manifest["privacy"]["violating_groups_after"] == 0
    assert len(pd.read_csv(out)) == 45_222
    proc = _run("bound", "reconstruction-threshold", "--param", "lambda=0.5", "--param", "delta=0.5", "--json",
                subprocess_=True)
    assert proc.returncode == 0, proc.stderr
    curve = json.loads(proc.stdout)
    assert set(curve["series"]) == {"simplified", "full"} and len(curve["x"]) == len(curve["series"]["full"])
    proc = _run("evaluate", "adult", "--sensitive", "occupation", "--mechanism", "reconstruction",
                "--param", "lambda=0.5", "--param", "delta=0.5", "--queries", "300", "--seed", "1", "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["bands"][0]["mean_relative_error"] > 0
    # not eligible: one clear line, exit 2
    proc = _run("sanitize", "adult", "--sensitive", "occupation", "--mechanism", "reconstruction",
                "--param", "lambda=0.9", "--param", "delta=0.9", "--out", tmp_path / "x.csv")
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "lower p to at most" in proc.stderr and "Traceback" not in proc.stderr
    proc = _run("bound", "reconstruction-tails", "--param", "n=0")
    assert proc.returncode == 2 and "'n' parameter" in proc.stderr


def test_output_perturbation_ratio_formula():
    # no noise to speak of: huge epsilon gives errors of (almost) zero
    over, under = ratio_error_counts(100, 40, 1e6, [0.01], 1000, np.random.default_rng(0))
    assert over[0] == 0 and under[0] == 0
    # Laplace scale 1/epsilon: the ratio's relative error spread matches the delta-method variance (seed 003)
    rng = np.random.default_rng(1)
    x, y, eps = 200, 80, 0.1
    b = 1 / eps
    xs, ys = x + rng.laplace(0, b, 200_000), y + rng.laplace(0, b, 200_000)
    var = (2 * b * b / x**2) * (1 + (y / x) ** 2)
    np.testing.assert_allclose(np.var(ys / xs), var, rtol=0.05)
    assert math.isclose(np.mean(ys / xs), (y / x) * (1 + 2 * b * b / x**2), rel_tol=0.01)


@pytest.mark.parametrize("n", [0, 1, 7, 50_000])
def test_distinct_points_are_numpys_unique_pairs(n):
    """Same points, order and counts as ``np.unique(..., axis=1, return_counts=True)``: shares that are fractions
    of small sizes repeat often, equal shares of different sizes and equal sizes of different shares included."""
    from core.experiments.seed001 import distinct_points

    rng = np.random.default_rng(n)
    size = rng.integers(1, 40, n).astype(float)
    top = np.ceil(rng.random(n) * size) / size
    points, counts = distinct_points(top, size)
    want_points, want_counts = np.unique(np.stack([top, size]), axis=1, return_counts=True)
    assert points.shape == want_points.shape and np.array_equal(points, want_points)
    assert counts.dtype == want_counts.dtype and np.array_equal(counts, want_counts)


def test_group_scatter_draws_each_point_once_with_its_number_of_groups():
    """Groups at the same (share, size) are one point whose hover counts them; every group is counted once; a
    trace thinned to ``max_points`` says so in its legend entry, and one that is not does not."""
    from core.experiments.seed001 import group_scatter

    rng = np.random.default_rng(11)
    size = rng.integers(1, 40, 50_000)
    top = np.ceil(rng.random(50_000) * size) / size
    rs = rng.random(50_000) < 0.05
    fig = group_scatter(size, top, rs, np.linspace(0, 1, 5), np.full(5, 10.0), "chernoff", max_points=100_000)
    passes, resampled = fig.data[0], fig.data[1]
    for trace, on in ((passes, ~rs), (resampled, rs)):
        assert int(np.sum(trace.customdata)) == int(on.sum())
        want = set(zip(top[on].tolist(), size[on].astype(float).tolist()))
        assert set(zip(trace.x, trace.y)) == want and len(trace.x) == len(want)
    assert len(passes.x) < (~rs).sum() / 50  # 47,500 groups, at most 39 * 40 / 2 points
    thin = group_scatter(size, top, rs, np.linspace(0, 1, 5), np.full(5, 10.0), "chernoff", max_points=50)
    assert len(thin.data[0].x) == len(thin.data[1].x) == 50
    assert thin.data[0].name == f"passes the test (plain UP): 50 of {len(passes.x):,} points drawn"
    assert thin.data[1].name == f"resampled by Algorithm 1: 50 of {len(resampled.x):,} points drawn"
    assert passes.name == "passes the test (plain UP)" and resampled.name == "resampled by Algorithm 1"
    # evenly along the (share, size) order: the first and last distinct points are kept
    assert (thin.data[0].x[0], thin.data[0].y[0]) == (passes.x[0], passes.y[0])
    assert (thin.data[0].x[-1], thin.data[0].y[-1]) == (passes.x[-1], passes.y[-1])
