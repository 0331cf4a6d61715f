"""Our record-reading attacker against anonymeter (issue 22 item 2: anonymeter is the reference).

anonymeter 1.1.0 pins numpy < 1.27 and cannot be installed beside this
project's numpy 2, so it is the *reference in the tests*, not the engine:
``bench/risk.py --anonymeter`` runs anonymeter's ``InferenceEvaluator`` in its
own environment on the exact published rows and targets of
:func:`core.risk.setup` and stores its risk and interval in
``tests/test_risk_anonymeter.json``.  Here our figure for each of those
releases (UP, RP, SDR, SPLU-Gen, Anatomy, Mondrian and more, on Adult) is
measured again and must agree with anonymeter's within their intervals; and
our optimised nearest-record search is checked against anonymeter's
algorithm re-run by brute force (every row's Gower distance).
"""

import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from core import risk
from core.table import bind, make_table

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = json.loads((ROOT / "tests" / "test_risk_anonymeter.json").read_text())


def test_the_reference_covers_the_six_mechanisms_of_the_issue():
    mechs = {k.split(" ")[0] for k in REFERENCE["releases"]}
    assert {"uniform", "reconstruction", "sdr", "splu", "anatomy", "mondrian"} <= mechs
    assert REFERENCE["anonymeter"].startswith("1.")


@pytest.fixture(scope="module")
def adult():
    from core.table import load_dataset

    return load_dataset("adult")


def _bench():
    """bench/risk.py as a module (its reference list and the script anonymeter runs)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_risk", ROOT / "bench" / "risk.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    return bench


def _params(key):
    bench = _bench()
    return {bench.key_of(m, p): (m, p) for m, p in bench.REFERENCE}[key]


@pytest.mark.slow
@pytest.mark.parametrize("key", sorted(REFERENCE["releases"]))
def test_our_figure_agrees_with_anonymeters_within_their_intervals(adult, key):
    mech, params = _params(key)
    theirs = REFERENCE["releases"][key]["anonymeter"]
    ours = risk.assess(adult, mech, params, REFERENCE["seed"], attacks=REFERENCE["attacks"],
                       split_seed=REFERENCE["split_seed"]).attacker("records")
    lo, hi = theirs["interval"]
    assert max(ours.low, lo) <= min(ours.high, hi), (key, ours, theirs)  # the intervals overlap
    # and the success rates themselves are close (each is a share of the same 1,000 targets)
    assert abs(ours.train.share - theirs["train_success"]) < 0.05
    assert abs(ours.control.share - theirs["control_success"]) < 0.05


def gower_brute_force(rows: pd.DataFrame, targets: pd.DataFrame, cols, numeric) -> list[np.ndarray]:
    """anonymeter's KNN step re-run naively: every row's Gower distance; the rows at the smallest."""
    out = []
    ranges = {c: max(rows[c].max(), targets[c].max()) - min(rows[c].min(), targets[c].min()) or 1.0
              for c in numeric}
    for _, t in targets.iterrows():
        dist = np.zeros(len(rows))
        for c in cols:
            if c in numeric:
                dist += np.abs(rows[c].to_numpy(float) - float(t[c])) / ranges[c]
            else:
                dist += rows[c].astype(str).to_numpy() != str(t[c])
        out.append(np.flatnonzero(dist == dist.min()))
    return out


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_nearest_record_success_matches_brute_force_gower(seed):
    rng = np.random.default_rng(seed)
    n = 300
    frame = pd.DataFrame({"age": rng.integers(18, 30, n), "job": rng.choice(list("abcde"), n),
                          "sex": rng.choice(["f", "m"], n), "s": rng.choice(["x", "y", "z"], n)})
    data = bind(make_table(frame, "t"), "s", ["age", "job", "sex"])
    # published rows: some of the table's rows with another SA (as a perturbation would), and a generalized
    # 'job' column on some rows (as Mondrian publishes): labels that match only themselves
    keep = np.sort(rng.choice(n, 200, replace=False))
    job_labels = np.append(data.qi_labels[1], "{a, b}")
    job_codes = data.qi_codes[1][keep].astype(np.int64)
    job_codes[rng.random(len(keep)) < 0.2] = len(job_labels) - 1
    view = risk.RowView(labels=(data.qi_labels[0], job_labels, data.qi_labels[2]),
                        codes=(data.qi_codes[0][keep], job_codes, data.qi_codes[2][keep]),
                        sa=rng.integers(0, data.m, len(keep)))
    pick = rng.choice(n, 80, replace=False)
    qi = np.stack([c[pick] for c in data.qi_codes], axis=1)
    truth = data.sa_codes[pick]
    ours = view.success(data, qi, truth)
    rows = view.frame(data)
    rows["age"] = rows["age"].astype(float)
    targets = data.frame().iloc[pick].reset_index(drop=True)
    targets["age"] = targets["age"].astype(float)
    expect = [np.mean(view.sa[tied] == t) for tied, t in
              zip(gower_brute_force(rows, targets, ["age", "job", "sex"], {"age"}), truth)]
    np.testing.assert_allclose(ours, expect, rtol=0, atol=1e-12)


ANON = ROOT / ".venv-anon" / "bin" / "python"


@pytest.mark.slow
@pytest.mark.skipif(not ANON.exists() or os.environ.get("WB_ANONYMETER") != "1",
                    reason="anonymeter's own environment (.venv-anon, see bench/risk.py) and WB_ANONYMETER=1")
def test_anonymeter_itself_on_a_small_release(tmp_path):
    """anonymeter run live on a small table's measurement release (when its environment is present)."""
    bench = _bench()
    from core.table import load_dataset

    data = load_dataset("census:6000")
    s = risk.setup(data, "uniform", {"p": 0.6}, 0, attacks=300)
    ours = risk.assess(data, "uniform", {"p": 0.6}, 0, attacks=300).attacker("records")
    rows, train, control = bench._frames(s, data)
    paths = {}
    for name, f in (("rows", rows), ("train", train), ("control", control)):
        paths[name] = str(tmp_path / f"{name}.parquet")
        f.to_parquet(paths[name])
    job = [{"key": "k", "qi": list(data.qi), "sa": data.sa, **paths}]
    done = subprocess.run([str(ANON), "-c", bench._ANON_SCRIPT, json.dumps(job)], capture_output=True, text=True,
                          check=True)
    theirs = json.loads(done.stdout.strip().splitlines()[-1])["k"]
    assert max(ours.low, theirs["interval"][0]) <= min(ours.high, theirs["interval"][1])
