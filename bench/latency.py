"""Latency in a real browser: chromium driven by Playwright against a local ``streamlit run``.

Usage::

    .venv/bin/python bench/latency.py                    # this checkout, every measurement, a table on stdout
    .venv/bin/python bench/latency.py --root /tmp/old    # another checkout (e.g. a commit before a change)
    .venv/bin/python bench/latency.py --only sanitize,pages --json out.json
    .venv/bin/python bench/latency.py --only sanitize --mechs mondrian,priview --presses 7
    .venv/bin/python bench/latency.py --only none --census  # only the 5M-row case (minutes to set up)
    .venv/bin/python bench/latency.py --only none --census --mechs sdr,anatomy  # other mechanisms at 5M

What is timed (issue 13 §5), all on Adult (occupation as the sensitive attribute, seed 1):

* **Sanitize slider**: per mechanism, the main parameter's slider is focused and ArrowRight pressed
  (three presses, each to a value not seen before), from the key press to the end of the rerun;
  the median per mechanism and the median over the mechanisms (target 0.4 s).  Also reported: the
  time until the page settled (the last run ended), which includes the fragment that brings the
  nearest setting meeting the guarantee when that search runs behind the page.
* **Page open**: each page reached from the sidebar after Adult is loaded, from the click to the
  end of its first run (target 1.5 s); the first visit (nothing of that page cached) is reported.
* **Query error workload slider**: the "attributes per query" slider, key press to end of rerun
  (target 1 s); a new workload each press.
* **Trade-off map**: "Measure every setting" with the page's defaults (every mechanism along its
  main parameter), click to the end of the run, progress shown (target 6 s).
* **Report**: "Build the report", click to the download button (target 5 s), after the map.
* **census 5M** (opt-in, ``--census``; issue 15): the Sanitize slider of SPLU-Gen (gamma) and UP (its
  first slider) on ``census:5000000``, or of the mechanisms ``--mechs`` names, timed as on Adult once
  the table is loaded (target 1 s), with the time until the page settled.

"End of the rerun" is Streamlit's own signal: the ``data-test-script-state`` attribute of the app
root going from ``running`` to ``notRunning``, recorded in the page by a MutationObserver with
``performance.now()`` (so polling adds nothing). The server is started for the run on a free
loopback port and stopped by its PID; every run starts with empty caches (a fresh server), so the
numbers are a first visit's, not a warm cache's, except where said.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]
TARGETS = {"sanitize": 0.4, "pages": 1.5, "query": 1.0, "map": 6.0, "report": 5.0}
MECHANISMS = ("uniform", "reconstruction", "sdr", "splu", "bucketization", "anatomy", "ambiguity", "dbr",
              "priview", "laplace", "mondrian")
QUERY = "data=adult&sa=occupation&seed=1"

_OBSERVE = """() => {
  window.__runs = [];
  const root = document.querySelector('[data-testid="stApp"]');
  const note = () => window.__runs.push([root.getAttribute('data-test-script-state'), performance.now()]);
  new MutationObserver(note).observe(root, {attributes: true, attributeFilter: ['data-test-script-state']});
  return performance.now();
}"""
_MARK = "() => performance.now()"
#: seconds from t0 to the first notRunning after a running that came after t0 (None while not there)
_DONE = """(t0) => {
  let ran = false;
  for (const [s, t] of window.__runs) {
    if (t < t0) continue;
    if (s === 'running') ran = true;
    else if (ran && s === 'notRunning') return (t - t0) / 1000;
  }
  return null;
}"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """``streamlit run app.py`` in ``root`` on a free loopback port; stopped by its PID."""

    def __init__(self, root: Path):
        self.port = _free_port()
        env = {**os.environ, "PYTHONPATH": str(root)}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
             "--server.port", str(self.port), "--server.address", "127.0.0.1",
             "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"],
            cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 60
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"streamlit exited with status {self.proc.returncode}")
            try:
                with urllib.request.urlopen(f"{self.url}/_stcore/health", timeout=2) as r:
                    if r.status == 200:
                        return
            except OSError:
                time.sleep(0.3)
        self.stop()
        raise TimeoutError("streamlit did not start within 60 s")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        self.proc.terminate()  # this PID only
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=5)


def _idle(page, timeout: float = 120, quiet_for: float = 0.8) -> None:
    """Wait until the app root says the script is not running (and stays so for ``quiet_for`` seconds).

    0.8 s: longer than the 0.3 s between the runs of Sanitize's fragment that
    brings the nearest-setting fix, so a measurement starts from a settled page.
    """
    deadline = time.time() + timeout
    quiet = None
    while time.time() < deadline:
        state = page.evaluate("() => document.querySelector('[data-testid=\"stApp\"]')"
                              "?.getAttribute('data-test-script-state')")
        if state == "notRunning":
            quiet = quiet or time.time()
            if time.time() - quiet >= quiet_for:
                return
        else:
            quiet = None
        time.sleep(0.05)
    raise TimeoutError("the page did not finish its run")


#: seconds from t0 to the last notRunning recorded (the page settled: follow-up fragment runs included)
_SETTLED = """(t0) => {
  let last = null;
  for (const [s, t] of window.__runs) if (t >= t0 && s === 'notRunning') last = (t - t0) / 1000;
  return last;
}"""


def _timed(page, action, timeout: float = 180, settled: list | None = None) -> float:
    """Seconds from ``action()`` to the end of the rerun it starts.

    With ``settled`` (a list), the seconds until the page settled (the last
    run ended, fragments that follow the rerun included) are appended to it.
    """
    page.evaluate(_OBSERVE)
    t0 = page.evaluate(_MARK)
    action()
    deadline = time.time() + timeout
    while time.time() < deadline:
        done = page.evaluate(_DONE, t0)
        if done is not None:
            if settled is not None:
                _idle(page, timeout=timeout)
                settled.append(float(page.evaluate(_SETTLED, t0)))
            return float(done)
        time.sleep(0.02)
    raise TimeoutError("no rerun ended")


def _loaded(page, action, timeout: float = 120) -> float:
    """Seconds from ``action()`` (a navigation: the page's scripts start anew) to the end of the first run."""
    start = time.perf_counter()
    action()
    page.wait_for_selector('[data-testid="stApp"]', timeout=timeout * 1000)
    ran = False
    while time.perf_counter() - start < timeout:
        state = page.evaluate("() => document.querySelector('[data-testid=\"stApp\"]')"
                              "?.getAttribute('data-test-script-state')")
        ran = ran or state == "running"
        if ran and state == "notRunning":
            elapsed = time.perf_counter() - start
            _idle(page)
            return elapsed
        time.sleep(0.02)
    raise TimeoutError("the page did not finish its first run")


def _open(page, url: str, timeout: float = 120) -> None:
    page.goto(url, timeout=timeout * 1000)
    # the app root says notRunning before its first run starts: wait for the page's title first
    page.wait_for_selector('[data-testid="stMain"] h1', timeout=timeout * 1000)
    _idle(page, timeout=timeout)


def sanitize(browser, server: Server, presses: int = 3, mechanisms=MECHANISMS, query: str = QUERY,
             timeout: float = 180) -> dict:
    """Median seconds per mechanism from ArrowRight on its main parameter's slider to the end of the rerun."""
    out = {}
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.set_default_timeout(timeout * 1000)
    try:
        for name in mechanisms:
            _open(page, f"{server.url}/Sanitize?{query}&mech={name}", timeout=timeout)
            sliders = page.locator('[data-testid="stMain"] [data-testid="stSlider"] input[type="range"]')
            try:  # on a loaded machine the widgets can arrive after the first idle moment
                sliders.first.wait_for(state="attached", timeout=15_000)
            except Exception:
                pass
            if sliders.count() == 0:
                out[name] = None  # no parameter to move (DBR)
                continue
            handle = sliders.first
            times, settled = [], []
            key = "ArrowRight"
            for _ in range(presses):
                handle.focus()
                if float(handle.input_value()) >= float(handle.get_attribute("max")):
                    key = "ArrowLeft"  # at the top (a slider over a few presets): go down, to values not seen yet
                times.append(_timed(page, lambda: page.keyboard.press(key), timeout=timeout, settled=settled))
                _idle(page, timeout=timeout)
            out[name] = statistics.median(times)
            out.setdefault("_runs", {})[name] = times
            out.setdefault("_settled", {})[name] = statistics.median(settled)
    finally:
        page.close()
    return out


def pages(browser, server: Server) -> dict:
    """Seconds from a sidebar click to the end of the page's first run, per page (Adult loaded first)."""
    out = {}
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    try:
        _open(page, f"{server.url}/?{QUERY}")
        out["Home (reload, table cached)"] = _loaded(page, lambda: page.reload())
        links = page.locator('[data-testid="stSidebarNav"] a')
        n = links.count()
        for i in [*range(1, n), 0]:  # every page, then back to Home
            link = links.nth(i)
            title = link.inner_text().strip().splitlines()[-1].strip()
            out[title] = _timed(page, lambda: link.click())
            _idle(page)
    finally:
        page.close()
    return out


def query_slider(browser, server: Server, presses: int = 3) -> list[float]:
    """Seconds from a key press on the Query error workload's first slider to the end of the rerun."""
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    try:
        _open(page, f"{server.url}/Query_error?{QUERY}&mech=splu")
        # the workload's first slider: attributes per query (max_attrs, 1 to 8)
        handle = page.locator('[data-testid="stMain"] [data-testid="stSlider"] input[type="range"]').first
        times = []
        for key in ["ArrowLeft", "ArrowLeft", "ArrowRight"][:presses]:
            handle.focus()
            times.append(_timed(page, lambda: page.keyboard.press(key)))
            _idle(page)
        return times
    finally:
        page.close()


def map_and_report(browser, server: Server) -> dict:
    page = browser.new_page(viewport={"width": 1400, "height": 1000}, accept_downloads=True)
    out = {}
    try:
        _open(page, f"{server.url}/Trade-offs?{QUERY}&mech=splu")
        button = page.get_by_role("button", name="Measure every setting")
        seen = []

        def click():
            button.click()

        page.evaluate(_OBSERVE)
        t0 = page.evaluate(_MARK)
        click()
        deadline = time.time() + 300
        while time.time() < deadline:
            if page.locator('[data-testid="stProgress"]').count():
                seen.append(True)
            done = page.evaluate(_DONE, t0)
            if done is not None:
                out["map"] = float(done)
                break
            time.sleep(0.05)
        out["map progress shown"] = bool(seen)
        _idle(page)
        build = page.get_by_role("button", name="Build the report")
        build.scroll_into_view_if_needed()
        out["report"] = _timed(page, lambda: build.click(), timeout=300)
        page.get_by_role("button", name="Download the report (HTML)").wait_for(timeout=10_000)
    finally:
        page.close()
    return out


#: the opt-in large-table case (issue 15: "a slider move on census 5M answers in <= 1 s")
CENSUS_ROWS = 5_000_000
CENSUS_MECHANISMS = ("splu", "uniform")


def census(browser, server: Server, rows: int = CENSUS_ROWS, presses: int = 3,
           mechanisms=CENSUS_MECHANISMS) -> dict:
    """The Sanitize slider on ``census:rows``: the table is loaded (and each mechanism's first release
    made) before the clock starts; then each key press is timed as on Adult (``mechanisms``: any of
    :data:`MECHANISMS`, ``--mechs`` with ``--census``)."""
    query = f"data=census:{rows}&sa=occupation&seed=1"
    start = time.perf_counter()
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    try:
        _open(page, f"{server.url}/?{query}", timeout=900)  # loads and encodes the table (minutes)
    finally:
        page.close()
    out = {"setup seconds": time.perf_counter() - start}
    out.update(sanitize(browser, server, presses, mechanisms, query, timeout=900))
    return out


def _fmt(v) -> str:
    return "n/a" if v is None else f"{v:.2f}"


def table(results: dict) -> str:
    """The results as a Markdown table (measurement, seconds, target, met)."""
    rows = []
    san = {k: v for k, v in results.get("sanitize", {}).items() if v is not None and not k.startswith("_")}
    if san:
        med = statistics.median(san.values())
        rows.append(("Sanitize slider, median over the mechanisms", med, TARGETS["sanitize"]))
        for k, v in results["sanitize"].items():
            if not k.startswith("_"):
                rows.append((f"  Sanitize slider, {k}", v, None))
        after = results["sanitize"].get("_settled", {})
        if after:
            rows.append(("Sanitize slider until the page settled (nearest-setting fix shown), median",
                         statistics.median(after.values()), None))
    big = results.get("census", {})
    for k, v in big.items():
        if k in MECHANISMS:
            settled = big.get("_settled", {}).get(k)
            rows.append((f"Sanitize slider on census:{CENSUS_ROWS:,}, {k} (median"
                         + (f"; settled {settled:.2f})" if settled is not None else ")"), v, 1.0))
    for k, v in results.get("pages", {}).items():
        rows.append((f"open {k}", v, TARGETS["pages"]))
    if results.get("query"):
        rows.append(("Query error workload slider (median)", statistics.median(results["query"]), TARGETS["query"]))
    if "map" in results.get("map_report", {}):
        mr = results["map_report"]
        rows.append(("Trade-off map, measure every setting"
                     + ("" if mr.get("map progress shown") else " (no progress seen)"), mr["map"], TARGETS["map"]))
    if "report" in results.get("map_report", {}):
        rows.append(("Report build (after the map)", results["map_report"]["report"], TARGETS["report"]))
    lines = ["| measurement | seconds | target | met |", "| --- | ---: | ---: | --- |"]
    for label, v, target in rows:
        met = "" if target is None or v is None else ("yes" if v <= target else f"no (+{v - target:.2f} s)")
        lines.append(f"| {label} | {_fmt(v)} | {'' if target is None else f'≤ {target:g}'} | {met} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", type=Path, default=ROOT, help="checkout to serve (default: this one)")
    ap.add_argument("--only", default="sanitize,pages,query,map", help="comma separated: sanitize,pages,query,map")
    ap.add_argument("--json", type=Path, help="also write the raw results here")
    ap.add_argument("--census", action="store_true",
                    help=f"also time the Sanitize slider on census:{CENSUS_ROWS:,} (opt-in: loading the table "
                         "takes minutes and several GB)")
    ap.add_argument("--mechs", default=None,
                    help="comma separated mechanisms for 'sanitize' (default: all) and for --census (default: "
                         f"{','.join(CENSUS_MECHANISMS)})")
    ap.add_argument("--presses", type=int, default=3, help="key presses per slider (the median is reported)")
    args = ap.parse_args(argv)
    mechs = tuple(m.strip() for m in (args.mechs or ",".join(MECHANISMS)).split(",") if m.strip())
    unknown = [m for m in mechs if m not in MECHANISMS]
    if unknown:
        ap.error(f"unknown mechanism(s) {', '.join(unknown)}; choose from {', '.join(MECHANISMS)}")
    census_mechs = mechs if args.mechs else CENSUS_MECHANISMS
    from playwright.sync_api import sync_playwright

    wanted = {w.strip() for w in args.only.split(",") if w.strip()}
    results: dict = {"cpus": os.cpu_count(), "load_before": os.getloadavg()[0]}
    server = Server(args.root.resolve())
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            try:
                # every section on its own fresh page; the server's caches fill as the sections run, in this order
                sections = (("pages", pages),
                            ("sanitize", lambda b, s: sanitize(b, s, args.presses, mechs)),
                            ("query", query_slider),
                            ("map_report", map_and_report),
                            ("census", lambda b, s: census(b, s, presses=args.presses, mechanisms=census_mechs)))
                for key, run in sections:
                    if key.split("_")[0] in wanted or (key == "census" and args.census):
                        try:
                            results[key] = run(browser, server)
                        except Exception as exc:  # one section failing keeps the others' numbers
                            results.setdefault("errors", {})[key] = f"{type(exc).__name__}: {exc}"[:300]
                            print(f"{key} failed: {results['errors'][key]}", file=sys.stderr)
            finally:
                browser.close()
    finally:
        server.stop()
    results["load_after"] = os.getloadavg()[0]
    print(f"{results['cpus']} CPUs; 1-minute load average {results['load_before']:.1f} before, "
          f"{results['load_after']:.1f} after (above the CPU count, every number is inflated by waiting)\n")
    print(table(results))
    for key, message in results.get("errors", {}).items():
        print(f"\n{key}: not measured ({message})")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
