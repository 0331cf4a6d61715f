"""Accessibility measured in a real browser: axe-core (``axe-playwright-python``) on every page and state.

All nine pages are scanned empty (the link names an upload this session
does not hold, so each page shows its empty state) and loaded (Adult), then
the result states: Sanitize after a release, Query error and Papers after a
run, Trade-offs after the map, Compare with two pins, and the HTML report
opened from its downloaded file.  The target (issue 28) is no serious or
critical violation that the app controls; a violation that is Streamlit's
own is listed in :data:`STREAMLIT_OWN` with its upstream issue and the
workaround, if any (none is needed with Streamlit 1.67 at the time of
writing: the list is empty, and a new entry needs its upstream link).

Run by hand, ``python tests/test_browser_a11y.py [ROOT]`` prints the counts
per page and state for the app checked out at ROOT (the "before" column of
docs/accessibility.md came from the commit before this work).
"""

from __future__ import annotations

import json
import os
import sys
import time
import urllib.parse
from pathlib import Path

import pytest

from test_browser import ARGS, CHROMIUM, browser, streamlit_server  # noqa: F401  (fixture)

ROOT = Path(__file__).resolve().parent.parent
pytestmark = [pytest.mark.browser, pytest.mark.slow]

#: the nine pages, by URL path ("" is Home)
PAGES = ("", "Sanitize", "Bounds", "Query_error", "Attacks", "Trade-offs", "Guided_tour", "Compare", "Papers")
#: a link that names an upload no session holds: every page draws its empty state
EMPTY = "?data=upload:" + "0" * 64
LOADED = "?data=adult"
PINS = json.dumps([{"name": "five", "mechanism": "splu", "params": {"gamma": "5"}, "seed": 1},
                   {"name": "up", "mechanism": "uniform", "params": {"p": "0.5"}, "seed": 1}])
#: axe impacts that fail the test
BLOCKING = ("serious", "critical")
#: (rule id, a piece of the failing element's HTML) -> (upstream issue, workaround): Streamlit's own violations
STREAMLIT_OWN: dict[tuple[str, str], tuple[str, str]] = {}


def app_server(root: Path = ROOT):
    """``streamlit run app.py`` in ``root`` on a free loopback port; stops this PID only."""
    return streamlit_server(root)


def idle(page, timeout: float = 180) -> None:
    """Until the app's run has finished: Streamlit's script state is "notRunning" on two polls in a row."""
    script = ("() => { const a = document.querySelector('[data-testid=\"stApp\"]'); "
              "return a && a.getAttribute('data-test-script-state') === 'notRunning'; }")
    deadline = time.time() + timeout
    calm = 0
    while time.time() < deadline and calm < 2:
        page.wait_for_function(script, timeout=timeout * 1000, polling=100)
        calm = calm + 1 if page.evaluate(script) else 0
        page.wait_for_timeout(250)  # the poll interval between the two observations, not a wait for a result


def violations(page) -> list[dict]:
    """axe-core's violations on the page as drawn now (rule, impact, the elements)."""
    from axe_playwright_python.sync_playwright import Axe

    found = Axe().run(page).response["violations"]
    return [{"id": v["id"], "impact": v["impact"], "help": v["help"],
             "nodes": [{"target": n["target"], "html": n["html"][:200]} for n in v["nodes"]]} for v in found]


def _goto(page, url: str) -> None:
    page.goto(url, timeout=120_000)
    page.wait_for_selector('[data-testid="stApp"]', timeout=120_000)
    idle(page)


def _click(page, name: str, timeout: float = 120_000) -> None:
    page.get_by_role("button", name=name).first.click(timeout=timeout)
    idle(page, timeout / 1000 + 60)


