"""Risk scale benchmark and anonymeter reference (issue 22).

Usage::

    .venv/bin/python bench/risk.py                     # the speed table (Adult, census 1M, the Adult map)
    .venv/bin/python bench/risk.py --skip-1m           # without the 1M-row table
    .venv/bin/python bench/risk.py --skip-wide         # without hospital:3000's 749 sensitive values
    .venv/bin/python bench/risk.py --anonymeter        # reference figures from anonymeter itself
    .venv/bin/python bench/risk.py --table             # the releases table: verdict, risk, anonymeter, counts
    .venv/bin/python bench/risk.py --singling-out      # singling-out reference figures from anonymeter itself

**Speed** (targets from the issue): :func:`core.risk.assess` of one release
(attribute inference and singling out) on Adult within 1 s, beside the same
without singling out and on a 1M-row table (``census:1000000``) within 5 s;
the risk-utility map of every mechanism's sweep on Adult within 3 s (the
brief's target for the map's measurement; the issue's 6 s is the page in
chromium), shown beside the same map without the risk scale.  Each figure is
the median of ``--repeat`` runs after one warm-up run (the first call of a
process also imports modules and builds the table's QI index once), as wall
time and as this process's CPU time (the machine is shared).

**Singling-out reference** (``--singling-out``): anonymeter's
``SinglingOutEvaluator`` (multivariate, 3 QIs, :data:`SINGLING_ATTACKS`
predicates, seed 0) on the per-person published QIs of the measurement
release of each of :data:`SINGLING_REFERENCE`, the training part as ``ori``
and the control part as ``control``, beside our figure; written to
``tests/test_risk_singling_anonymeter.json``.  Two changes to anonymeter's
run, both said in the file: its frames are used as given (anonymeter drops
duplicate rows; a predicate singles out one *person* here, see
core/singling_out.py), and its size correction counts the queries that
single out in each subsample (1.1.0 counts every query there, so its fit is
flat and the correction comes out as about control size / training size
whatever the data; anonymeter 1.0 counted the successes).

**Reference** (``--anonymeter``): anonymeter 1.1.0 pins numpy < 1.27, so it
cannot be installed beside this project's numpy 2; it lives in its own
virtual environment (``--anon-python``, default ``.venv-anon/bin/python``,
made with ``python3 -m venv .venv-anon && .venv-anon/bin/pip install
anonymeter==1.1.0``; not committed).  For each release of
:data:`REFERENCE`, this script builds the measurement release exactly as
:func:`core.risk.assess` does (:func:`core.risk.setup`: same split, same
sampled targets), writes its published rows (:meth:`core.risk.RowView.frame`)
and the training and control targets to Parquet, runs anonymeter's
``InferenceEvaluator`` on them in that environment (n_jobs=1, numpy's
global seed 0), and writes ``tests/test_risk_anonymeter.json``: anonymeter's
risk and interval beside ours.  ``tests/test_risk_anonymeter.py`` checks
that the two agree within their intervals.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

#: the releases of the reference table: (mechanism, raw parameters); at least six mechanisms (issue 22)
REFERENCE = (
    ("uniform", {}), ("uniform", {"p": 0.5}),
    ("reconstruction", {}), ("reconstruction", {"p": 0.22}),
    ("sdr", {}), ("sdr", {"rho2": 1 / 3}),
    ("splu", {}), ("splu", {"gamma": 2}),
    ("anatomy", {"l": 3}), ("anatomy", {"l": 7}),
    ("mondrian", {}), ("mondrian", {"k": 10, "l": 3, "beta": 1.0}),
    ("bucketization", {}), ("dbr", {}), ("priview", {}),
)
REFERENCE_FILE = ROOT / "tests" / "test_risk_anonymeter.json"
SEED = 0
ADULT_TARGET, MILLION_TARGET, MAP_TARGET = 1.0, 5.0, 3.0

_ANON_SCRIPT = r"""
import json, sys, warnings
import numpy as np, pandas as pd
from anonymeter.evaluators import InferenceEvaluator
warnings.simplefilter("ignore")
out = {}
for job in json.loads(sys.argv[1]):
    rows = pd.read_parquet(job["rows"]); train = pd.read_parquet(job["train"]); control = pd.read_parquet(job["control"])
    np.random.seed(0)
    ev = InferenceEvaluator(ori=train, syn=rows, control=control, aux_cols=job["qi"], secret=job["sa"],
                            n_attacks=len(train))
    ev.evaluate(n_jobs=1)
    res = ev.results()
    risk = ev.risk()
    out[job["key"]] = {"risk": risk.value, "interval": list(risk.ci), "train_success": res.attack_rate.value,
                       "control_success": res.control_rate.value, "attacks": len(train)}
