"""Ambiguity and PriView through the command line: a folder of AT/ST tables with a manifest, evaluate, refusals."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from test_cli import ok, run_inprocess


@pytest.mark.slow  # near the 1 s CPU mark of tests/conftest.py (the risk and people intervals it now measures)
def test_ambiguity_sanitize_writes_one_at_per_qi_and_st(tmp_path):
    out = tmp_path / "amb"
    info = json.loads(ok("sanitize", "adult", "--sensitive", "occupation", "--mechanism", "ambiguity",
                         "--param", "beta=1/7", "--seed", "3", "--out", out, "--json"))
    names = sorted(p.name for p in out.iterdir())
    assert names == sorted([f"at_{c}.csv" for c in ("age", "workclass", "education", "marital_status", "race",
                                                    "sex", "native_country")] + ["st.csv", "_manifest.json"])
    man = json.loads((out / "_manifest.json").read_text())
    priv = man["privacy"]
    assert {"max_presence", "max_association", "groups", "unplaced"} <= set(priv)
    assert priv["unplaced"] == 0 and priv["max_presence"] <= 0.1 and priv["max_association"] <= 1 / 7 + 1e-12
    st = pd.read_csv(out / "st.csv")
    assert list(st.columns) == ["gid", "occupation", "count"] and st["count"].sum() == 45222
    age = pd.read_csv(out / "at_age.csv")
    assert list(age.columns) == ["age", "gid"] and not age.duplicated().any()   # duplicate-free (Def. 3.3)
    assert age["gid"].nunique() == priv["groups"] == info["manifest"]["privacy"]["groups"]


@pytest.mark.slow
def test_priview_sanitize_writes_at_and_st_and_reports_both_theorem6_and_exact(tmp_path):
    out = tmp_path / "pv"
    ok("sanitize", "adult", "--sensitive", "occupation", "--mechanism", "priview", "--param", "beta=1/7",
       "--param", "alpha=1/7", "--param", "split=sex", "--seed", "3", "--out", out)
    assert sorted(p.name for p in out.iterdir()) == ["_manifest.json", "at.csv", "st.csv"]
    man = json.loads((out / "_manifest.json").read_text())
    assert man["published"]["split"] == "sex"
    assert list(pd.read_csv(out / "st.csv").columns) == ["gid", "sex", "occupation", "count"]
    assert len(pd.read_csv(out / "at.csv")) == 45222
    p = man["privacy"]
    assert p["max_presence_paper"] <= 1 / 7 + 1e-12 and p["max_association_paper"] <= 1 / 7 + 1e-12
    assert p["max_association"] >= p["max_association_paper"]


@pytest.mark.slow
def test_evaluate_both():
    for mech in ("ambiguity", "priview"):
        res = json.loads(ok("evaluate", "adult", "--sensitive", "occupation", "--mechanism", mech,
                            "--param", "beta=1/7", "--param", "alpha=1/7", "--queries", "100", "--seed", "2",
                            "--json"))
        assert all(b["mean_relative_error"] is not None for b in res["bands"] if b["queries"])


def test_refusal_is_one_line(tmp_path):
    proc = run_inprocess("sanitize", "toy-ambiguity", "--sensitive", "disease", "--mechanism",
                                   "ambiguity", "--param", "beta=0.1", "--out", str(tmp_path / "x"))
    code, err = proc.returncode, proc.stderr
    assert code != 0 and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert "β ≥ 1/6 works" in err