def scan(url: str, browser, tmp: Path, log=print, pages: bool = True) -> dict[str, list[dict]]:
    """Every page and state -> its violations (all impacts); ``log`` gets one line per state."""
    out: dict[str, list[dict]] = {}
    page = browser.new_page(viewport={"width": 1400, "height": 1000}, accept_downloads=True)

    def record(state: str) -> None:
        out[state] = violations(page)
        log(f"{state}: " + ", ".join(f"{v['id']} ({v['impact']}, {len(v['nodes'])})" for v in out[state]))

    try:
        for state, query in (("empty", EMPTY), ("loaded", LOADED)) if pages else ():
            for name in PAGES:
                _goto(page, f"{url}/{name}{query}")
                record(f"{name or 'Home'} {state}")
        _goto(page, f"{url}/Sanitize?data=adult&mech=splu&gamma=5&seed=1")
        page.get_by_role("button", name="Table as CSV").first.wait_for(timeout=120_000)
        record("Sanitize after a release")
        _goto(page, f"{url}/Query_error?data=adult")
        _click(page, "Run")
        record("Query error after a run")
        _goto(page, f"{url}/Compare?data=adult&pins=" + urllib.parse.quote(PINS))
        record("Compare with pins")
        _goto(page, f"{url}/Papers?data=adult")
        _click(page, "Run", 300_000)
        record("Papers after a run")
        _goto(page, f"{url}/Trade-offs?data=adult&sa=occupation&to=uniform,splu,laplace&to.queries=1000")
        _click(page, "Measure every setting", 300_000)
        page.wait_for_selector(".js-plotly-plot .scatterlayer .points path", timeout=300_000)
        record("Trade-offs after the map")
        _click(page, "Build the report", 300_000)
        button = page.get_by_role("button", name="Download the report (HTML)")
        button.wait_for(timeout=300_000)
        with page.expect_download(timeout=120_000) as info:
            button.click()
        report = tmp / "report.html"
        info.value.save_as(report)
        page.goto(report.as_uri())
        page.wait_for_selector("body[data-figures='drawn']", timeout=120_000)
        record("HTML report (from its file)")
    finally:
        page.close()
    return out


def _streamlit_own(rule: str, node: dict) -> bool:
    return any(rule == r and piece in node["html"] for r, piece in STREAMLIT_OWN)


def test_no_serious_or_critical_violation_on_any_page_or_state(browser, tmp_path):  # noqa: F811
    with app_server() as url:
        found = scan(url, browser, tmp_path)
    assert len(found) == 2 * len(PAGES) + 6
    blocking = {state: [(v["id"], v["help"], [n["target"] for n in v["nodes"] if not _streamlit_own(v["id"], n)])
                        for v in vs if v["impact"] in BLOCKING]
                for state, vs in found.items()}
    blocking = {state: [v for v in vs if v[2]] for state, vs in blocking.items()}
    assert not any(blocking.values()), {s: v for s, v in blocking.items() if v}


def test_axe_finds_a_violation_the_app_could_make(browser):  # noqa: F811
    """The judge can fail: a caption-grey text on white (Streamlit's default 60% text) is reported as serious."""
    page = browser.new_page()
    try:
        page.set_content("<html lang='en'><head><title>t</title></head><body><main><h1>Page</h1>"
                         "<p style='color:rgba(49,51,63,0.6);font-size:14px'>caption</p></main></body></html>")
        found = violations(page)
        assert [(v["id"], v["impact"]) for v in found] == [("color-contrast", "serious")]
    finally:
        page.close()


#: the focused element: its tag, role, name, and whether it (or one of its two parents) draws a focus ring
FOCUSED = """() => { const e = document.activeElement; if (!e || e === document.body) return null;
  const ring = el => { const s = getComputedStyle(el);
    return (s.outlineStyle !== 'none' && parseFloat(s.outlineWidth) >= 1) || (s.boxShadow && s.boxShadow !== 'none'); };
  let el = e, visible = false; for (let i = 0; i < 3 && el && !visible; i++, el = el.parentElement) visible = ring(el);
  const box = e.getBoundingClientRect();
  return {tag: e.tagName, role: e.getAttribute('role') || '', type: e.getAttribute('type') || '', visible: visible && box.width > 0 && box.height > 0,
          name: (e.getAttribute('aria-label') || e.innerText || e.value || '').replace(/\\s+/g, ' ').trim().slice(0, 80)}; }"""


