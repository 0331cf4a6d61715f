"""Latency in a real browser: chromium driven by Playwright against a local ``streamlit run``.

Usage::

    .venv/bin/python bench/latency.py                    # this checkout, every measurement, a table on stdout
    .venv/bin/python bench/latency.py --root /tmp/old    # another checkout (e.g. a commit before a change)
    .venv/bin/python bench/latency.py --only sanitize,pages --json out.json

What is timed (issue 13 §5), all on Adult (occupation as the sensitive attribute, seed 1):

* **Sanitize slider**: per mechanism, the main parameter's slider is focused and ArrowRight pressed
  (three presses, each to a value not seen before), from the key press to the end of the rerun;
  the median per mechanism and the median over the mechanisms (target 0.4 s).
* **Page open**: each page reached from the sidebar after Adult is loaded, from the click to the
  end of its first run (target 1.5 s); the first visit (nothing of that page cached) is reported.
* **Query error workload slider**: the "attributes per query" slider, key press to end of rerun
  (target 1 s); a new workload each press.
* **Trade-off map**: "Measure every setting" with the page's defaults (every mechanism along its
  main parameter), click to the end of the run, progress shown (target 6 s).
* **Report**: "Build the report", click to the download button (target 5 s), after the map.

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


def _idle(page, timeout: float = 120) -> None:
    """Wait until the app root says the script is not running (and stays so for 0.3 s)."""
    deadline = time.time() + timeout
    quiet = None
    while time.time() < deadline:
        state = page.evaluate("() => document.querySelector('[data-testid=\"stApp\"]')"
                              "?.getAttribute('data-test-script-state')")
        if state == "notRunning":
            quiet = quiet or time.time()
            if time.time() - quiet >= 0.3:
                return
        else:
            quiet = None
        time.sleep(0.05)
    raise TimeoutError("the page did not finish its run")


def _timed(page, action, timeout: float = 180) -> float:
    """Seconds from ``action()`` to the end of the rerun it starts."""
    page.evaluate(_OBSERVE)
    t0 = page.evaluate(_MARK)
    action()
    deadline = time.time() + timeout
    while time.time() < deadline:
        done = page.evaluate(_DONE, t0)
        if done is not None:
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


def _open(page, url: str) -> None:
    page.goto(url, timeout=120_000)
    # the app root says notRunning before its first run starts: wait for the page's title first
    page.wait_for_selector('[data-testid="stMain"] h1', timeout=120_000)
    _idle(page)


def sanitize(browser, server: Server, presses: int = 3) -> dict:
    """Median seconds per mechanism from ArrowRight on its main parameter's slider to the end of the rerun."""
    out = {}
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    try:
        for name in MECHANISMS:
            _open(page, f"{server.url}/Sanitize?{QUERY}&mech={name}")
            sliders = page.locator('[data-testid="stMain"] [data-testid="stSlider"] input[type="range"]')
            if sliders.count() == 0:
                out[name] = None  # no parameter to move (DBR)
                continue
            handle = sliders.first
            times = []
            key = "ArrowRight"
            for _ in range(presses):
                handle.focus()
                if float(handle.input_value()) >= float(handle.get_attribute("max")):
                    key = "ArrowLeft"  # at the top (a slider over a few presets): go down, to values not seen yet
                times.append(_timed(page, lambda: page.keyboard.press(key)))
                _idle(page)
            out[name] = statistics.median(times)
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


def _fmt(v) -> str:
    return "n/a" if v is None else f"{v:.2f}"


def table(results: dict) -> str:
    """The results as a Markdown table (measurement, seconds, target, met)."""
    rows = []
    san = {k: v for k, v in results.get("sanitize", {}).items() if v is not None}
    if san:
        med = statistics.median(san.values())
        rows.append(("Sanitize slider, median over the mechanisms", med, TARGETS["sanitize"]))
        for k, v in results["sanitize"].items():
            rows.append((f"  Sanitize slider, {k}", v, None))
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
    args = ap.parse_args(argv)
    from playwright.sync_api import sync_playwright

    wanted = {w.strip() for w in args.only.split(",") if w.strip()}
    results: dict = {"cpus": os.cpu_count(), "load_before": os.getloadavg()[0]}
    server = Server(args.root.resolve())
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            try:
                # every section on its own fresh page; the server's caches fill as the sections run, in this order
                for key, run in (("pages", pages), ("sanitize", sanitize), ("query", query_slider),
                                 ("map_report", map_and_report)):
                    if key.split("_")[0] in wanted:
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
