"""The work behind one Sanitize slider move, without the browser: the release and the nearest-setting search.

Usage::

    .venv/bin/python bench/sanitize_work.py                          # this checkout
    .venv/bin/python bench/sanitize_work.py --before /tmp/old        # and another, alternated, in one table
    .venv/bin/python bench/sanitize_work.py --mechs priview --presses 2

For each mechanism (default: Ambiguity, PriView, Mondrian, the slowest of
issue 27), on Adult (occupation, seed 1): the page's first setting
(defaults), then ``--presses`` moves of its first slider one step up (the
moves ``bench/latency.py`` times in chromium), each timed as the page does
it: ``core.api.build`` (the release and its verdict), then, when the verdict
asks for it, ``core.mechanisms.nearest`` (the search the page runs behind
itself).  A per-table memo stands in for the app's
(``core.engine.memo.RECORD_MEMO``), so what the app keeps between moves is
kept here too.  The first setting warms it, as opening the page does; the
moves are reported (median).  With ``--before``, each checkout runs in its
own process (``PYTHONPATH``), alternated ``--rounds`` times, so both see
the same load; the table has both and their ratio.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: mechanism -> (its first slider's parameter, one step of it)
STEPS = {"ambiguity": ("alpha", 0.005), "priview": ("alpha", 0.005), "mondrian": ("beta", 0.005),
         "splu": ("gamma", 1), "anatomy": ("l", 1), "reconstruction": ("lambda", 0.05)}


def measure(mechs: list[str], presses: int) -> dict:
    """``{mechanism: {"build": [s per move], "search": [s per move]}}`` in this process's checkout."""
    from core import api, mechanisms
    from core.engine import memo
    from core.session import Setting
    from core.table import load_dataset

    kept: dict = {}

    def factory(data):
        own = kept.setdefault(id(data), {})

        def remember(key, compute):
            if key not in own:
                own[key] = compute()
            return own[key]

        return remember

    memo.RECORD_MEMO = factory
    data = load_dataset("adult", "occupation")
    out = {}
    for name in mechs:
        mech = mechanisms.get(name)
        param, step = STEPS[name]
        base = mech.resolve({})
        times = {"build": [], "search": []}
        for i in range(presses + 1):
            value = base[param] + i * step
            values = mech.resolve({**base, param: round(value, 6) if isinstance(step, float) else value})
            t = time.perf_counter()
            rel = api.build(data, Setting(name, dict(values), 1))
            built = time.perf_counter() - t
            t = time.perf_counter()
            if mechanisms.searches_nearest(rel.verdict):
                mechanisms.nearest(data, name, values, 1, rel.verdict)
            searched = time.perf_counter() - t
            if i:  # the first setting is the page's opening (it warms what the app keeps)
                times["build"].append(built)
                times["search"].append(searched)
        out[name] = times
    return out


def _run(root: Path, mechs: list[str], presses: int) -> dict:
    env = {**os.environ, "PYTHONPATH": str(root)}
    # this file loaded by its path: ``core`` is imported from ``root`` (PYTHONPATH), not from this checkout
    code = (f"import importlib.util, json; spec = importlib.util.spec_from_file_location('work', {__file__!r}); "
            f"mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod); "
            f"import core; assert core.__file__.startswith({str(root)!r}), core.__file__; "
            f"print(json.dumps(mod.measure({mechs!r}, {presses})))")
    got = subprocess.run([sys.executable, "-c", code], cwd=root, env=env, capture_output=True, text=True)
    if got.returncode:
        raise RuntimeError(got.stderr[-2000:])
    return json.loads(got.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--before", type=Path, help="another checkout, measured alternately with this one")
    ap.add_argument("--mechs", default="ambiguity,priview,mondrian")
    ap.add_argument("--presses", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args(argv)
    mechs = [m.strip() for m in args.mechs.split(",") if m.strip()]
    unknown = [m for m in mechs if m not in STEPS]
    if unknown:
        ap.error(f"unknown mechanism(s) {', '.join(unknown)}; choose from {', '.join(STEPS)}")
    load = os.getloadavg()[0]
    roots = [("after", ROOT)] + ([("before", args.before.resolve())] if args.before else [])
    runs: dict = {label: {m: {"build": [], "search": []} for m in mechs} for label, _ in roots}
    for _ in range(args.rounds):
        for label, root in (roots[::-1] if args.before else roots):
            for m, t in _run(root, mechs, args.presses).items():
                for k in ("build", "search"):
                    runs[label][m][k] += t[k]
    print(f"{os.cpu_count()} CPUs; 1-minute load average {load:.1f} before, {os.getloadavg()[0]:.1f} after; "
          f"median of {args.rounds} x {args.presses} slider moves per mechanism (Adult, seed 1)\n")
    head = "| mechanism | release s | nearest search s | together s |"
    if args.before:
        head = ("| mechanism | release s, before | after | nearest search s, before | after | together, before "
                "| after | after / before |")
    print(head)
    print("|" + " --- |" * (head.count("|") - 1))
    for m in mechs:
        med = {lab: {k: statistics.median(v[m][k]) for k in ("build", "search")} for lab, v in runs.items()}
        a = med["after"]
        if not args.before:
            print(f"| {m} | {a['build']:.3f} | {a['search']:.3f} | {a['build'] + a['search']:.3f} |")
            continue
        b = med["before"]
        tb, ta = b["build"] + b["search"], a["build"] + a["search"]
        print(f"| {m} | {b['build']:.3f} | {a['build']:.3f} | {b['search']:.3f} | {a['search']:.3f} | {tb:.3f} | "
              f"{ta:.3f} | {ta / tb:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
