"""One real-browser test: ``streamlit run app.py`` driven by Debian's chromium through Playwright.

Loads the app, opens the Bounds page, moves a slider with the keyboard and
checks that the chart's data and a read-out changed; then does the same on
the Sanitize page (SPLU's gamma on Adult) and prints how long the rerun took;
then measures three mechanisms on the Trade-offs page, clicks a point of the
map for its details, downloads the review report and opens it with the
network cut off to check that every embedded figure draws.
The server is started here and stopped by its PID.
"""

from __future__ import annotations

import contextlib
import json
import re
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]

pytestmark = pytest.mark.browser

_FIGURE = "() => { const g = document.querySelector('.js-plotly-plot'); " \
          "return g && g.data ? JSON.stringify(g.data.map(t => [t.name, t.y])) : null; }"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_healthy(port: int, proc: subprocess.Popen, timeout: float = 60) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"streamlit exited with status {proc.returncode}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.3)
    raise TimeoutError(f"streamlit did not answer on port {port} within {timeout:.0f} s")


def stop(proc: subprocess.Popen) -> None:
    """Stop this PID only: terminate, then kill if it has not ended within 15 s."""
    proc.terminate()
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=5)


@contextlib.contextmanager
def streamlit_server(root: Path = ROOT, args: tuple[str, ...] = (), log: Path | None = None,
                     port: int | None = None):
    """``streamlit run app.py`` in ``root`` on a free loopback port (or ``port``), with ``args`` after the
    server flags and its output in ``log`` (read when a test fails); yields its URL, stops this PID only."""
    port = port or _free_port()
    out = open(log, "wb") if log else subprocess.DEVNULL
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
         "--server.port", str(port), "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false",
         *args],
        cwd=root, stdout=out, stderr=subprocess.STDOUT if log else subprocess.DEVNULL,
    )
    try:
        _wait_healthy(port, proc)
        yield f"http://127.0.0.1:{port}"
    finally:
        stop(proc)
        if log:
            out.close()


@pytest.fixture(scope="module")
def server():
    """A server per test module (a module that imports this fixture gets its own, with empty caches)."""
    with streamlit_server() as url:
        yield url


@pytest.fixture(scope="module")
def browser():
    if not CHROMIUM.exists():
        pytest.skip("/usr/bin/chromium is not installed (apt-get install -y chromium)")
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            yield b
        finally:
            b.close()


def _wait_for(fn, timeout: float = 30, interval: float = 0.05):
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = fn()
        if value:
            return value
        time.sleep(interval)
    return None


def _idle(page, timeout: float = 180) -> None:
    """Until the app has finished its current run (Streamlit's script state on the app root): a condition, not a
    time, so a loaded machine only makes it wait longer."""
    page.wait_for_function(
        "() => { const a = document.querySelector('[data-testid=\"stApp\"]'); "
        "return a && a.getAttribute('data-test-script-state') === 'notRunning'; }",
        timeout=timeout * 1000, polling=50)


_QUIET = """(ms) => {
  const root = document.querySelector('[data-testid="stApp"]');
  if (!root) return false;
  if (window.__lastRun === undefined) {
    window.__lastRun = performance.now();
    new MutationObserver(() => { window.__lastRun = performance.now(); })
      .observe(root, {attributes: true, attributeFilter: ['data-test-script-state']});
  }
  return root.getAttribute('data-test-script-state') === 'notRunning' && performance.now() - window.__lastRun > ms;
}"""


def _quiet(page, seconds: float, timeout: float = 240) -> None:
    """Until no run has started or ended for ``seconds`` and none is running: the fragments that poll what is
    measured behind the page have stopped (a condition watched in the page, not a fixed sleep)."""
    page.wait_for_function(_QUIET, arg=seconds * 1000, timeout=timeout * 1000, polling=100)


def _move_first_slider(page) -> tuple[str, str]:
    slider = page.locator('[data-testid="stSlider"] input[type="range"]').first
    before = slider.input_value()
    slider.focus()
    page.keyboard.press("ArrowRight")
    return before, slider


def test_bounds_slider_changes_the_chart(server, browser):
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    try:
        page.goto(f"{server}/Bounds?bound=splu-privacy", timeout=60_000)
        page.wait_for_selector('[data-testid="stMetricValue"]', timeout=60_000)
        page.wait_for_selector(".js-plotly-plot", timeout=60_000)
        _idle(page)  # the first run ended: a key pressed on a slider the run is still drawing can be lost
        figure_before = _wait_for(lambda: page.evaluate(_FIGURE))
        metrics_before = page.locator('[data-testid="stMetricValue"]').all_inner_texts()
        assert figure_before

        value_before, slider = _move_first_slider(page)
        changed = _wait_for(lambda: (f := page.evaluate(_FIGURE)) and f != figure_before and f)
        assert changed, "the chart did not change after the slider moved"
        assert int(slider.input_value()) == int(value_before) + 1
        legend = [name for name, _ in json.loads(changed)]
        assert any(name.startswith("T_p") for name in legend)
        assert _wait_for(lambda: page.locator('[data-testid="stMetricValue"]').all_inner_texts() != metrics_before)
        assert "bound.gamma=" + str(int(value_before) + 1) in page.url
    finally:
        page.close()


