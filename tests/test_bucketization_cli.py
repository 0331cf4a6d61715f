"""Bucketization through the command line: sanitize to a folder (QIT, ST, manifest), reproduce, evaluate."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from test_cli import ok, run_inprocess


@pytest.mark.slow
def test_sanitize_writes_qit_st_and_manifest_and_reproduces(tmp_path):
    out = tmp_path / "release"
    info = json.loads(ok("sanitize", "adult", "--sensitive", "occupation", "--mechanism", "bucketization",
                         "--param", "theta=8", "--param", "sizes=two", "--param", "overrides=Tech-support=0.05",
                         "--seed", "3", "--out", out, "--json"))
    man = info["manifest"]
    assert sorted(p.name for p in out.iterdir()) == ["_manifest.json", "qit.csv", "st.csv"]
    assert man["published"]["bucket_setting"][-1][0] >= 45 and man["published"]["l_equivalent"] == 45
    assert man["privacy"]["every_bucket_meets_fprime"] is True
    qit, st = pd.read_csv(out / "qit.csv"), pd.read_csv(out / "st.csv")
    assert list(st.columns) == ["bid", "occupation", "count"] and len(qit) == 45_222
    size = qit.groupby("bid").size()
    share = st["count"] / st["bid"].map(size)
    fp = {r["value"]: r["fprime"] for r in man["published"]["fprime"]}
    assert (share <= st["occupation"].map(fp) + 1e-12).all()  # f'_i from the published tables alone
    assert fp["Tech-support"] == 0.05
    loss = int(((size - 1) ** 2).sum())
    assert loss == man["published"]["loss"]
    args = man["reproduce"].split()[3:]
    out2 = tmp_path / "again"
    args[args.index("--out") + 1] = str(out2)
    ok(*args, inprocess=False)
    pd.testing.assert_frame_equal(st, pd.read_csv(out2 / "st.csv"))


@pytest.mark.slow
def test_a_file_name_for_two_tables_is_refused(tmp_path):
    res = run_inprocess("sanitize", "adult", "--sensitive", "occupation", "--mechanism", "bucketization",
                        "--out", tmp_path / "r.csv")
    assert res.returncode != 0 and "folder" in res.stderr and res.stderr.count("\n") <= 1


@pytest.mark.slow  # near the 1 s CPU mark of tests/conftest.py (the risk and people intervals it now measures)
def test_evaluate_with_the_seed003_workload():
    res = json.loads(ok("evaluate", "adult", "--sensitive", "occupation", "--mechanism", "bucketization",
                        "--workload", "seed003", "--queries", "200", "--seed", "2", "--json"))
    bands = {b["name"]: b for b in res["bands"]}
    assert bands["all queries (answer > 0)"]["queries"] > 150
    errs = [bands[k]["mean_relative_error"] for k in ("selectivity < 0.1%", ">= 1%") if bands[k]["queries"]]
    assert errs == sorted(errs, reverse=True) and np.all(np.array(errs) > 0)


def test_bad_parameters_are_one_line():
    for param, word in (("sizes=three", "sizes"), ("overrides=Nobody=0.1", "Nobody"), ("theta=100", "theta"),
                        ("sigma=30", "sigma")):
        res = run_inprocess("sanitize", "adult", "--sensitive", "occupation", "--mechanism", "bucketization",
                            "--param", param, "--out", "x")
        assert res.returncode != 0 and word in res.stderr and res.stderr.count("\n") <= 1, (param, res.stderr)
