"""Benchmark: every Papers entry run on its stand-in, with its time and verdict.

Usage::

    .venv/bin/python bench/papers.py                        # all 39 entries, one after the other
    .venv/bin/python bench/papers.py 003-fig4 004-fig12     # only these
    .venv/bin/python bench/papers.py --json docs/papers.json  # also record every verdict with its statements
    .venv/bin/python bench/papers.py --markdown docs/papers.json  # the table of a record, for docs/papers.md

Prints one row per entry: its key, wall seconds, CPU seconds of this
process, the verdict; then the counts per verdict and the totals against
the targets (each entry within 30 s on a quiet two-core machine, all of
them within 15 minutes).  On a shared machine the wall time waits for
other processes; the CPU time is what the entry costs (on a quiet machine
its wall time, the runs being single-threaded), so both are flagged.
Runs in one process through :func:`core.papers.run_all`, as ``python -m
core experiment --all`` does; a stand-in is built once per process (the
first entry using it pays for it).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

ENTRY_TARGET_S = 30.0
TOTAL_TARGET_S = 15 * 60.0


def _row(e: dict) -> str:
    flag = "".join(f"  ({what} over {ENTRY_TARGET_S:.0f} s)" for what, key in (("wall", "seconds"),
                                                                                 ("CPU", "cpu_seconds"))
                   if e[key] > ENTRY_TARGET_S)
    return f"{e['key']:<22} {e['seconds']:8.1f} {e['cpu_seconds']:8.1f}  {e['verdict']}{flag}"


def markdown(record: dict) -> str:
    """The record as a markdown table (entry, seconds, CPU seconds, verdict) with its counts."""
    from core import papers

    lines = ["| entry | seed, number | seconds | CPU s | verdict |", "|---|---|---:|---:|---|"]
    for e in record["entries"]:
        lines.append(f"| {e['key']} | {e['seed']} {e['number']} | {e['seconds']:.1f} | {e['cpu_seconds']:.1f} | "
                     f"{e['verdict']} |")
    c = papers.counts(e["verdict"] for e in record["entries"])
    wall = sum(e["seconds"] for e in record["entries"])
    cpu = sum(e["cpu_seconds"] for e in record["entries"])
    lines += ["", f"Counts: {papers.counts_text(c)}. Total {wall:.0f} s wall, {cpu:.0f} s CPU."]
    return "\n".join(lines)


def main(argv=None) -> int:
    from core import papers

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("keys", nargs="*", help="entries to run (default: all)")
    ap.add_argument("--json", metavar="FILE", help="write the verdicts and statements as JSON")
    ap.add_argument("--markdown", metavar="FILE", help="print the table of a recorded run (no run)")
    args = ap.parse_args(argv)
    if args.markdown:
        print(markdown(json.loads(Path(args.markdown).read_text(encoding="utf-8"))))
        return 0
    print(f"{'entry':<22} {'seconds':>8} {'cpu s':>8}  verdict", flush=True)
    out = papers.run_all(args.keys or None, on_entry=lambda e: print(_row(e), flush=True))
    entries = out["entries"]
    wall = sum(e["seconds"] for e in entries)
    cpu = sum(e["cpu_seconds"] for e in entries)
    print("\n" + papers.counts_text(out["counts"]))
    for what, key, total in (("wall", "seconds", wall), ("CPU", "cpu_seconds", cpu)):
        slow = max(entries, key=lambda e: e[key])
        print(f"{what}: total {total:.0f} s (target {TOTAL_TARGET_S:.0f} s, ratio {total / TOTAL_TARGET_S:.2f}); "
              f"slowest {slow['key']} {slow[key]:.1f} s (target {ENTRY_TARGET_S:.0f} s, ratio "
              f"{slow[key] / ENTRY_TARGET_S:.2f})")
    if args.json:
        Path(args.json).write_text(json.dumps({"command": "python bench/papers.py --json " + args.json, **out},
                                              indent=1, ensure_ascii=False, default=str) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
