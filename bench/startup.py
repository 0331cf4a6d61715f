"""Start-up of the command line: ``--help``, ``sanitize`` of Adult and the mechanisms' import, beside a bare Python.

Usage::

    .venv/bin/python bench/startup.py                     # this checkout, 5 runs of each, medians
    .venv/bin/python bench/startup.py --root /tmp/old     # and another checkout (e.g. before a change),
                                                          # the runs of both alternated

Each figure is the median wall time of a fresh ``python`` process (the
import caches of the file system warm: one untimed run first), with the
1-minute load average before and after; targets from issue 27: ``--help``
within 0.4 s, ``sanitize`` of Adult within 1 s end to end.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGETS = {"help": 0.4, "sanitize": 1.0}


def cases(out: Path) -> dict[str, list[str]]:
    return {
        "bare": ["-c", "pass"],
        "help": ["-m", "core", "--help"],
        "import": ["-c", "import core.mechanisms"],
        "sanitize": ["-m", "core", "sanitize", "adult", "--sa", "occupation", "--qi", "age,sex,education",
                     "--mechanism", "uniform", "--seed", "1", "--out", str(out)],
    }


def once(root: Path, args: list[str]) -> float:
    # PYTHONDONTWRITEBYTECODE dropped: a steward's install caches bytecode; without the cache every run
    # recompiles core/ (0.23 s of a 0.9 s sanitize on this machine, whose shell sets the variable).
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONDONTWRITEBYTECODE")}
    start = time.perf_counter()
    subprocess.run([sys.executable, *args], cwd=root, env=env, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", type=Path, help="another checkout, measured in the same run (alternated)")
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args(argv)
    roots = {"this": ROOT, **({"other": args.root.resolve()} if args.root else {})}
    load_before = os.getloadavg()[0]
    times: dict = {(r, c): [] for r in roots for c in ("bare", "help", "import", "sanitize")}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.runs + 1):
            for r, root in roots.items():
                for c, argv_ in cases(Path(tmp) / f"{r}-{i}.csv").items():
                    t = once(root, argv_)
                    if i:  # the first round only warms the file system's caches
                        times[r, c].append(t)
    load_after = os.getloadavg()[0]
    print(f"{os.cpu_count()} CPUs; 1-minute load average {load_before:.1f} before, {load_after:.1f} after; "
          f"medians of {args.runs} runs\n")
    head = "| command | " + " | ".join(f"{r} (s)" for r in roots) + " | target | x bare python |"
    if "other" in roots:
        head += " this / other |"
    print(head)
    print("| --- |" + " ---: |" * (len(roots) + 2 + ("other" in roots)))
    for c, label in (("bare", "python -c pass"), ("help", "python -m core --help"),
                     ("import", "import core.mechanisms"), ("sanitize", "sanitize adult (uniform) to CSV")):
        med = {r: statistics.median(times[r, c]) for r in roots}
        row = f"| {label} | " + " | ".join(f"{med[r]:.2f}" for r in roots)
        target = TARGETS.get(c)
        bare = statistics.median(times["this", "bare"])
        row += f" | {'' if target is None else f'≤ {target:g}'} | {med['this'] / bare:.1f}x |"
        if "other" in roots:
            row += f" {med['this'] / med['other']:.2f} |"
        print(row)
    return 0


if __name__ == "__main__":
    sys.exit(main())