class Keyboard:
    """Moves the focus with Tab (Shift+Tab backwards) until an element matches; remembers every stop."""

    def __init__(self, page):
        self.page = page
        self.stops: list[dict] = []

    def to(self, match, backwards: bool = False, most: int = 400) -> dict:
        for _ in range(most):
            self.page.keyboard.press("Shift+Tab" if backwards else "Tab")
            info = self.page.evaluate(FOCUSED)
            if info is None:
                continue
            self.stops.append(info)
            if match(info):
                assert info["visible"], f"no visible focus on {info}"
                return info
        raise AssertionError(f"no element matched within {most} Tab presses on {self.page.url}; the stops: "
                             f"{[s['name'][:30] for s in self.stops]}")


def _named(text: str, tag: str | None = None):
    return lambda info: info["name"] == text and (tag is None or info["tag"] == tag)


def test_keyboard_only_from_home_to_a_release_and_a_report(browser, tmp_path):  # noqa: F811
    """Home -> Sanitize (a slider moved with an arrow key) -> the release's CSV -> Trade-offs -> the report."""
    with app_server() as url:
        page = browser.new_page(viewport={"width": 1400, "height": 1000}, accept_downloads=True)
        keys = Keyboard(page)
        try:
            _goto(page, f"{url}/?data=adult&mech=splu&to=uniform,laplace&to.queries=1000")
            keys.to(lambda i: i["tag"] == "A" and i["name"].endswith("Sanitize"))
            page.keyboard.press("Enter")
            page.get_by_role("button", name="Table as CSV").wait_for(timeout=120_000)
            idle(page)
            slider = keys.to(lambda i: i["role"] == "slider" or i["type"] == "range")
            before = page.evaluate("() => document.activeElement.value")
            page.keyboard.press("ArrowRight")
            idle(page)
            assert page.evaluate("() => document.activeElement.value") != before, slider
            keys.to(_named("Table as CSV", "BUTTON"))
            with page.expect_download(timeout=120_000) as info:
                page.keyboard.press("Enter")
            release = tmp_path / "release.csv"
            info.value.save_as(release)
            assert release.read_text(encoding="utf-8").count("\n") > 1000  # the Adult release, row per person

            keys.to(lambda i: i["tag"] == "A" and i["name"].endswith("Trade-offs"), backwards=True)
            page.keyboard.press("Enter")
            page.get_by_role("button", name="Measure every setting").wait_for(timeout=120_000)
            idle(page)
            keys.to(_named("Measure every setting", "BUTTON"))
            page.keyboard.press("Space")
            page.get_by_role("button", name="Build the report").wait_for(timeout=300_000)
            idle(page, 300)
            keys.to(_named("Build the report", "BUTTON"))
            page.keyboard.press("Enter")
            page.get_by_role("button", name="Download the report (HTML)").wait_for(timeout=300_000)
            idle(page, 300)
            keys.to(_named("Download the report (HTML)", "BUTTON"))
            with page.expect_download(timeout=120_000) as info:
                page.keyboard.press("Enter")
            report = tmp_path / "report.html"
            info.value.save_as(report)
            assert "<h2>1. " in report.read_text(encoding="utf-8")
        finally:
            page.close()
    # Streamlit's own: inside st.dataframe (glide-data-grid) the focus can move to a cell of the grid's hidden
    # accessibility table, and the grid marks the cell on its canvas, which computed styles cannot see; the grid's
    # keyboard support is upstream's (streamlit/streamlit#13332). Those stops are counted, not judged.
    grid = [stop for stop in keys.stops if stop["role"] == "gridcell" and stop["tag"] == "TD"]
    hidden = [stop for stop in keys.stops if not stop["visible"] and stop not in grid]
    print(f"\n{len(keys.stops)} Tab stops, {len(grid)} inside a data grid, {len(hidden)} without a visible focus")
    assert not hidden, f"{len(hidden)} of {len(keys.stops)} Tab stops showed no focus: {hidden[:5]}"


if __name__ == "__main__":  # counts per page and state for the app in ROOT (default: this checkout)
    import tempfile

    from playwright.sync_api import sync_playwright

    root = Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else ROOT
    with app_server(root) as url, sync_playwright() as p, tempfile.TemporaryDirectory() as tmp:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            found = scan(url, b, Path(tmp), log=lambda line: print(line, flush=True),
                         pages=os.environ.get("A11Y_PAGES", "1") == "1")
        finally:
            b.close()
    json.dump(found, sys.stdout if len(sys.argv) < 3 else open(sys.argv[2], "w"), indent=1)