def test_sanitize_slider_reruns_fast_on_adult(server, browser):
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    try:
        page.goto(f"{server}/Sanitize?data=adult&mech=splu&gamma=5&seed=1", timeout=60_000)
        page.wait_for_selector(".js-plotly-plot", timeout=60_000)
        # the page settled: the first run and the polls behind it ended (the move is timed from a quiet page, as
        # bench/latency.py times it; once in two full suites the chart had not changed 30 s after a move made
        # right after the first run, not seen in four runs of this test alone)
        _quiet(page, 1.0)
        figure_before = _wait_for(lambda: page.evaluate(_FIGURE), timeout=60)
        metrics_before = page.locator('[data-testid="stMetricValue"]').all_inner_texts()
        start = time.perf_counter()
        _move_first_slider(page)
        changed = _wait_for(lambda: (f := page.evaluate(_FIGURE)) and f != figure_before and f, timeout=30)
        elapsed = time.perf_counter() - start
        assert changed, "the before/after histogram did not change after gamma moved"
        assert page.locator('[data-testid="stMetricValue"]').all_inner_texts() != metrics_before
        print(f"\nSanitize rerun after a slider move on Adult: {elapsed:.2f} s (keypress to new chart)")
    finally:
        page.close()


def test_tradeoffs_map_point_details_and_offline_report(server, browser, tmp_path):
    """The trade-offs page in a real browser: measure, click a point, export the report, open it offline."""
    page = browser.new_page(viewport={"width": 1400, "height": 1200}, accept_downloads=True)
    try:
        page.goto(f"{server}/Trade-offs?data=adult&sa=occupation&to=uniform,splu,laplace&to.queries=1000",
                  timeout=60_000)
        # the page's first run (the link read, the mechanisms chosen) ends before the button is pressed, and the
        # measuring run ends before the map is looked at: conditions, so a loaded machine only waits longer
        _idle(page)
        assert page.get_by_text("Choose at least one mechanism").count() == 0, page.inner_text("body")[-1500:]
        page.get_by_role("button", name="Measure every setting").click(timeout=60_000)
        # the measuring run has ended when the page below the map is drawn (the map streams its points as they are
        # measured, so a map with points is no sign of the end; the app may not have started its run at the click)
        page.get_by_text("Click a point on the map to see its measures here.").wait_for(timeout=400_000)
        _idle(page, timeout=400)
        assert page.get_by_text("Choose at least one mechanism").count() == 0, \
            "the mechanism list was lost after the click; the page says: " + page.inner_text("body")[-1500:]
        page.wait_for_selector(".js-plotly-plot .scatterlayer .points path", timeout=180_000)
        names = _wait_for(lambda: page.evaluate(
            "() => { const g = document.querySelector('.js-plotly-plot'); "
            "return g && g.data ? g.data.map(t => t.name) : null; }"), timeout=60)
        assert names and len(names) >= 3, names  # one trace per mechanism (and the front)
        assert page.get_by_text("Click a point on the map to see its measures here.").count() == 1

        # a click landing while the chart is redrawn on a loaded machine can be lost: click again, at most 3 times
        # (each attempt first waits for the points: the rerun a click starts redraws the map)
        points = page.locator(".js-plotly-plot .scatterlayer .points path")
        opened = None
        for _ in range(3):
            drawn = _wait_for(lambda: points.count() > 0, timeout=120)
            assert drawn, "the map has no points to click; the page says: " + page.inner_text("body")[-1500:]
            points.first.click(force=True)
            opened = _wait_for(lambda: page.get_by_text("lift over the most common value").count() > 0, timeout=30)
            if opened:
                break
        assert opened, \
            "clicking a point did not open its details; the page says: " + page.inner_text("body")[-1500:]

        page.get_by_role("button", name="Build the report").click()
        button = page.get_by_role("button", name="Download the report (HTML)")
        button.wait_for(timeout=180_000)
        with page.expect_download(timeout=60_000) as info:
            button.click()
        report = tmp_path / "report.html"
        info.value.save_as(report)
        html = report.read_text(encoding="utf-8")
        assert not re.search(r"<script[^>]*\bsrc=", html), "the report loads a script from elsewhere"
    finally:
        page.close()

    # the report opens with the network cut off and draws every figure it embeds
    context = browser.new_context(offline=True)
    try:
        offline = context.new_page()
        offline.goto(report.as_uri())
        expected = html.count('class="plot"')
        assert expected >= 3
        drawn = _wait_for(lambda: offline.evaluate(
            "() => [...document.querySelectorAll('.js-plotly-plot')]"
            ".filter(g => g.querySelector('.main-svg')).length") >= expected, timeout=60)
        assert drawn, "the offline report did not draw every figure"
    finally:
        context.close()