print(json.dumps(out))
"""


#: the releases of the singling-out reference (anonymeter's SinglingOutEvaluator), and its number of predicates:
#: fewer than the 1,000 of a steward's assessment so that anonymeter, which draws predicates at random and keeps
#: the isolating ones, reaches them in minutes (PriView's release yields 917 in all)
SINGLING_REFERENCE = (
    ("uniform", {}), ("reconstruction", {}), ("sdr", {}), ("splu", {}), ("anatomy", {"l": 3}),
    ("priview", {}), ("mondrian", {}),
)
SINGLING_FILE = ROOT / "tests" / "test_risk_singling_anonymeter.json"
SINGLING_ATTACKS = 300
SINGLING_MAX_ATTEMPTS = 400_000

_ANON_SINGLING_SCRIPT = r"""
import json, sys, time, warnings
import numpy as np, pandas as pd, polars as pl
FIXED = sys.argv[2] == "fixed"
from anonymeter.evaluators import SinglingOutEvaluator
from anonymeter.evaluators import singling_out_evaluator as soe
warnings.simplefilter("ignore")


def _measure_queries_success(df, queries, n_repeat, n_meas):
    # anonymeter 1.1.0 counts every query here (its _evaluate_queries returns one count per query), so the size
    # correction is fitted to a flat line and comes out as about control size / training size whatever the data;
    # counted as anonymeter 1.0 did: the queries that single out in each subsample
    sizes, successes = [], []
    for n_rows in np.linspace(min(1000, len(df)), len(df), n_meas).astype(int):
        for _ in range(n_repeat):
            successes.append(len(soe._evaluate_queries_and_return_successful(
                df=df.sample(n_rows, with_replacement=False), queries=queries)))
            sizes.append(n_rows)
    return np.array(sizes), np.array(successes)


if FIXED:
    soe._measure_queries_success = _measure_queries_success
out = {}
for job in json.loads(sys.argv[1]):
    rows = pd.read_parquet(job["rows"]); train = pd.read_parquet(job["train"]); control = pd.read_parquet(job["control"])
    pl.set_random_seed(0)
    t0 = time.perf_counter()
    ev = SinglingOutEvaluator(ori=train, syn=rows, control=control, n_attacks=job["attacks"], n_cols=3,
                              max_attempts=job["max_attempts"], seed=0)
    # anonymeter drops duplicate rows; a predicate singles out one *person* here, so the frames are kept as given
    ev._ori, ev._syn, ev._control = pl.DataFrame(train), pl.DataFrame(rows), pl.DataFrame(control)
    ev.evaluate(mode="multivariate")
    res = ev.results()
    risk = ev.risk()
    out[job["key"]] = {"risk": risk.value, "interval": list(risk.ci), "train_success": res.attack_rate.value,
                       "n_success": res.n_success, "n_control": res.n_control, "n_baseline": res.n_baseline,
                       "attacks": job["attacks"],
                       "seconds": time.perf_counter() - t0}
    print(job["key"], out[job["key"]], file=sys.stderr, flush=True)
