"""Time and memory of the group mechanisms' sanitize on census:N (issue 15: groups from counts).

Usage::

    .venv/bin/python bench/groups.py                          # census:1000000 and census:5000000
    .venv/bin/python bench/groups.py --rows 1000000 --mechanisms anatomy,sdr --timeout 120

Each (mechanism, N) runs in its own process: the table is loaded first
(not timed), then ``core.mechanisms.sanitize`` runs once with seed 1 at the
mechanism's default parameters.  Reported: wall time of sanitize, the
process's peak resident memory (``ru_maxrss``) and the peak minus the
resident memory after loading (what sanitize added).  A run longer than
``--timeout`` seconds is stopped and reported as such.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MECHANISMS = ("anatomy", "sdr", "bucketization", "mondrian", "ambiguity", "priview")

_CHILD = r"""
import json, resource, sys, time
sys.path.insert(0, {root!r})
from core import mechanisms
from core.table import load_dataset

def rss_mb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
data = load_dataset({dataset!r})
base = rss_mb()
t0 = time.perf_counter()
rel = mechanisms.sanitize(data, {mech!r}, None, seed=1)
sec = time.perf_counter() - t0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({{"seconds": sec, "peak_mb": peak, "added_mb": peak - base, "rows_out": int(rel.rows_out)}}))
"""


def run(mech: str, rows: int, timeout: float) -> dict:
    code = _CHILD.format(root=str(ROOT), dataset=f"census:{rows}", mech=mech)
    try:
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"over {timeout:g} s"}
    if out.returncode:
        return {"error": (out.stderr.strip().splitlines() or ["failed"])[-1][:120]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", default="1000000,5000000")
    ap.add_argument("--mechanisms", default=",".join(MECHANISMS))
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    results = []
    for rows in [int(r) for r in args.rows.split(",")]:
        for mech in args.mechanisms.split(","):
            r = {"mechanism": mech, "rows": rows, **run(mech, rows, args.timeout)}
            results.append(r)
            if "error" in r:
                print(f"{mech:14s} {rows:>10,}  {r['error']}", flush=True)
            else:
                print(f"{mech:14s} {rows:>10,}  {r['seconds']:7.2f} s  peak {r['peak_mb']:7.0f} MB  "
                      f"sanitize added {r['added_mb']:7.0f} MB", flush=True)
    if args.json:
        print(json.dumps(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
