"""Benchmark: every Papers entry run on its stand-in, with its time and verdict.

Usage::

    .venv/bin/python bench/papers.py                   # all 39 entries, one after the other
    .venv/bin/python bench/papers.py 003-fig4 004-fig12  # only these
    .venv/bin/python bench/papers.py --json out.json     # also write every verdict with its statements

Prints one row per entry: its key, wall seconds, CPU seconds of this
process, the verdict; then the counts per verdict and the total time
against the targets (each entry within 30 s on a quiet two-core machine,
all of them within 15 minutes).  Runs in one process, as
``python -m core experiment --all`` does; stand-ins are loaded once per
spec (the time of the first load is counted in the first entry using it).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

ENTRY_TARGET_S = 30.0
TOTAL_TARGET_S = 15 * 60.0


def main(argv=None) -> int:
    from core import papers

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("keys", nargs="*", help="entries to run (default: all)")
    ap.add_argument("--json", metavar="FILE", help="write the verdicts and statements as JSON")
    args = ap.parse_args(argv)
    items = [papers.get(k) for k in args.keys] if args.keys else list(papers.ITEMS)
    out, total0 = [], time.perf_counter()
    print(f"{'entry':<22} {'seconds':>8} {'cpu s':>8}  verdict", flush=True)
    for item in items:
        t0, c0 = time.perf_counter(), time.process_time()
        _, verdict, rows = papers.run(item)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        flag = "  (over 30 s)" if wall > ENTRY_TARGET_S else ""
        print(f"{item.key:<22} {wall:8.1f} {cpu:8.1f}  {verdict}{flag}", flush=True)
        out.append({"key": item.key, "seconds": round(wall, 2), "cpu_seconds": round(cpu, 2), "verdict": verdict,
                    "statements": [r.as_dict() for r in rows]})
    total = time.perf_counter() - total0
    counts: dict[str, int] = {}
    for e in out:
        counts[e["verdict"]] = counts.get(e["verdict"], 0) + 1
    print("\n" + ", ".join(f"{n} {v}" for v, n in counts.items()))
    slowest = max(out, key=lambda e: e["seconds"])
    print(f"total {total:.0f} s (target {TOTAL_TARGET_S:.0f} s, ratio {total / TOTAL_TARGET_S:.2f}); slowest "
          f"{slowest['key']} {slowest['seconds']:.1f} s (target {ENTRY_TARGET_S:.0f} s, ratio "
          f"{slowest['seconds'] / ENTRY_TARGET_S:.2f})")
    if args.json:
        Path(args.json).write_text(json.dumps({"entries": out, "counts": counts, "total_seconds": round(total, 1)},
                                              indent=1, ensure_ascii=False, default=str), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