print(json.dumps(out))
"""


def _singling_frames(release, train, control_rows, data):
    """The per-person published QIs, the training part's and the control part's, as anonymeter reads them:
    a numeric QI published as the table's values as floats, every other QI as text (Mondrian's ranges too)."""
    import numpy as np
    import pandas as pd

    from core import singling_out
    from core.risk import _key

    rows, qis, space = singling_out.published_qis(release, train)
    pub, tr, co = {}, {}, {}
    for i, j in enumerate(qis):
        c = data.qi[j]
        lab_tab = np.asarray(data.qi_labels[j], dtype=object)
        tab = release.tables[release_table(release)]
        lab_pub = np.asarray(tab.labels[c], dtype=object)[np.asarray(tab.columns[c], np.int64)]
        if space.values[i] is not None:
            pub[c] = lab_pub.astype(float)
            tr[c] = lab_tab[train.qi_codes[j]].astype(float)
            co[c] = lab_tab[data.qi_codes[j][control_rows]].astype(float)
        else:
            pub[c] = [_key(v) for v in lab_pub]
            tr[c] = [_key(v) for v in lab_tab[train.qi_codes[j]]]
            co[c] = [_key(v) for v in lab_tab[data.qi_codes[j][control_rows]]]
    return pd.DataFrame(pub), pd.DataFrame(tr), pd.DataFrame(co)


def release_table(release) -> str:
    from core.mechanisms import get

    return get(release.mechanism).record_table


def singling_reference(anon_python: str | None, out: Path) -> dict:
    """Our singling-out figures and anonymeter's for :data:`SINGLING_REFERENCE` (None: keep anonymeter's)."""
    from core import risk
    from core.table import load_dataset

    data = load_dataset("adult")
    jobs, ours = [], {}
    with tempfile.TemporaryDirectory() as tmp:
        for mech, params in SINGLING_REFERENCE:
            key = key_of(mech, params)
            a = risk.assess(data, mech, params, SEED, attacks=SINGLING_ATTACKS)
            so = a.singling_out.to_json()
            ours[key] = {k: so[k] for k in ("risk", "interval", "train_success", "control_success", "predicates",
                                             "available", "train_singled", "control_singled", "control_correction")}
            s = risk.setup(data, mech, params, SEED, attacks=SINGLING_ATTACKS)
            control_rows = risk.split(data.n, s.split_seed)[1]
            rows, train, control = _singling_frames(s.release, s.train, control_rows, data)
            paths = {}
            for name, f in (("rows", rows), ("train", train), ("control", control)):
                paths[name] = str(Path(tmp) / f"{len(jobs)}-{name}.parquet")
                f.to_parquet(paths[name])
            jobs.append({"key": key, "attacks": SINGLING_ATTACKS, "max_attempts": SINGLING_MAX_ATTEMPTS, **paths})
        if anon_python is None:
            old = json.loads(out.read_text())
            theirs = {k: v["anonymeter"] for k, v in old["releases"].items()}
            version = old["anonymeter"]
        else:
            done = subprocess.run([anon_python, "-c", _ANON_SINGLING_SCRIPT, json.dumps(jobs), "fixed"],
                                  capture_output=True, text=True, check=True)
            theirs = json.loads(done.stdout.strip().splitlines()[-1])
            version = subprocess.run([anon_python, "-c",
                                      "import importlib.metadata as m; print(m.version('anonymeter'))"],
                                     capture_output=True, text=True, check=True).stdout.strip()
    result = {"table": "adult", "seed": SEED, "split_seed": risk.DEFAULT_SPLIT_SEED, "attacks": SINGLING_ATTACKS,
              "mode": "multivariate", "n_cols": 3, "max_attempts": SINGLING_MAX_ATTEMPTS, "anonymeter": version,
              "command": "bench/risk.py --singling-out",
              "releases": {k: {"ours": ours[k], "anonymeter": theirs[k]} for k in ours}}
    out.write_text(json.dumps(result, indent=1, sort_keys=True) + "\n")
    return result


def key_of(mechanism: str, params: dict) -> str:
    from core.risk import setting_text

    return f"{mechanism} ({setting_text(params)})"


def _frames(s, data):
    """Published rows and the two target sets as DataFrames of labels, typed alike for anonymeter."""
    import numpy as np
    import pandas as pd

    from core.risk import _key

    rows = s.view.frame(s.train)

    def targets(qi, sa):
        out = {c: np.asarray(data.qi_labels[j], dtype=object)[qi[:, j]] for j, c in enumerate(data.qi)}
        out[data.sa] = data.sa_labels[sa]
        return pd.DataFrame(out)

    train, control = targets(s.t_qi, s.t_sa), targets(s.c_qi, s.c_sa)
    for j, c in enumerate(data.qi):
        numeric = bool(data.qi_numeric[j]) and np.array_equal(np.asarray(s.view.labels[j], object),
                                                              np.asarray(data.qi_labels[j], object))
        for f in (rows, train, control):
            f[c] = f[c].astype(float) if numeric else f[c].map(_key).astype(str)
    for f in (rows, train, control):
        f[data.sa] = f[data.sa].map(_key).astype(str)
    return rows, train, control


def anonymeter_reference(anon_python: str | None, out: Path, attacks: int) -> dict:
    """Our figures and anonymeter's for :data:`REFERENCE` (``anon_python`` None: keep anonymeter's from ``out``)."""
    from core import risk
    from core.table import load_dataset

    data = load_dataset("adult")
    jobs, ours = [], {}
    with tempfile.TemporaryDirectory() as tmp:
        for mech, params in REFERENCE:
            key = key_of(mech, params)
            s = risk.setup(data, mech, params, SEED, attacks=attacks)
            a = risk.assess(data, mech, params, SEED, attacks=attacks)
            rec = a.attacker("records")
            ours[key] = {"risk": rec.risk, "interval": [rec.low, rec.high], "train_success": rec.train.share,
                         "control_success": rec.control.share, "verdict": s.release.verdict.outcome}
            rows, train, control = _frames(s, data)
            paths = {}
            for name, f in (("rows", rows), ("train", train), ("control", control)):
                paths[name] = str(Path(tmp) / f"{len(jobs)}-{name}.parquet")
                f.to_parquet(paths[name])
            jobs.append({"key": key, "qi": list(data.qi), "sa": data.sa, **paths})
        if anon_python is None:
            old = json.loads(out.read_text())
            theirs = {k: v["anonymeter"] for k, v in old["releases"].items()}
            version = old["anonymeter"]
        else:
            t0 = time.perf_counter()
            done = subprocess.run([anon_python, "-c", _ANON_SCRIPT, json.dumps(jobs)], capture_output=True,
                                  text=True, check=True)
            print(f"anonymeter ran {len(jobs)} releases in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
            theirs = json.loads(done.stdout.strip().splitlines()[-1])
            version = subprocess.run([anon_python, "-c",
                                      "import importlib.metadata as m; print(m.version('anonymeter'))"],
                                     capture_output=True, text=True, check=True).stdout.strip()
    result = {"table": "adult", "seed": SEED, "split_seed": risk.DEFAULT_SPLIT_SEED, "attacks": attacks,
              "anonymeter": version, "command": "bench/risk.py --anonymeter",
              "releases": {k: {"ours": ours[k], "anonymeter": theirs[k]} for k in ours}}
    out.write_text(json.dumps(result, indent=1, sort_keys=True) + "\n")
    return result


def releases_table(attacks: int) -> None:
    """Every reference release (and Laplace, Ambiguity): verdict, our risk, anonymeter's, count intervals."""
    from core import intervals, risk
    from core.table import load_dataset
    from core.workload import seed000

    data = load_dataset("adult")
    ref = json.loads(REFERENCE_FILE.read_text())["releases"] if REFERENCE_FILE.exists() else {}
    w = seed000(data, 2000, seed=SEED)
    print("| mechanism | setting | verdict | our risk [95%] (signed by) | our record reader [95%] | "
          "anonymeter [95%] | count 10 | count 1,000 |")
    print("|---|---|---|---|---|---|---|---|")
    for mech, params in REFERENCE + (("laplace", {}), ("laplace", {"epsilon": 0.1}), ("ambiguity", {})):
        key = key_of(mech, params)
        a = risk.assess(data, mech, params, SEED, attacks=attacks)
        s = a.signed
        rec = a.attacker("records")
        ci = intervals.count_intervals(data, mech, params, SEED, workload=w)
        verdict = a_verdict(data, mech, params)
        theirs = ref.get(key, {}).get("anonymeter")
        fmt = lambda v, lo, hi: f"{v:.3f} [{lo:.3f}, {hi:.3f}]"  # noqa: E731
        h10, h1000 = ci.half_width(10), ci.half_width(1000)
        print(f"| {mech} | {risk.setting_text(params)} | {verdict} | {fmt(s.risk, s.low, s.high)} ({s.attacker}) | "
              f"{fmt(rec.risk, rec.low, rec.high) if rec else 'n/a (no rows per person)'} | "
              f"{fmt(theirs['risk'], *theirs['interval']) if theirs else 'n/a'} | "
              f"{'n/a' if h10 is None else '+/- ' + intervals.people(h10)} | "
              f"{'n/a' if h1000 is None else '+/- ' + intervals.people(h1000)} |")


