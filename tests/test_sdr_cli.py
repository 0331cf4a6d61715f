"""SDR through the command line: sanitize, reproduce, evaluate, the sdr-error bound, refusals."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from test_cli import ok, run_inprocess


@pytest.mark.slow
def test_sanitize_toy_sdr_publishes_example1_subtables_and_reproduces(tmp_path):
    out = tmp_path / "r.csv"
    info = json.loads(ok("sanitize", "toy-sdr", "--sensitive", "sa", "--mechanism", "sdr", "--param", "rho1=1/3",
                         "--param", "rho2=2/3", "--seed", "5", "--out", out, "--json"))
    man = info["manifest"]
    subs = man["published"]["subtables"]
    assert [(s["name"], s["rows"], s["values"]) for s in subs] == [
        ("T1", 36, ["x1", "x2", "x3", "x4", "x5", "x6"]),
        ("T2", 6, ["x4", "x6", "x7", "x8", "x9", "x10"]),
    ]
    np.testing.assert_allclose([s["gamma"] for s in subs], [4, 10])  # seed 002 Example 1
    np.testing.assert_allclose([s["p"] for s in subs], [1 / 3, 3 / 5])
    np.testing.assert_allclose(man["published"]["eps_part"], 2.0196487, rtol=1e-6)  # Example 4
    first = pd.read_csv(out)
    assert list(first.columns) == ["age_group", "sex", "subtable", "sa"]
    assert first.groupby("subtable").size().to_dict() == {"T1": 36, "T2": 6}
    cmd = man["reproduce"].split()
    out2 = tmp_path / "again.csv"
    args = cmd[3:]
    args[args.index("--out") + 1] = str(out2)
    ok(*args, inprocess=False)
    pd.testing.assert_frame_equal(first, pd.read_csv(out2))


@pytest.mark.slow
def test_evaluate_with_the_seed002_workload():
    res = json.loads(ok("evaluate", "adult", "--sensitive", "occupation", "--mechanism", "sdr",
                        "--workload", "seed002", "--queries", "60", "--seed", "2", "--json"))
    assert [b["name"] for b in res["bands"]] == ["selectivity >= 0.1%", "selectivity >= 0.5%", "selectivity >= 1%"]
    assert all(b["mean_relative_error"] is not None and b["queries"] > 0 for b in res["bands"])
    errs = [b["mean_relative_error"] for b in res["bands"]]
    assert errs[0] > errs[2]  # larger answers, smaller relative error


def test_bound_sdr_error_json():
    res = json.loads(ok("bound", "sdr-error", "--json"))
    assert {"pp", "up", "m6", "m50"} <= set(res["series"]) and "m10" not in res["series"]  # m = 10 is "up"
    assert len(res["x"]) == len(res["series"]["pp"])
    assert res["x"][0] == 42
    # at |T| = 42 the default counts are Example 1's table: eps(Part) 2.02 (Example 4), UP's eps(T) 2.57
    assert res["series"]["pp"][0] == pytest.approx(2.0196487, rel=1e-6)
    assert res["notes"]["eps_up_at_counts"] == pytest.approx(res["series"]["up"][0])
    assert res["notes"]["subtables_at_counts"] == 2
    res2 = json.loads(ok("bound", "sdr-error", "--param", "rho1=1/13", "--param", "rho2=1/6",
                         "--param", "counts=" + ",".join(["30"] * 10 + ["10"] * 40), "--json"))
    assert res2["notes"]["eps_part_at_counts"] < res2["notes"]["eps_up_at_counts"]


BAD = [
    (["sanitize", "toy-sdr", "--sensitive", "sa", "--mechanism", "sdr", "--param", "rho1=0.7", "--param",
      "rho2=0.6", "--out", "o.csv"], "sdr needs rho1 < rho2"),
    (["sanitize", "toy-sdr", "--sensitive", "sa", "--mechanism", "sdr", "--param", "rho1=0.02", "--out", "o.csv"],
     "protects no value"),
    (["sanitize", "toy-sdr", "--sensitive", "sa", "--mechanism", "sdr", "--param", "delta=1", "--out", "o.csv"],
     "The 'delta' parameter of sdr must be"),
    (["bound", "sdr-error", "--param", "counts=a,b"], "The 'counts' parameter must list whole numbers"),
    (["bound", "sdr-error", "--param", "counts=5"], "at least two values"),
    (["bound", "sdr-error", "--param", "rho1=0.5", "--param", "rho2=0.4"], "must be smaller than 'rho2'"),
    (["bound", "sdr-error", "--param", "ms=0"], "The 'ms' parameter"),
    (["bound", "sdr-error", "--param", "n_min=1000", "--param", "n_max=100"], "n_min"),
]


@pytest.mark.parametrize("args, fragment", BAD, ids=[b[1][:30] for b in BAD])
def test_bad_input_one_line(args, fragment, tmp_path):
    proc = run_inprocess(*args, cwd=tmp_path)
    assert proc.returncode == 2
    err = proc.stderr.strip()
    assert fragment in err, err
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert list(tmp_path.iterdir()) == []
