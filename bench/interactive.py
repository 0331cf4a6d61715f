"""Interactive timings: a page rerun after one slider move, and the trade-offs sweep.

Usage::

    .venv/bin/python bench/interactive.py              # Adult: page reruns and the explorer's sweep
    .venv/bin/python bench/interactive.py --no-sweep   # page reruns only

Page reruns are timed with Streamlit's AppTest, in this process: the page
is run once on Adult (so the table and the other inputs are cached, as for
a user who has been working on the page), then one slider is moved and the
rerun is timed (median of ``--repeat`` moves, each to a value not seen
before, so the moved input's result is never a cache hit).  The time is the
script's run on the server; the browser adds the websocket round trip and
the drawing of the charts (the browser test prints keypress-to-new-chart
for the Sanitize page, about 0.5 s more).

The sweep is what the Trade-offs page's "Measure every setting" button does
with its defaults (every mechanism along its main parameter, 2,000 queries,
2,000 attacked records), uncached: its total and per-setting times.
SPEC.md sets no target for the sweep; the page shows progress and caches
every point, so moving a later setting measures only the points it changes.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

RERUN_TARGET = 1.5  # SPEC.md: page rerun after a slider move (cached other inputs), Adult

#: (page label, page file, URL query, slider key, values the slider visits)
RERUNS = [
    ("Sanitize, SPLU-Gen γ", "pages/1_Sanitize.py", {"data": "adult", "mech": "splu", "gamma": "5"},
     "w_m_splu_gamma", [6, 4, 7, 3, 2]),
    ("Sanitize, uniform ρ₂", "pages/1_Sanitize.py", {"data": "adult", "mech": "uniform"},
     "w_m_uniform_rho2", [0.2, 0.25, 0.3, 0.35, 0.4]),
    ("Bounds, SPLU utility γ", "pages/2_Bounds.py", {"bound": "splu-utility"},
     "w_b_splu-utility_gamma", [5, 6, 7, 8, 9]),
    ("Query error, workload d (5 mechanisms, 5,000 queries anew)", "pages/3_Query_error.py",
     {"data": "adult", "mech": "splu", "gamma": "5"}, "w_wl_seed000_max_attrs", [2, 1, 3]),
    ("Attacks, micro-group reconstruction λ", "pages/4_Attacks.py", {"data": "adult"},
     "w_atk_reconstruction_lambda", [0.3, 0.7, 0.4]),
]


def page_reruns(repeat: int = 3) -> list[dict]:
    """Median rerun seconds after a slider move, per page (AppTest, this process)."""
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    out = []
    for label, page, query, key, values in RERUNS:
        st.cache_data.clear()
        st.cache_resource.clear()
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
        at.query_params.update(query)
        at.switch_page(page)
        t0 = time.perf_counter()
        at.run()
        first = time.perf_counter() - t0
        times = []
        for value in values[:repeat]:
            widget = next(w for w in [*at.slider, *at.select_slider, *at.number_input] if w.key == key)
            widget.set_value(value)
            t0 = time.perf_counter()
            at.run()
            times.append(time.perf_counter() - t0)
            if at.exception:
                raise RuntimeError(f"{label}: {at.exception[0].value}")
        out.append({"page": label, "first_s": first, "rerun_s": float(np.median(times)), "moves": len(times)})
    return out


def sweep(dataset: str = "adult") -> dict:
    """The Trade-offs page's default sweep, uncached: total and per-setting seconds."""
    from core import mechanisms
    from core.risk import DEFAULT_RECORDS, sweep_points, targets
    from core.table import load_dataset
    from core.workload import seed000

    data = load_dataset(dataset, "occupation")
    workload = seed000(data, queries=2000, seed=1)
    t = targets(data, DEFAULT_RECORDS, 1)
    per: dict[str, list[float]] = {}
    t0 = time.perf_counter()
    last = [t0]

    def progress(_frac, text):  # called before each setting: charge the time since the last call
        now = time.perf_counter()
        if per.get("_current"):
            per.setdefault(per["_current"][0], []).append(now - last[0])
        per["_current"] = [text.split(":")[0]]
        last[0] = now

    points, skipped = sweep_points(data, list(mechanisms.MECHANISMS), workload, t, 1, progress=progress)
    total = time.perf_counter() - t0
    per.pop("_current", None)
    return {"dataset": dataset, "rows": data.n, "points": len(points), "skipped": len(skipped), "total_s": total,
            "per_mechanism": {k: {"settings": len(v), "seconds": float(sum(v))} for k, v in per.items()}}


def markdown(reruns: list[dict] | None, sw: dict | None) -> str:
    lines = []
    if reruns:
        lines += ["\n### Page rerun after one slider move (Adult, AppTest, other inputs cached)\n",
                  "| page, slider moved | first run s | rerun s (median) | target | |",
                  "|---|---|---|---|---|"]
        for r in reruns:
            ok = "ok" if r["rerun_s"] <= RERUN_TARGET else "SLOW"
            lines.append(f"| {r['page']} | {r['first_s']:.2f} | {r['rerun_s']:.2f} | {RERUN_TARGET} | {ok} |")
    if sw:
        lines += [f"\n### Trade-offs sweep ({sw['dataset']}, {sw['rows']:,} rows, 2,000 queries, 2,000 attacked "
                  f"records, uncached): {sw['points']} settings measured ({sw['skipped']} not eligible) in "
                  f"{sw['total_s']:.1f} s\n",
                  "| mechanism | settings | seconds | per setting |", "|---|---|---|---|"]
        for name, v in sorted(sw["per_mechanism"].items(), key=lambda kv: -kv[1]["seconds"]):
            lines.append(f"| {name} | {v['settings']} | {v['seconds']:.2f} | {v['seconds'] / v['settings']:.2f} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-sweep", action="store_true")
    ap.add_argument("--no-pages", action="store_true")
    args = ap.parse_args(argv)
    reruns = None if args.no_pages else page_reruns(args.repeat)
    sw = None if args.no_sweep else sweep()
    print(markdown(reruns, sw))
    return 0


if __name__ == "__main__":
    sys.exit(main())