def a_verdict(data, mech: str, params: dict) -> str:
    from core import mechanisms

    v = mechanisms.sanitize(data, mech, params, SEED).verdict
    return v.outcome + (" (qualified)" if v.outcome == "meets" and not v.plain else "")


def _median_time(fn, repeat: int, warm: bool = True) -> tuple[float, float]:
    """Median wall and CPU seconds of ``repeat`` runs after a warm-up run (``warm``)."""
    if warm:
        fn()  # warm-up: imports, the table's QI index
    wall, cpu = [], []
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return statistics.median(wall), statistics.median(cpu)


def speed(repeat: int, skip_1m: bool, mechanism: str, skip_wide: bool = False) -> list[tuple[str, float, float, float | None]]:
    from core import risk
    from core.table import load_dataset

    rows = []
    adult = load_dataset("adult")
    rows.append((f"assess {mechanism}, Adult ({adult.n:,} rows, {risk.DEFAULT_ATTACKS:,} attacks)",
                 *_median_time(lambda: risk.assess(adult, mechanism, {}, SEED), repeat), ADULT_TARGET))
    rows.append((f"  the same without its singling out ({risk.DEFAULT_ATTACKS:,} predicates skipped)",
                 *_median_time(lambda: risk.assess(adult, mechanism, {}, SEED, singling=False), repeat), None))
    if not skip_1m:
        big = load_dataset("census:1000000")
        rows.append((f"assess {mechanism}, census ({big.n:,} rows, {risk.DEFAULT_ATTACKS:,} attacks)",
                     *_median_time(lambda: risk.assess(big, mechanism, {}, SEED), max(1, repeat // 2)),
                     MILLION_TARGET))
    if not skip_wide:
        wide = load_dataset("hospital:3000", "diagnosis")
        peak = []

        def every_mechanism():
            import tracemalloc

            from core.mechanisms import MECHANISMS

            tracemalloc.start()
            try:
                for name in MECHANISMS:
                    risk.assess(wide, name, {}, SEED, singling=False)
                peak.append(tracemalloc.get_traced_memory()[1] / 2**20)
            finally:
                tracemalloc.stop()

        wall, cpu = _median_time(every_mechanism, repeat)
        rows.append((f"assess all 11, hospital:3000 ({wide.m} SA values; arrays' peak {max(peak):,.0f} MB)",
                     wall, cpu, None))
    rows.append((f"map on Adult: every sweep, with the risk scale ({risk.MAP_ATTACKS} attacks a point)",
                 *_median_time(lambda: _adult_map(adult, risk.MAP_ATTACKS), 1, warm=False), MAP_TARGET))
    rows.append(("map on Adult: every sweep, without it (as before issue 22)",
                 *_median_time(lambda: _adult_map(adult, None), 1, warm=False), None))
    return rows


def _adult_map(data, attacks) -> None:
    from core import risk
    from core.mechanisms import MECHANISMS
    from core.workload import seed000

    w = seed000(data, 2000, seed=SEED)
    t = risk.targets(data, risk.DEFAULT_RECORDS, SEED)
    risk.sweep_points(data, list(MECHANISMS), w, t, SEED, attacks=attacks)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--mechanism", default="uniform")
    ap.add_argument("--skip-1m", action="store_true")
    ap.add_argument("--skip-wide", action="store_true", help="without the table of 749 sensitive values (hospital)")
    ap.add_argument("--anonymeter", action="store_true", help="write the anonymeter reference figures")
    ap.add_argument("--anon-python", default=str(ROOT / ".venv-anon" / "bin" / "python"))
    ap.add_argument("--refresh-ours", action="store_true",
                    help="with --anonymeter: recompute our figures only, keeping anonymeter's from the file")
    ap.add_argument("--attacks", type=int, default=1000)
    ap.add_argument("--table", action="store_true", help="print the releases table (markdown)")
    ap.add_argument("--singling-out", action="store_true",
                    help="write the singling-out reference figures (anonymeter's SinglingOutEvaluator)")
    args = ap.parse_args(argv)
    if args.singling_out:
        result = singling_reference(None if args.refresh_ours else args.anon_python, SINGLING_FILE)
        print(f"{'release':45s} {'ours':>22s} {'anonymeter':>22s}")
        for k, v in result["releases"].items():
            o, a = v["ours"], v["anonymeter"]
            print(f"{k:45s} {o['risk']:.3f} [{o['interval'][0]:.3f}, {o['interval'][1]:.3f}]   "
                  f"{a['risk']:.3f} [{a['interval'][0]:.3f}, {a['interval'][1]:.3f}]")
        return 0
    if args.table:
        releases_table(args.attacks)
        return 0
    if args.anonymeter:
        result = anonymeter_reference(None if args.refresh_ours else args.anon_python, REFERENCE_FILE, args.attacks)
        print(f"{'release':45s} {'verdict':8s} {'ours':>22s} {'anonymeter':>22s}")
        for k, v in result["releases"].items():
            o, a = v["ours"], v["anonymeter"]
            print(f"{k:45s} {o['verdict']:8s} {o['risk']:.3f} [{o['interval'][0]:.3f}, {o['interval'][1]:.3f}]   "
                  f"{a['risk']:.3f} [{a['interval'][0]:.3f}, {a['interval'][1]:.3f}]")
        return 0
    rows = speed(args.repeat, args.skip_1m, args.mechanism, args.skip_wide)
    print(f"{'measure':72s} {'wall (s)':>9s} {'cpu (s)':>8s} {'target (s)':>10s} {'ratio':>6s}")
    for name, wall, cpu, target in rows:
        t = "" if target is None else f"{target:10.1f} {wall / target:6.2f}"
        print(f"{name:72s} {wall:9.2f} {cpu:8.2f} {t}")
    print(f"load average: {', '.join(f'{x:.2f}' for x in os.getloadavg())} (2 cores, shared: wall > cpu means "
          "waiting for a core)")
    return 0 if all(wall <= target for _, wall, _, target in rows if target is not None) else 1


if __name__ == "__main__":
    raise SystemExit(main())
