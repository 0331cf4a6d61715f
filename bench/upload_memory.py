"""What a refused or forgotten upload leaves in memory, with and without give_back_memory().

Usage::

    .venv/bin/python bench/upload_memory.py               # 3 refused uploads of 1M rows (limit 500K)
    .venv/bin/python bench/upload_memory.py --rows 2000000 --times 3

Runs the Home page's parse (:func:`pages.ui.data.handle_upload` without the
trim, so both halves are measured here) on a generated CSV longer than the
row limit (``WORKBENCH_MAX_ROWS`` is set to half of ``--rows`` in this
process), ``--times`` times, and prints the resident memory (psutil) before,
after each refusal with only the garbage collector run, and after
:func:`core.lru.give_back_memory` (gc plus glibc ``malloc_trim(0)``); then
the same for the file read under a raised limit (the whole table parsed,
kept, then forgotten).  The
pages call ``give_back_memory`` after every refused upload, when an upload
is replaced or forgotten and when a session ends.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import psutil

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=1_000_000, help="rows of the refused CSV (default 1,000,000)")
    ap.add_argument("--times", type=int, default=3, help="refused uploads in a row (default 3)")
    ap.add_argument("--dynamic-threshold", action="store_true",
                    help="leave glibc's mmap threshold dynamic (the pages fix it at 128 KiB, WORKBENCH_MMAP_KB)")
    args = ap.parse_args(argv)
    os.environ["WORKBENCH_MAX_ROWS"] = str(args.rows // 2)
    from core import lru
    from core.errors import WorkbenchError
    from core.table import load_table

    me = psutil.Process()
    if not args.dynamic_threshold:
        lru.fix_mmap_threshold()  # as the pages do when they load

    def mb() -> float:
        return me.memory_info().rss / 2**20

    rng = np.random.default_rng(0)
    data = pd.DataFrame({
        "age": rng.integers(17, 91, args.rows),
        "zipcode": rng.choice([f"{z:05d}" for z in range(10000, 10600)], args.rows),
        "sex": rng.choice(["F", "M"], args.rows),
        "diagnosis": rng.choice([f"dx_{i:02d}" for i in range(12)], args.rows),
    }).to_csv(index=False).encode()
    lru.give_back_memory()
    print(f"CSV of {args.rows:,} rows: {len(data) / 2**20:.0f} MB; row limit {args.rows // 2:,}")
    print(f"before: {mb():.0f} MB")
    for i in range(args.times):
        try:
            load_table(data, filename=f"big_{i}.csv")
            print("not refused: raise --rows")
            return 1
        except WorkbenchError:
            pass
        gc.collect()
        only_gc = mb()
        lru.give_back_memory()
        print(f"refusal {i + 1}: {only_gc:.0f} MB after gc, {mb():.0f} MB after give_back_memory")
    import core.table

    core.table.MAX_ROWS = args.rows  # the limit is read at import: raise it in place
    table = load_table(data, filename="accepted.csv")  # read under the limit this time: the whole table
    print(f"accepted upload parsed and kept: {mb():.0f} MB ({len(table):,} rows)")
    del table
    gc.collect()
    only_gc = mb()
    lru.give_back_memory()
    print(f"accepted upload forgotten: {only_gc:.0f} MB after gc, {mb():.0f} MB after give_back_memory")
    return 0


if __name__ == "__main__":
    sys.exit(main())
